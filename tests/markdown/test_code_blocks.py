"""Code blocks: fences pick, canonicalise and label languages as Zulip does; whitespace,
malformed and empty fences follow Zulip's rules; the dispatching lexer loop
(markdown/fastlex.py) yields exactly Pygments' own tokens."""

import random
import re

import pytest
from pygments.lexer import ExtendedRegexLexer, RegexLexer
from pygments.lexers import find_lexer_class_by_name, get_all_lexers

from chat_appliance.markdown import render
from chat_appliance.markdown.blocks import highlight_code
from chat_appliance.markdown.fastlex import (
    OTHER,
    fast_extended_get_tokens_unprocessed,
    fast_get_tokens_unprocessed,
    first_characters,
)

SAMPLES = {
    "python": 'import os\n\n@decorator(x=1)\nasync def f(a: int, *args, **kw) -> "str":\n    """Doc."""\n'
              '    s = f"{a!r:>10} {kw[\'k\']}" + r\'\\d+\' + b"\\x00" + U"x" + rb\'y\'\n'
              '    return [i ** 2 for i in range(10) if i % 2] or 0x1F + 1_000.5e-3j\n'
              'class C(Base, metaclass=M):\n    x: list[int] = []  # comment\n    match x:\n'
              '        case [1, *rest]: pass\n    print(__name__, self, None, ...)\n',
    "javascript": "const re = /ab+c/gi; let s = `t ${a + b}`;\nfunction* g(x) { yield x?.y ?? 0; }\n// end\n",
    "c": '#include <stdio.h>\nint main(void) { char *p = "x\\n"; /* c */ return p[0] == \'\\0\'; }\n',
    "go": "package main\nimport \"fmt\"\nfunc main() { ch := make(chan int, 3); fmt.Println(<-ch) }\n",
    "rust": "fn main() -> Result<(), Box<dyn Error>> { let r#type = 'a'; println!(\"{}\", r#type); Ok(()) }\n",
    "sql": "SELECT a, COUNT(*) FROM t WHERE b LIKE 'x%' GROUP BY a HAVING COUNT(*) > 1; -- done\n",
    "bash": "#!/bin/bash\nfor f in *.txt; do echo \"$f ${f%.txt}\" | grep -q x && rm -- \"$f\"; done\ncat <<EOF\nhere\nEOF\n",
    "json": '{"a": [1, 2.5e3, true, null], "b": {"c": "d\\u00e9"}}\n',
    "yaml": "key: value\nlist:\n  - a\n  - {b: c}\nblock: |\n  text\n",
    "html": "<!DOCTYPE html><div class=\"x\" onclick='f()'><script>var a = 1 < 2;</script></div>\n",
    "css": "@media (max-width: 600px) { .a > b::after { content: \"x\"; color: #fff !important; } }\n",
    "java": "public class A<T> extends B implements C { @Override public String toString() { return \"a\" + 1L; } }\n",
    "ruby": "def m(a, *b, &c)\n  puts \"#{a} %w[x y]\" if a =~ /re/\nend\n",
    "tex": "\\documentclass{article}\n\\begin{document}$x^2 + \\alpha$\\end{document}\n",
    "diff": "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n",
    "haskell": "main :: IO ()\nmain = mapM_ print [x | x <- [1..10], even x]\n",
    "kotlin": "fun main() { val s = \"\"\"raw ${1 + 2}\"\"\"; println(s) }\n",
    "typescript": "interface A { b?: number }\nconst f = <T,>(x: T): T => x;\n",
    "markdown": "# Title\n\n* item `code` **bold**\n",
    "perl": "my %h = (a => 1); print \"$h{a}\\n\" if $x =~ m{^\\d+$}i;\n",
    "lua": "local t = {1, 2, [\"k\"] = 3} -- c\nfor i, v in ipairs(t) do print(i .. v) end\n",
    "ini": "[section]\nkey = value ; comment\n",
    "text": "just text\twith tabs and ünïcödé \u2603\n",
}
NOISE = "\n\t \x00\u00a0\u212a\u017f\u0130ıKSs_09aZ\"'`#$%&()*+,-./:;<=>?@[\\]^{|}~é漢😀"


def regex_lexers(names):
    """(name, lexer, Pygments' own loop, ours) for the lexers that use one of Pygments' loops."""
    for name in names:
        lexer = find_lexer_class_by_name(name)(startinline=True, stripnl=False)
        own = type(lexer).get_tokens_unprocessed
        if own is RegexLexer.get_tokens_unprocessed:
            yield name, lexer, own, fast_get_tokens_unprocessed
        elif own is ExtendedRegexLexer.get_tokens_unprocessed:
            yield name, lexer, own, fast_extended_get_tokens_unprocessed


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_dispatching_lexer_yields_pygments_tokens(lang):
    """For code in this language (whole, cut, repeated, with noise), are the tokens exactly Pygments' own?"""
    rng = random.Random(lang)
    for _name, lexer, own, ours in regex_lexers([lang]):
        code = SAMPLES[lang]
        texts = [code, code * 3, code[: len(code) // 2], "\n" + code + NOISE]
        texts += ["".join(rng.choice(code + NOISE) for _ in range(300)) for _ in range(20)]
        for text in texts:
            assert list(ours(lexer, text)) == list(own(lexer, text))


def test_dispatching_lexer_on_many_lexers():
    """Across a hundred of Pygments' lexers, on random text, are the tokens exactly Pygments' own?"""
    rng = random.Random(16)
    names = sorted(aliases[0] for _name, aliases, _files, _mimes in get_all_lexers() if aliases)
    checked = 0
    for name, lexer, own, ours in regex_lexers(rng.sample(names, 160)):
        for _ in range(3):
            text = "".join(rng.choice(NOISE + "abcdefxyz  \n\n0123") for _ in range(200))
            assert list(ours(lexer, text)) == list(own(lexer, text)), name
        checked += 1
    assert checked >= 80


def test_first_characters_are_conservative():
    """Does the analysis keep a rule wherever it might match (empty matches, case folding, classes)?"""
    def first(pattern, flags=0):
        return first_characters(re.compile(pattern, flags))

    assert first(r"abc|d") == {ord("a"), ord("d")}
    assert first(r"x*y") == {ord("x"), ord("y")}
    assert first(r"a?") is None and first(r"(?=a)") is None and first(r"[^a]") is None
    assert first(r"k", re.IGNORECASE) >= {ord("k"), ord("K"), OTHER}
    assert first(r"\u212a", re.IGNORECASE) is None  # Kelvin sign folds to ASCII k
    assert OTHER in first(r"\w") and OTHER in first(r"[\s]")


def test_highlighting_output_is_unchanged_by_the_dispatching_loop():
    """Is the highlighted HTML of real code the same with Pygments' loop and with ours?"""
    from chat_appliance.markdown import blocks

    for lang in ("python", "javascript", "c", "rust", "bash", "sql", "yaml", "ruby"):
        fast = highlight_code.__wrapped__(SAMPLES[lang], lang)
        lexer = blocks._lexer(blocks._lexer_class(lang))
        saved = lexer.__dict__.pop("get_tokens_unprocessed", None)
        try:
            plain = highlight_code.__wrapped__(SAMPLES[lang], lang)
        finally:
            if saved is not None:
                lexer.get_tokens_unprocessed = saved
        assert fast == plain, lang

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
