"""Feature tests for chat_appliance.markdown, independent of Zulip's case file.

Each test's docstring is the question it answers.
"""

from __future__ import annotations

import re
import threading

from chat_appliance.markdown import MentionTarget, RenderContext, render, topic_links

HAMLET = MentionTarget(10, "King Hamlet")
OPHELIA = MentionTarget(11, "Ophelia")
SUPPORT = MentionTarget(3, "support")
VERONA = MentionTarget(5, "Verona")
DENMARK = MentionTarget(6, "Den mark")


def find_user(name, user_id):
    for user in (HAMLET, OPHELIA):
        if (name is None or name == user.name) and (user_id is None or user_id == user.id):
            return user
    return None


def make_context(**overrides) -> RenderContext:
    options = dict(
        find_user=find_user,
        find_group=lambda name: SUPPORT if name == "support" else None,
        find_channel=lambda name: {"Verona": VERONA, "Den mark": DENMARK}.get(name),
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://trac.example.com/ticket/{id}")],
    )
    options.update(overrides)
    return RenderContext(**options)


def html(content: str, **overrides) -> str:
    return render(content, make_context(**overrides)).html


# --- basic formatting -------------------------------------------------------


def test_default_context():
    """Does render work with no context at all?"""
    assert render("hello").html == "<p>hello</p>"


def test_newlines_are_line_breaks():
    """Does a single newline inside a paragraph become <br>?"""
    assert html("a\nb") == "<p>a<br>\nb</p>"


def test_emphasis_only_with_stars():
    """Do stars format while underscores stay literal?"""
    assert html("*a* **b** _c_ __d__") == "<p><em>a</em> <strong>b</strong> _c_ __d__</p>"


def test_strikethrough():
    """Does ~~text~~ become <del>?"""
    assert html("~~gone~~") == "<p><del>gone</del></p>"


def test_inline_code_keeps_spaces_and_escapes():
    """Is inline code verbatim (spaces kept, HTML escaped, no formatting)?"""
    assert html("` *<b>* `") == "<p><code> *&lt;b&gt;* </code></p>"


def test_fenced_code_highlighted_with_language():
    """Do fenced code blocks get Pygments markup and data-code-language?"""
    out = html("```py\nx = 1\n```")
    assert out.startswith('<div class="codehilite" data-code-language="Python"><pre><span></span><code>')
    assert '<span class="n">x</span>' in out


def test_tilde_fence_and_unknown_language():
    """Does an unknown language keep its name and render as plain text?"""
    out = html("~~~ nosuchlang\n<i>x</i>\n~~~")
    assert 'data-code-language="nosuchlang"' in out
    assert "&lt;i&gt;x&lt;/i&gt;" in out


def test_fenced_code_inside_list_item():
    """Does an indented fence inside a list item stay inside that item?"""
    out = html("* a\n  ```\n  make\n  ```\n* b")
    assert out.count("<li>") == 2
    assert out.index('<div class="codehilite">') < out.index("</li>")


def test_spoiler_inside_quote():
    """Does a spoiler nested in a quote fence render cleanly inside the blockquote?"""
    out = html("```quote\n```spoiler Hi\nsecret\n```\n```")
    assert out.startswith("<blockquote>\n<div class=\"spoiler-block\">")
    assert "<br>" not in out and "<p></p>" not in out


def test_indented_code_block():
    """Is a four-space indented block a code block?"""
    assert html("    x = 1").startswith('<div class="codehilite"><pre><span></span><code>x = 1')


def test_quotes_fenced_and_angle():
    """Do both > quotes and ```quote fences produce blockquotes?"""
    assert html("> hi") == "<blockquote>\n<p>hi</p>\n</blockquote>"
    assert html("```quote\nhi\n```") == "<blockquote>\n<p>hi</p>\n</blockquote>"


def test_spoiler():
    """Does a spoiler fence render header and hidden content?"""
    out = html("```spoiler Secret\nhidden *text*\n```")
    assert '<div class="spoiler-block"><div class="spoiler-header">' in out
    assert "<p>Secret</p>" in out
    assert '<div class="spoiler-content" aria-hidden="true">' in out
    assert "<p>hidden <em>text</em></p>" in out


def test_heading_needs_space():
    """Is '# x' a heading but '#x' plain text?"""
    assert html("# x") == "<h1>x</h1>"
    assert html("#x") == "<p>#x</p>"


def test_lists_after_paragraph_and_numbering():
    """Do lists start right after a paragraph, nest by two spaces and keep their start number?"""
    assert html("Items:\n* a\n  * b") == "<p>Items:</p>\n<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>"
    assert html("3. a\n3. b").startswith('<ol start="3">')


