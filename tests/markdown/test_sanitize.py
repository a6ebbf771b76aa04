"""Hostile HTML: nothing executable survives rendering, whether the attack comes as message
Markdown, as names and URLs from the organization's data, or as markup handed straight to
the sanitiser (nh3, Ammonia) as if the renderer had produced it."""

import re
from html import unescape
from html.parser import HTMLParser

import pytest

from chat_appliance.markdown import MentionTarget, RenderContext, render
from chat_appliance.markdown.sanitize import ALLOWED_ATTRIBUTES, ALLOWED_PROTOCOLS, ALLOWED_TAGS, sanitize_html

URL_ATTRIBUTES = {"href", "src", "data-src-fullsize"}


# KaTeX's vocabulary (its HTML is stored as KaTeX makes it, as on Zulip: see markdown/katex.py):
# MathML, SVG for stretchy symbols, spans with computed styles. Allowed only inside KaTeX's
# output, and never with a URL or an event handler.
KATEX_TAGS = set("""math semantics annotation mrow mi mo mn ms mtext mspace msup msub msubsup mfrac msqrt
    mroot mover munder munderover mtable mtr mtd mstyle mpadded mphantom menclose merror svg path line""".split())
KATEX_ATTRIBUTES = {"class", "style", "aria-hidden", "xmlns", "display", "encoding", "mathvariant", "stretchy",
                    "fence", "separator", "lspace", "rspace", "minsize", "maxsize", "accent", "accentunder",
                    "displaystyle", "scriptlevel", "mathcolor", "columnalign", "columnspacing", "rowspacing",
                    "columnlines", "rowlines", "notation", "width", "height", "depth", "voffset", "linethickness",
                    "viewbox", "preserveaspectratio", "d", "x1", "y1", "x2", "y2", "stroke-width"}


