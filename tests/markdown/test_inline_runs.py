"""Runs of inline results written out as one piece of HTML (markdown/inline.py), so
that rendering stays linear in the message.

The inline pass joins consecutive results of one pattern (emoji, plain links) when the text
between them is text no pattern can touch, and writes plain links out itself, doing the
link passes' work for them (has:link, the preview limit, the href tokens). These tests check that
the output is exactly what the element-by-element path gives, and that the link bookkeeping
still holds.

Each test's docstring is the question it answers.
"""

from __future__ import annotations

import random
import re

import pytest

from chat_appliance.markdown import MentionTarget, RenderContext, inline, render

TOKENS = [
    "#12", "#7", " ", "  ", "x", "ab", "\n", "\n\n", ":a:", ":smile:", ":+1:", ":)", "😀", "*", "**", "~~",
    "`c`", "&amp;", "&", "<", ">", "\"", "'", "http://a.example/p", "https://b.example/x.png", "www.c.example",
    "[t](http://d.example)", "[*e*](http://e.example)", "[u](/user_uploads/1/ab/f.png)",
    "https://youtu.be/dQw4w9WgXcQ", "@**Ada**", "@_**Ada**", "#**ops**", "\\*", "> ", "* ", "1. ", "# ",
    "mailto:z@example.com", "z@example.com", "<time:2024-01-01T00:00:00Z>", "|", "-",
]
# No TeX among them: how a formula renders depends on the sender's engine-time budget, spent by
# the renderings before it, so two renderings of the same text may differ on purpose.


def context():
    return RenderContext(
        realm_url="https://chat.example.com", translate_emoticons=True,
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tracker.example.com/{id}")],
        find_user=lambda name, user_id: MentionTarget(1, "Ada") if name == "Ada" else None,
        find_group=lambda name: None,
        find_channel=lambda name: MentionTarget(2, name) if name == "ops" else None)


def element_by_element(monkeypatch):
    """Switch run joining off: each result is its own element, as Python-Markdown has it."""
    monkeypatch.setattr(inline.FastInlineTreeprocessor, "_quiet", lambda self, text: False)
    monkeypatch.setattr(inline, "_is_plain_link", lambda node, quiet: False)


def comparable(result):
    """The rendered HTML and the link facts; href tokens differ between renders only in number."""
    return result.html, sorted(result.links), result.has_image


def test_joined_runs_render_exactly_as_separate_elements(monkeypatch):
    """Does every generated mix of links, linkifiers, emoji and other inline syntax render to the same HTML, links and has:image with runs joined as with each result on its own?"""
    rnd = random.Random(26)
    texts = ["".join(rnd.choice(TOKENS) for _ in range(rnd.randint(1, 40))) for _ in range(600)]
    texts += ["#1 " * 50, ":a:b" * 40, "[a](b) " * 30, "http://a.example " * 30, "> " + "[a](b) " * 30]
    ctx = context()
    joined = [comparable(render(text, ctx)) for text in texts]
    with monkeypatch.context() as patch:
        element_by_element(patch)
        separate = [comparable(render(text, ctx)) for text in texts]
    for text, a, b in zip(texts, joined, separate):
        assert a == b, repr(text)


def test_a_run_of_linkifier_links_keeps_every_target():
    """Do a thousand issue references in one line each link to their own issue, and count as links?"""
    text = " ".join(f"#{n}" for n in range(1, 1001))
    result = render(text, context())
    hrefs = re.findall(r'href="([^"]+)"', result.html)
    assert hrefs == [f"https://tracker.example.com/{n}" for n in range(1, 1001)]
    assert len(result.links) == 1000 and not result.has_image


def test_links_in_a_run_count_toward_the_preview_limit():
    """With more than 24 distinct links outside quotes, written out as one run, does an image link get no preview, as with 24 or fewer it does?"""
    image = "https://img.example/cat.png"
    few = render(" ".join(f"http://s{n}.example" for n in range(10)) + " " + image, context())
    many = render(" ".join(f"http://s{n}.example" for n in range(30)) + " " + image, context())
    assert "message_inline_image" in few.html
    assert "message_inline_image" not in many.html
    assert many.has_image  # still a link to an image, for has:image


def test_links_in_a_quoted_run_do_not_count_toward_the_preview_limit():
    """Do 30 links inside a quote leave the preview of an image linked outside it alone?"""
    text = "> " + " ".join(f"http://s{n}.example" for n in range(30)) + "\n\nhttps://img.example/cat.png"
    assert "message_inline_image" in render(text, context()).html


def test_emoji_apart_by_letters_share_one_placeholder_and_keep_the_letters():
    """Does a long line of emoji with letters between them keep every emoji and every letter?"""
    result = render(":a:b" * 500, context())
    assert result.html.count('class="emoji emoji-1f170"') == 500
    assert result.html.count("</span>b") == 500


@pytest.mark.parametrize("text", [f"{outer}:a:{gap}x{gap}:a:{outer}" for outer in ("", "**") for gap in
                                  ("*", "~~", "&", "😀", ":)", "\\*", "e.co", "#5", "`c`", "\n")])
def test_text_a_pattern_reads_is_never_joined(text):
    """Is text between two results that some pattern could match, read in place or on its own inside emphasis, left as Python-Markdown leaves it (emphasis, strikethrough, entities, emoji, emoticons, escapes, domains, linkifiers, code)?"""
    with pytest.MonkeyPatch.context() as patch:
        element_by_element(patch)
        expected = render(text, context()).html
    assert render(text, context()).html == expected