def test_table():
    """Do pipe tables render as HTML tables?"""
    out = html("a | b\n--|--\n1 | 2")
    assert "<th>a</th>" in out and "<td>2</td>" in out


def test_links_and_reference_links_disabled():
    """Do [text](url) links render while reference-style links stay text?"""
    assert html("[Zulip](https://zulip.com)") == '<p><a href="https://zulip.com">Zulip</a></p>'
    assert html("[x][r]\n\n[r]: /y").startswith("<p>[x][r]</p>")


def test_autolinks():
    """Are bare URLs, domains and e-mail addresses linked, without trailing punctuation?"""
    assert html("see https://zulip.com/api.") == '<p>see <a href="https://zulip.com/api">https://zulip.com/api</a>.</p>'
    assert html("go to example.com") == '<p>go to <a href="http://example.com">example.com</a></p>'
    assert html("a@b.com") == '<p><a href="mailto:a@b.com">a@b.com</a></p>'
    assert html("readme.md") == "<p>readme.md</p>"


def test_realm_links_become_relative():
    """Do links into our own realm's narrow URLs become relative fragments?"""
    out = html("http://chat.example/#narrow/channel/5-Verona", realm_url="http://chat.example")
    assert '<a href="#narrow/channel/5-Verona">' in out


def test_links_reported():
    """Does the result list link hrefs and flag image links?"""
    result = render("https://x.org/a.png and [b](https://y.org)", make_context())
    assert result.links == ["https://x.org/a.png", "https://y.org"]
    assert result.has_image


# --- mentions -----------------------------------------------------------------


def test_user_mention():
    """Does @**Full Name** render a mention and record the user id?"""
    result = render("hi @**King Hamlet**", make_context())
    assert result.html == '<p>hi <span class="user-mention" data-user-id="10">@King Hamlet</span></p>'
    assert result.mentioned_user_ids == {10}
    assert result.silently_mentioned_user_ids == set()


def test_user_mention_with_id():
    """Does @**Name|id** resolve by id and show the stored name?"""
    result = render("@**Ophelia|11** @**|10**", make_context())
    assert result.mentioned_user_ids == {10, 11}
    assert '<span class="user-mention" data-user-id="10">@King Hamlet</span>' in result.html


def test_silent_user_mention():
    """Is @_**Name** a silent mention without '@' that does not notify?"""
    result = render("@_**Ophelia**", make_context())
    assert result.html == '<p><span class="user-mention silent" data-user-id="11">Ophelia</span></p>'
    assert result.mentioned_user_ids == set()
    assert result.silently_mentioned_user_ids == {11}


def test_unknown_user_mention_is_text():
    """Does a mention of an unknown name stay unlinked (no mention span, no ids)?"""
    result = render("@**Nobody**", make_context())
    assert "user-mention" not in result.html and "Nobody" in result.html
    assert result.mentioned_user_ids == set()


def test_group_mentions():
    """Do @*group* and @_*group* render group mentions, only the loud one counting?"""
    result = render("@*support*", make_context())
    assert result.html == '<p><span class="user-group-mention" data-user-group-id="3">@support</span></p>'
    assert result.mentioned_group_ids == {3}
    silent = render("@_*support*", make_context())
    assert silent.html == '<p><span class="user-group-mention silent" data-user-group-id="3">support</span></p>'
    assert silent.mentioned_group_ids == set()


def test_wildcard_mentions_set_flags():
    """Do @**all**/@**everyone**/@**channel**/@**stream** and @**topic** set the wildcard flags?"""
    for word in ("all", "everyone", "channel", "stream"):
        result = render(f"@**{word}**", make_context())
        assert result.stream_wildcard and not result.topic_wildcard
        assert (
            f'<span class="user-mention channel-wildcard-mention" data-user-id="*">@{word}</span>' in result.html
        )
    topic = render("@**topic**", make_context())
    assert topic.topic_wildcard and not topic.stream_wildcard
    assert '<span class="topic-mention">@topic</span>' in topic.html
    silent = render("@_**all**", make_context())
    assert not silent.stream_wildcard


# --- channel links --------------------------------------------------------------


def test_channel_link():
    """Does #**channel** link to the channel narrow (without counting as a has:link link)?"""
    result = render("#**Verona**", make_context())
    assert result.html == (
        '<p><a class="stream" data-stream-id="5" href="/#narrow/channel/5-Verona">#Verona</a></p>'
    )
    assert result.links == []


def test_topic_link_encoding():
    """Does #**channel>topic** link to the topic with Zulip's hash encoding?"""
    assert html("#**Den mark>hello (x).y**") == (
        '<p><a class="stream-topic" data-stream-id="6" '
        'href="/#narrow/channel/6-Den-mark/topic/hello.20.28x.29.2Ey">#Den mark &gt; hello (x).y</a></p>'
    )


