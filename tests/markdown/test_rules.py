"""Zulip's Markdown rules, one test per rule, with cases written for this project: emphasis
and its combinations, strikethrough, links (own narrow URLs, empty text, odd ports), image
previews and where they go, and the one-pass inline matching giving the same results as
matching one by one."""

from chat_appliance.markdown import MentionTarget, RenderContext, render

REALM = "https://chat.example.org"


def html(content, **context):
    context.setdefault("realm_url", REALM)
    return render(content, RenderContext(**context)).html


# --- emphasis --------------------------------------------------------------


def test_triple_stars_nest_strong_and_em():
    """Does ***text*** give strong around em, in a sentence too?"""
    assert html("***wow***") == "<p><strong><em>wow</em></strong></p>"
    assert html("a ***big*** deal") == "<p>a <strong><em>big</em></strong> deal</p>"


def test_emphasis_inside_strong_and_strong_inside_text():
    """Does *em* inside **strong** nest, and do several on a line stay separate?"""
    assert html("**bold *and italic* here**") == "<p><strong>bold <em>and italic</em> here</strong></p>"
    assert html("*one* and *two*") == "<p><em>one</em> and <em>two</em></p>"


def test_emphasis_needs_non_space_inside_the_stars():
    """Do stars next to spaces (pointers, multiplication) stay text?"""
    assert html("int *p = a * b;") == "<p>int *p = a * b;</p>"
    assert html("* not emphasis*") == "<ul>\n<li>not emphasis*</li>\n</ul>"
    assert html("2 * 3 * 4") == "<p>2 * 3 * 4</p>"


def test_underscores_and_line_breaks_do_not_emphasise():
    """Are _x_ and __x__ left alone, and does emphasis never cross a line break?"""
    assert html("snake_case_name and __dunder__") == "<p>snake_case_name and __dunder__</p>"
    assert html("**start\nend**") == "<p>**start<br>\nend**</p>"


def test_strikethrough_needs_exactly_two_tildes():
    """Is ~~x~~ struck, but a longer run of tildes (or a lone pair) text?"""
    assert html("~~gone~~ stays") == "<p><del>gone</del> stays</p>"
    assert html("~~~~~~~~~x~~~~~~~~") == "<p>~~~~~~~~~x~~~~~~~~</p>"
    assert html("a ~~ b") == "<p>a ~~ b</p>"


# --- links -----------------------------------------------------------------


def test_links_into_this_server_become_relative_narrows():
    """Do links (named or bare) to this organization's own narrows become relative, and other paths stay absolute?"""
    assert html(f"[x]({REALM}/#narrow/channel/3-design)") == '<p><a href="#narrow/channel/3-design">x</a></p>'
    assert html(f"{REALM}/#narrow/dm/4-Ada") == f'<p><a href="#narrow/dm/4-Ada">{REALM}/#narrow/dm/4-Ada</a></p>'
    assert html(f"[y]({REALM}/help/)") == f'<p><a href="{REALM}/help/">y</a></p>'
    assert html("[z](https://other.example/#narrow/x)") == '<p><a href="https://other.example/#narrow/x">z</a></p>'


def test_link_with_empty_or_blank_text_shows_the_url():
    """Does [](url) or [   ](url) show the URL as the link text?"""
    for text in ("", "   "):
        assert html(f"[{text}](https://a.example/p)") == '<p><a href="https://a.example/p">https://a.example/p</a></p>'


def test_link_target_with_odd_port_is_kept():
    """Is a target that URL parsers reject (a non-numeric port) still linked as written?"""
    assert html("[t](http://host:port/x)") == '<p><a href="http://host:port/x">t</a></p>'


def test_link_text_is_markdown_and_titles_parentheses_work():
    """Is link text rendered (emphasis, emoji) and are titles and nested parentheses read?"""
    out = html('[**b** :smile:](https://a.example/w_(x) "title")')
    assert out.startswith('<p><a href="https://a.example/w_(x)"><strong>b</strong> <span aria-label="smile"')


# --- image previews --------------------------------------------------------


PNG = "https://img.example/cat.png"
PREVIEW = ('<div class="message_inline_image"><a href="{url}"{title}>'
           '<img data-src-fullsize="/thumbnail?url={enc}&amp;size=full" src="/thumbnail?url={enc}&amp;size=thumbnail">'
           "</a></div>")


def preview(url, title=""):
    from urllib.parse import quote

    return PREVIEW.format(url=url, enc=quote(url, safe=""), title=f' title="{title}"' if title else "")


def test_bare_image_link_alone_becomes_the_preview():
    """Is a message that is only an image URL rendered as just the preview?"""
    assert html(PNG) == preview(PNG)