class _Audit(HTMLParser):
    """Collects every way a piece of HTML could run script in a browser."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.katex_depth = 0  # open elements inside a <span class="katex"> (its markup rules)

    def handle_endtag(self, tag):
        if self.katex_depth:
            self.katex_depth -= 1

    def handle_starttag(self, tag, attrs):
        if self.katex_depth or (tag == "span" and dict(attrs).get("class") in ("katex", "katex-display")):
            self.katex_depth += 1
            for name, value in attrs:
                if tag not in KATEX_TAGS | {"span"} or name not in KATEX_ATTRIBUTES:
                    self.problems.append(f"attribute {name} on <{tag}> in KaTeX")
                elif name == "style" and re.search(r"url|expression|[<>\\]|@", value or "", re.I):
                    self.problems.append(f"style {value!r} in KaTeX")
            if tag not in KATEX_TAGS | {"span"}:
                self.problems.append(f"tag <{tag}> in KaTeX")
            return
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
            return
        for name, value in attrs:
            if name not in ALLOWED_ATTRIBUTES.get(tag, ()):
                self.problems.append(f"attribute {name} on <{tag}>")
            elif name in URL_ATTRIBUTES and value is not None:
                compact = re.sub(r"[\x00-\x20\x7f]", "", unescape(value)).lower()
                scheme = re.match(r"([a-z][a-z0-9+.-]*):", compact)
                if scheme and scheme.group(1) not in ALLOWED_PROTOCOLS:
                    self.problems.append(f"{name}={value!r} on <{tag}>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.katex_depth:
            self.katex_depth -= 1

    def handle_comment(self, data):
        self.problems.append("comment")

    def handle_pi(self, data):
        self.problems.append("processing instruction")

    def unknown_decl(self, data):
        self.problems.append("declaration")


def audit(html):
    parser = _Audit()
    parser.feed(html)
    parser.close()
    return parser.problems


# Markup as an attacker would write it, handed to the sanitiser directly.
RAW_HTML_CORPUS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<img src=\"javascript:alert(1)\">",
    "<img src=\"data:image/svg+xml,<svg onload=alert(1)>\">",
    "<svg onload=alert(1)><circle r=1 /></svg>",
    "<svg><script>alert(1)</script></svg>",
    "<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>",
    "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
    "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
    "<a href=\"&#106;&#97;vascript:alert(1)\">x</a>",
    "<a href=\" javascript:alert(1)\">x</a>",
    "<a href=\"vbscript:msgbox(1)\">x</a>",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>",
    "<a href=\"https://ok.example/\" onclick=\"alert(1)\" style=\"position:fixed\">x</a>",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<object data=\"evil.swf\"></object><embed src=\"evil.swf\">",
    "<form action=\"javascript:alert(1)\"><input type=submit><button formaction=javascript:alert(1)>b</button></form>",
    "<base href=\"javascript:alert(1)//\">",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<link rel=stylesheet href=\"https://evil.example/x.css\">",
    "<style>@import 'https://evil.example/x.css'; body{background:url(javascript:alert(1))}</style>",
    "<div style=\"background:url(javascript:alert(1))\">x</div>",
    "<p style=\"width:expression(alert(1))\">x</p>",
    "<table background=\"javascript:alert(1)\"><tr><td background=\"javascript:alert(1)\">x</td></tr></table>",
    "<span class=\"user-mention\" data-user-id=\"1\" onmouseover=\"alert(1)\">x</span>",
    "<time datetime=\"x\" onfocus=\"alert(1)\" autofocus tabindex=1>x</time>",
    "<!--<script>alert(1)//-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<<script>script>alert(1)<</script>/script>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<div><p><a href=javascript:alert(1)><strong>x</div></a></p>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
    "<template><script>alert(1)</script></template>",
    "<textarea><script>alert(1)</script></textarea><xmp><script>alert(1)</script></xmp>",
    "<select><style></select><img src=x onerror=alert(1)>",
    "<div class=\"codehilite\"><pre><span></span><code><img src=x onerror=alert(1)></code></pre></div>",
    "<a href=\"#narrow\" data-stream-id=\"1\" formaction=\"javascript:alert(1)\">x</a>" * 3,
]

# Message Markdown as an attacker would write it.
MARKDOWN_CORPUS = [
    # TeX: KaTeX runs without trust, so these must come out as errors or inert text.
    "$$\\href{javascript:alert(1)}{x}$$",
    "$$\\url{javascript:alert(1)}$$",
    "$$\\includegraphics{https://evil.example/x.png}$$",
    "$$\\htmlStyle{background:url(javascript:alert(1))}{x}$$",
    "$$\\htmlData{onclick=alert(1)}{x}$$",
    "$$\\color{red;background:url(x)}{x}$$",
    "```math\n\\textcolor{expression(alert(1))}{x}\n```",
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](  javascript:alert(1)  )",
    "[x](data:text/html,<script>alert(1)</script>)",
    "[x](vbscript:msgbox(1))",
    "[x](http://a.example/a.png\" onerror=\"alert(1))",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "javascript:alert(1) and data:text/html,<script>alert(1)</script>",
    "https://evil.example/x.png\"onerror=\"alert(1)",
    "https://evil.example/a.png?<script>alert(1)</script>",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)> <svg onload=alert(1)>",
    "**<script>alert(1)</script>** *<iframe src=javascript:alert(1)>*",
    "> <iframe src=javascript:alert(1)>\n> <style>x</style>",
    "* <a href=javascript:alert(1)>x</a>\n* <object data=x>",
    "| <script>a</script> | b |\n|---|---|\n| <img src=x onerror=alert(1)> | c |",
    "```\n</code></pre><script>alert(1)</script>\n```",
    "```js\" onmouseover=\"alert(1)\nx\n```",
    "```spoiler <img src=x onerror=alert(1)>\n<svg onload=alert(1)>\n```",
    "```quote\n<script>alert(1)</script>\n```",
    "    <script>alert(1)</script>",
    "<time:<script>alert(1)</script>>",
    "$$<script>alert(1)</script>$$",
    "```math\n<script>alert(1)</script>\n```",
    "@**<script>alert(1)</script>** #**<svg onload=alert(1)>** @*<img src=x>*",
    ":<img src=x onerror=alert(1)>: `<script>alert(1)</script>`",
    "<<script>script>alert(1)<</script>/script> <!-- <script> --> <![CDATA[x]]>",
    "[<img src=x onerror=alert(1)>](https://ok.example/)",
    "[x](https://ok.example/ \"<script>alert(1)</script>\")",
    "see #42 and JIRA-7",
]


def hostile_context():
    """An organization whose own data is hostile too: names, emoji URLs, a linkifier
    whose template would make a javascript: link."""
    evil = MentionTarget(1, "<img src=x onerror=alert(1)>")
    return RenderContext(
        realm_url="https://chat.example",
        linkifiers=[(r"#(?P<id>[0-9]+)", "javascript:alert({id})"),
                    (r"JIRA-(?P<id>[0-9]+)", "https://jira.example/{id}\"onmouseover=\"alert(1)")],
        find_user=lambda name, user_id: evil,
        find_group=lambda name: MentionTarget(2, "<script>alert(1)</script>"),
        find_channel=lambda name: MentionTarget(3, "<svg onload=alert(1)>"),
        realm_emoji={"img": ("9", "javascript:alert(1)")},
    )


@pytest.mark.parametrize("markup", RAW_HTML_CORPUS)
def test_sanitiser_leaves_nothing_executable(markup):
    """Does the sanitiser, given hostile markup directly, leave no script, handler, style or bad URL?"""
    cleaned = sanitize_html(markup)
    assert audit(cleaned) == [], cleaned


@pytest.mark.parametrize("content", MARKDOWN_CORPUS)
def test_rendered_hostile_markdown_has_nothing_executable(content):
    """Does a hostile message, rendered with hostile organization data, come out with nothing executable?"""
    html = render(content, hostile_context()).html
    assert audit(html) == [], html


def test_hostile_html_is_shown_as_text():
    """Is HTML in a message shown as text (escaped), not dropped, as Zulip does?"""
    html = render("<b>bold</b> <script>alert(1)</script>").html
    assert html == "<p>&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>"


def test_audit_catches_what_it_should():
    """Does the audit itself flag scripts, handlers, styles and javascript: URLs (so the corpus tests can fail)?"""
    assert audit("<script>x</script>") == ["tag <script>"]
    assert audit('<a href="java&#x09;script:x">x</a>') == ["href='java\\tscript:x' on <a>"]
    assert audit('<span onclick="x" style="y">x</span>') == ["attribute onclick on <span>", "attribute style on <span>"]
    assert audit('<a href="https://ok.example/">ok</a><img src="/x.png">') == []
    assert audit('<span class="katex"><svg onload="x"></svg><a href="javascript:x">y</a></span>') == [
        "attribute onload on <svg> in KaTeX", "attribute href on <a> in KaTeX", "tag <a> in KaTeX"]
    assert audit('<span class="katex"><span style="background:url(x)">y</span></span><svg></svg>') == [
        "style 'background:url(x)' in KaTeX", "tag <svg>"]


def test_allowed_markup_survives_the_sanitiser():
    """Does the markup the renderer emits pass the sanitiser unchanged in meaning?"""
    markup = ('<p><span class="user-mention" data-user-id="4">@King</span> '
              '<a class="stream" data-stream-id="3" href="/#narrow/channel/3-x">#x</a> '
              '<time datetime="2017-06-05T22:30:00Z">t</time></p>\n<ol start="3"><li>a</li></ol>')
    assert sanitize_html(markup) == markup