def test_unknown_channel_not_linked():
    """Does a link to an unknown channel stay unlinked?"""
    assert "<a" not in html("#**Nowhere**")


# --- linkifiers -------------------------------------------------------------------


def test_linkifier():
    """Does a realm linkifier turn a pattern into a link from its URL template?"""
    assert html("fixes #123") == '<p>fixes <a href="https://trac.example.com/ticket/123">#123</a></p>'


def test_linkifier_percent_encodes():
    """Are template variables percent-encoded?"""
    out = html("PR:a b/c", linkifiers=[(r"PR:(?P<name>[a-z /]+)", "https://x.org/{name}")])
    assert 'href="https://x.org/a%20b%2Fc"' in out


def test_linkifier_not_in_code_or_links():
    """Are linkifiers skipped inside code spans, code blocks and links?"""
    out = html("`#1` [#2](https://a.org)\n\n```\n#3\n```")
    assert "ticket" not in out


# --- /me ---------------------------------------------------------------------------


def test_me_message():
    """Is a message starting with '/me ' flagged as a me-message and rendered as text?"""
    result = render("/me waves", make_context())
    assert result.is_me_message
    assert result.html == "<p>/me waves</p>"
    assert not render("hello /me", make_context()).is_me_message
    assert not render("/me waves\n\nmore", make_context()).is_me_message


# --- emoji -----------------------------------------------------------------------


SMILE = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>'


def test_emoji_names():
    """Does :name: render Zulip's emoji span, and unknown names stay text?"""
    assert html(":smile: :nosuchemoji:") == f"<p>{SMILE} :nosuchemoji:</p>"


def test_emoji_alias_keeps_typed_name():
    """Does an alias (:gold:) render with the alias as its label?"""
    assert 'aria-label="gold" class="emoji emoji-1f947"' in html(":gold:")


def test_realm_emoji():
    """Does a custom realm emoji render as an image?"""
    out = html(":party_parrot:", realm_emoji={"party_parrot": ("7", "/user_avatars/2/emoji/7.gif")})
    assert out == '<p><img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/7.gif" title="party parrot"></p>'


def test_unicode_emoji():
    """Are Unicode emoji characters wrapped in Zulip's emoji span?"""
    assert html("💩") == (
        '<p><span aria-label="poop" class="emoji emoji-1f4a9" role="img" title="poop">:poop:</span></p>'
    )
    assert 'class="emoji emoji-1f937-200d-2640"' in html("🤷\u200d♀️")


def test_emoticons_only_when_enabled():
    """Are emoticons like :) translated only with translate_emoticons?"""
    assert html(":)") == "<p>:)</p>"
    assert html(":)", translate_emoticons=True) == f"<p>{SMILE}</p>"


# --- timestamps and TeX -------------------------------------------------------


def test_timestamp():
    """Does <time:...> become a <time datetime> element in UTC?"""
    assert html("<time:2017-06-05 22:30 +02:00>") == (
        '<p><time datetime="2017-06-05T20:30:00Z">2017-06-05 22:30 +02:00</time></p>'
    )
    assert 'class="timestamp-error"' in html("<time:not a date>")


def test_tex_typeset_and_error_markup():
    """Is valid TeX typeset by KaTeX (inline and display) and invalid TeX shown as Zulip's error markup?"""
    inline_out = html("$$x^2$$ and $$\\frac{a}{b}$$")
    assert inline_out.count('<span class="katex">') == 2
    assert '<annotation encoding="application/x-tex">\\frac{a}{b}</annotation>' in inline_out
    assert 'class="katex-display"' in html("```math\nx^2\n```")
    assert html("$$\\error{**a**}$$") == '<p><span class="tex-error">$$\\error{**a**}$$</span></p>'
    assert html("```math\n\\error{x}\n```") == '<p><span class="tex-error">\\error{x}</span></p>'
    # TeX cannot smuggle markup out: KaTeX escapes it, \\href is refused without trust.
    out = html("$$\\href{javascript:alert(1)}{x}$$ $$<img src=x onerror=alert(1)>$$")
    _assert_no_handlers(out)
    assert "javascript:" not in out.replace("\\href{javascript:alert(1)}{x}", "")


def _assert_no_handlers(out: str) -> None:
    assert not re.search(r"<[a-z]+[^>]*\son\w+\s*=", out, re.I)
    assert "<script" not in out.lower() and "<img" not in out.lower()