def test_named_image_link_keeps_text_and_titles_the_preview():
    """Does a named image link stay in its paragraph, with the preview after it titled by the link text?"""
    assert html(f"[a cat]({PNG})") == f'<p><a href="{PNG}">a cat</a></p>\n{preview(PNG, "a cat")}'


def test_previews_follow_their_paragraph_in_order_and_once():
    """Do several images in a paragraph get previews right after it, in order, one per URL?"""
    other = "https://img.example/dog.JPG?size=2"
    out = html(f"see {PNG} and {other} and {PNG} again\n\nnext")
    assert out.endswith(f" again</p>\n{preview(PNG)}\n{preview(other)}\n<p>next</p>")


def test_preview_in_list_item_and_not_in_quote():
    """Does a list item's image get its preview inside the item, and a quoted image none?"""
    out = html(f"* look {PNG}").replace("\n", "")
    assert out == f'<ul><li>look <a href="{PNG}">{PNG}</a>{preview(PNG)}</li></ul>'
    assert "message_inline_image" not in html(f"> {PNG}")


def test_only_images_get_previews_and_the_setting_turns_them_off():
    """Are non-image links, non-http(s) URLs and relative paths not previewed, and does inline_image_preview=False stop all?"""
    assert "message_inline_image" not in html("https://a.example/page.html")
    assert "message_inline_image" not in html("[u](/user_uploads/1/ab/x.png)")
    assert "message_inline_image" not in html(PNG, inline_image_preview=False)


def test_too_many_images_get_no_previews():
    """With more than 24 distinct image URLs, are there no previews at all, as on Zulip?"""
    many = " ".join(f"https://img.example/{i}.png" for i in range(25))
    assert "message_inline_image" not in html(many)
    assert html(" ".join(f"https://img.example/{i}.png" for i in range(24))).count("message_inline_image") == 24


# --- one-pass inline matching -----------------------------------------------


def test_runs_of_emoji_code_and_breaks_match_one_by_one_results():
    """Does a run of adjacent matches render exactly as the same matches apart?"""
    ctx = {"find_user": lambda name, uid: MentionTarget(7, name) if name == "Ada" else None}
    for unit in (":smile:", "\U0001F600", "@**Ada**", "@_**Ada**"):
        alone = html(unit, **ctx)[3:-4]  # without <p>...</p>
        assert html(unit + unit + " " + unit, **ctx) == f"<p>{alone}{alone} {alone}</p>", unit
    assert html("`<a & b>` `<a & b>`") == "<p><code>&lt;a &amp; b&gt;</code> <code>&lt;a &amp; b&gt;</code></p>"
    assert html("a\nb\nc") == "<p>a<br>\nb<br>\nc</p>"


def test_adjacent_matches_of_one_pattern_all_match():
    """After one match, does the next one right behind it still match (as Python-Markdown's placeholder allowed)?"""
    assert html("`a``b`") == "<p><code>a``b</code></p>"
    assert html("`a` `b`") == "<p><code>a</code> <code>b</code></p>"
    assert html("<3<3", translate_emoticons=True).count('class="emoji emoji-2764"') == 2
    assert html(":)", translate_emoticons=True).count("emoji-1f642") == 1


def test_unknown_emoji_sequences_stay_text_between_known_ones():
    """In a run of emoji, do unknown sequences stay as typed and known ones around them render?"""
    unknown = "\U0001F34B\u200d\U0001F7EA"  # lemon + purple square, joined: no such emoji
    out = html("\U0001F600" + unknown + "\U0001F600")
    assert out.count("emoji-1f600") == 2 and unknown in out


def test_mentions_in_runs_are_still_recorded():
    """Are users mentioned in a run of adjacent mentions all reported for the mention flags?"""
    people = {"Ada": MentionTarget(1, "Ada"), "Bob": MentionTarget(2, "Bob")}
    result = render("@**Ada**@**Bob** @_**Bob**",
                    RenderContext(find_user=lambda name, uid: people.get(name)))
    assert result.mentioned_user_ids == {1, 2} and result.silently_mentioned_user_ids == {2}


def test_deep_nesting_stops_at_a_fixed_depth():
    """Does nesting stop at a fixed depth (about a dozen lists), the deeper items kept as text?"""
    deep = "\n".join("  " * i + "* x" for i in range(40))
    out = html(deep)
    assert 8 <= out.count("<ul>") <= 16 and out.count("x") == 40


def test_preview_title_is_the_link_text_before_any_markup():
    """Is the preview's title the link's own text up to the first markup (emoji, entities kept), never HTML?"""
    out = html(f"[pic &amp; x :smile::smile:]({PNG})")
    assert f'<a href="{PNG}" title="pic &amp; x ">' in out
    assert out.count("<span") == 2  # the two emoji in the link, none inside an attribute
