"""Code blocks: fences pick, canonicalise and label languages as Zulip does; whitespace,
malformed and empty fences follow Zulip's rules."""

from chat_appliance.markdown import render

def test_language_aliases_are_canonicalised():
    """Do fence languages given as aliases, with a dot or in braces, get Pygments' canonical label and highlighting?"""
    for fence in ("``` js", "```.js", "```{.js}", "~~~ JavaScript", "``` javascript extra header"):
        html = render(f"{fence}\nlet a = 1;\n```".replace("\n```", "\n" + fence[:3])).html
        assert 'data-code-language="JavaScript"' in html and '<span class="kd">let</span>' in html, fence
    assert 'data-code-language="Python 2.x"' in render("``` py2\nprint 1\n```").html
    assert 'data-code-language="TeX"' in render("``` latex\n\\pi\n```").html


def test_unknown_language_is_labelled_but_plain():
    """Is an unknown fence language kept (lower-cased) as the label with the code unhighlighted?"""
    html = render("``` MyLang\nx = 1\n```").html
    assert html == '<div class="codehilite" data-code-language="mylang"><pre><span></span><code>x = 1\n</code></pre></div>'


def test_first_line_picks_the_lexer_without_a_language():
    """Without a fence language, do '#!lang', '#!/path/lang' and ':::lang' first lines choose the lexer and stay?"""
    for first in ("#!python", "#!/usr/bin/python3", ":::python", "#!/usr/bin/env python"):
        html = render(f"```\n{first}\nimport os\n```").html
        assert '<span class="kn">import</span>' in html and "data-code-language" not in html, first
    assert '<span class="kn">' not in render("```\nimport os\n```").html


def test_code_whitespace_rules():
    """Is trailing whitespace removed from code lines, inner blank lines and indentation kept (tabs as 4 spaces), outer blank lines dropped?"""
    html = render("```\n\n  a = 1   \n\n\tb = 2\t\n\n```").html
    assert html == '<div class="codehilite"><pre><span></span><code>  a = 1\n\n    b = 2\n</code></pre></div>'


def test_malformed_fences_are_text():
    """Is a fence line with a backtick or tilde after the fence text (and a tilde run not strikethrough)?"""
    assert render("```a`b\nx\n```").html.startswith("<p>")
    assert render("~~~~x~~ y").html == "<p>~~~~x~~ y</p>"
    assert render("``` ok\nx\n~~~").html.startswith('<div class="codehilite"')


def test_empty_code_block_renders_nothing():
    """Does an empty (or blank) fenced code block render as nothing, as Zulip's does?"""
    assert render("```\n```").html == ""
    assert render("```python\n   \n```").html == ""
    assert render("").html == ""
