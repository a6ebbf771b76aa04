"""Sanitising is the last step of rendering: formulas and markup land in text positions only,
every stored HTML is a fixed point of the sanitiser, and the sanitiser writes the entity forms of
Zulip's stored HTML."""

import itertools
import re

import pytest

from chat_appliance.markdown import MentionTarget, RenderContext, render
from chat_appliance.markdown.sanitize import sanitize_html

from ..support.helpers import content_of, send

# Raw attribute values as they stand in the HTML text.
ATTRIBUTE_RE = re.compile(r'\s[\w:-]+="([^"]*)"')
TAG_RE = re.compile(r"<[a-zA-Z][^>]*>")

# What can sit in a position that ends up in an attribute, or next to one.
FILLINGS = ["$$x^2$$", "$$\\frac{a}{b}$$", "$$\\error{\"'<b>}$$", "<b>x</b>", "\"quote's\"", "a & b < c",
            ":smile:", "@**King Hamlet**", "#**Verona**", "`code \"q\"`", "**bold $$y$$**"]
# Constructs with a place for it, `{}` marking the place; many give an attribute (a preview's
# title, a link title, a code block's language, a spoiler's header...).
CONSTRUCTS = [
    "[look {} here](https://example.com/a.png)",
    "[{}](https://example.com/b.jpg)",
    "[x](https://example.com/c.png \"{}\")",
    "[{}](https://example.com/page)",
    "![{}](https://example.com/d.gif)",
    "* [{}](https://example.com/e.png)\n* two",
    "> [{}](https://example.com/f.png)",
    "| h | {} |\n|---|---|\n| [{}](https://example.com/g.png) | c |",
    "# {}",
    "```spoiler {}\n[{}](https://example.com/h.png)\n```",
    "```{}\nx\n```",
    "```python\nx = \"{}\" + '{}'\n```",
    "```math\n\\frac{{\"'{}\n```",
    "<time:{}>",
    "**[{}](https://example.com/i.png)** {}",
    "https://example.com/j.png {}",
]


def context():
    return RenderContext(
        realm_url="https://chat.example",
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tracker.example.com/{id}")],
        find_user=lambda name, user_id: MentionTarget(4, "King Hamlet"),
        find_channel=lambda name: MentionTarget(3, "Verona"),
    )


def cases():
    for construct, filling in itertools.product(CONSTRUCTS, FILLINGS):
        yield construct.replace("{}", filling).replace("{{", "{")


def test_a_formula_in_a_previewed_link_stays_out_of_the_title():
    """Does a formula in an image link's text typeset in the link and come out as its source in
    the preview's title, with no markup in the attribute?"""
    html = render("[look $$x$$ here](https://example.com/a.png)", context()).html
    assert '<a href="https://example.com/a.png" title="look $$x$$ here">' in html
    assert html.count('class="katex"') == 1
    for tag in TAG_RE.findall(html):
        for value in ATTRIBUTE_RE.findall(tag):
            assert "<" not in value and "&lt;span" not in value, tag


@pytest.mark.parametrize("content", list(cases()))
def test_stored_html_is_a_fixed_point_of_the_sanitiser(content):
    """Is every rendering of formulas and markup in every attribute-bearing position a fixed
    point of the sanitiser, with no '<' in any attribute and no markup spliced into one?"""
    html = render(content, context()).html
    assert sanitize_html(html) == html
    for tag in TAG_RE.findall(html):
        for value in ATTRIBUTE_RE.findall(tag):
            assert "<" not in value and "ZTEX" not in value and 'class=' not in value, (content, tag)


def test_entity_forms_are_zulips():
    """Are quotes written as Zulip stores them: Pygments' &quot; and &#39; in highlighted code,
    html.escape's &quot; and &#x27; in a math block's error, as typed in an inline formula's
    error and in text?"""
    code = render("```python\nx = \"a\" + 'b'\n```").html
    assert "&quot;a&quot;" in code and "&#39;b&#39;" in code
    assert render("```math\n\\frac{\"'\n```").html == '<p><span class="tex-error">\\frac{&quot;&#x27;</span></p>'
    assert render("$$\\frac{\"'$$").html == '<p><span class="tex-error">$$\\frac{"\'$$</span></p>'
    assert render("say \"hi\" it's").html == "<p>say \"hi\" it's</p>"
    katex = render("$$\\text{'\"}$$").html
    assert "&#x27;&quot;" in katex


def test_katex_vocabulary_only_inside_katex():
    """Does the sanitiser drop MathML, SVG and inline styles outside KaTeX's span, keeping them inside?"""
    assert sanitize_html('<p><math><mi>x</mi></math><span style="color:red">y</span></p>') == "<p>x<span>y</span></p>"
    inside = '<span class="katex"><span style="height:1em;"><svg width="1em"><path d="M0 0"/></svg></span></span>'
    assert sanitize_html(inside) == inside


def test_a_message_with_a_formula_in_a_preview_stores_no_markup_in_attributes(org):
    """Through the API: is the stored HTML of such a message free of markup in attributes?"""
    client = org.client(org.hamlet)
    html = content_of(client, send(client, content="[look $$x$$ here](https://example.com/a.png)"))
    assert 'title="look $$x$$ here"' in html