def test_tex_fallback_without_engine(monkeypatch, caplog):
    """With no KaTeX engine, does TeX keep the source markup and say so in the log once?"""
    from chat_appliance.markdown import katex

    engine = katex._Engine()
    monkeypatch.setattr(katex, "_engine", engine)
    monkeypatch.setattr(katex, "KATEX_JS", katex.KATEX_DIR / "missing.js")
    with caplog.at_level("WARNING", logger="chat_appliance.markdown.katex"):
        assert html("$$\\text{**a**}$$") == '<p><span class="tex-error">$$\\text{**a**}$$</span></p>'
        assert html("```math\nx^2\n```") == '<p><span class="tex-error">x^2</span></p>'
    assert len([r for r in caplog.records if "KaTeX is not available" in r.message]) == 1


# --- security ------------------------------------------------------------------------


def _assert_inert(out: str) -> None:
    """No live script, image, event-handler attribute or javascript: href."""
    assert not re.search(r"<[a-z]+[^>]*\son\w+\s*=", out, re.I)
    assert "<script" not in out.lower()
    assert 'href="javascript' not in out.lower()
    assert "<img" not in out.lower()


def test_script_tag_escaped():
    """Is a <script> tag shown as text rather than run?"""
    out = html("<script>alert(1)</script>")
    assert out == "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
    _assert_inert(out)


def test_javascript_link_refused():
    """Is a javascript: link left as text (in any case or entity spelling)?"""
    for src in ("[x](javascript:alert(1))", "[x](JaVaScRiPt:alert(1))", "[x](&#106;avascript:alert(1))",
                "[x](java\tscript:alert(1))", "[x](data:text/html,<script>)"):
        out = html(src)
        assert "<a" not in out, src
        _assert_inert(out)


def test_img_onerror_escaped():
    """Is an <img onerror> shown as text?"""
    out = html('<img src=x onerror="alert(1)">')
    assert out.startswith("<p>&lt;img")
    _assert_inert(out)


def test_hostile_names_escaped():
    """Are user, group and channel names with HTML escaped in the output?"""
    evil = MentionTarget(66, '<b onmouseover="x">Evil</b>')
    out = html("@**x** #**y**", find_user=lambda n, i: evil, find_channel=lambda n: evil)
    assert "<b " not in out and "&lt;b" in out


def test_linkifier_cannot_make_javascript_url():
    """Is a linkifier whose template expands to javascript: ignored?"""
    out = html("evil:1", linkifiers=[(r"evil:(?P<id>\d)", "javascript:alert({id})")])
    assert "<a" not in out


# --- topic links and threads ------------------------------------------------------------


def test_topic_links():
    """Does topic_links return linkifier matches and bare URLs in order?"""
    links = topic_links("fix #12 see https://zulip.com/x", make_context())
    assert links == [
        {"text": "#12", "url": "https://trac.example.com/ticket/12"},
        {"text": "https://zulip.com/x", "url": "https://zulip.com/x"},
    ]
    assert topic_links("nothing here") == []


def test_thread_safety():
    """Do concurrent renders in several threads each get their own correct result?"""
    errors = []

    def worker(n: int) -> None:
        for _ in range(30):
            result = render(f"@**King Hamlet** item {n} `code {n}`", make_context())
            if f"item {n}" not in result.html or result.mentioned_user_ids != {10}:
                errors.append(result.html)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_youtube_preview():
    """Does a YouTube video link get Zulip's youtube-video preview (the site's still through the
    image proxy) after its paragraph, kept as it is, while a channel or playlist link gets none?"""
    still = "/thumbnail?url=https%3A%2F%2Fi.ytimg.com%2Fvi%2FaqzKEbpKQ12%2Fmqdefault.jpg&amp;size=thumbnail"
    for url in ("https://www.youtube.com/watch?v=aqzKEbpKQ12", "https://youtu.be/aqzKEbpKQ12?t=3",
                "https://m.youtube.com/watch?feature=share&v=aqzKEbpKQ12", "https://www.youtube.com/embed/aqzKEbpKQ12"):
        assert html(url) == (
            f'<p><a href="{url.replace("&", "&amp;")}">{url.replace("&", "&amp;")}</a></p>\n'
            f'<div class="youtube-video message_inline_image"><a data-id="aqzKEbpKQ12" '
            f'href="{url.replace("&", "&amp;")}"><img src="{still}"></a></div>')
    named = html("[the talk](https://youtu.be/aqzKEbpKQ12) is good")
    assert named.startswith('<p><a href="https://youtu.be/aqzKEbpKQ12">the talk</a> is good</p>\n<div class="youtube-video')
    for url in ("https://www.youtube.com/playlist?list=PL123", "https://www.youtube.com/@zulip",
                "https://notyoutube.com/watch?v=aqzKEbpKQ12"):
        assert "youtube-video" not in html(url)
    assert "youtube-video" not in html("> https://youtu.be/aqzKEbpKQ12")  # not inside quotes
