"""The HTML allow-list, applied to a message's whole HTML as the last step of rendering.

Everything the renderer produced -- Python-Markdown's output, Pygments' highlighted code and
KaTeX's typeset formulas -- goes through nh3 (bindings to the Rust Ammonia sanitiser, which
parses with html5ever as browsers do) once they are all in place, so no later step can put
markup where the sanitiser did not see it (a formula spliced into an attribute once broke out
of it). Markup outside the allow-list is removed -- tags stripped to their text,
``script``/``style`` with their content -- attributes outside the per-tag list dropped, and URLs
in ``href``/``src`` kept only for the allowed schemes or when relative.

html5ever's serialiser writes text with only ``&``, ``<`` and ``>`` escaped. Zulip's stored HTML
has other forms in three places, which clients and Zulip's test cases compare byte for byte, so
``zulip_forms`` writes them back after the sanitiser (the same document, spelled as Zulip does):

* highlighted code (``div.codehilite``): Pygments' ``&quot;`` and ``&#39;``;
* KaTeX's output (``span.katex``): KaTeX's ``&quot;`` and ``&#x27;``, and SVG's empty
  ``<path/>`` and ``<line/>``;
* the error markup of a ``math`` block (``span.tex-error`` whose text is not an inline
  ``$$...$$``): Python's ``html.escape``, ``&quot;`` and ``&#x27;``.

``sanitize_html`` is idempotent: its output is a fixed point (tests/markdown/test_sanitize_last.py
renders constructs of every kind and checks it).
"""

from __future__ import annotations

import html as html_module
import re
import secrets

import nh3

# KaTeX's MathML (its accessible half) and the SVG of stretchy glyphs (\sqrt, arrows, braces).
MATHML_TAGS = frozenset(
    """math semantics annotation mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt
    mroot mtable mtr mtd mlabeledtr mover munder munderover mstyle mpadded mphantom menclose merror""".split()
)
SVG_TAGS = frozenset(["svg", "path", "line"])

# The renderer's own markup.
ALLOWED_TAGS = frozenset(
    """p br strong em del code pre div span a blockquote ul ol li
    h1 h2 h3 h4 h5 h6 table thead tbody tr th td time img""".split()
)

_MATHML_ATTRIBUTES = [
    "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "minsize", "maxsize",
    "symmetric", "largeop", "movablelimits", "accent", "accentunder", "columnalign", "rowalign",
    "columnlines", "rowlines", "columnspacing", "rowspacing", "frame", "framespacing",
    "equalrows", "equalcolumns", "displaystyle", "scriptlevel", "mathcolor", "mathbackground",
    "mathsize", "width", "height", "depth", "voffset", "notation", "linethickness",
]

ALLOWED_ATTRIBUTES = {
    "a": ["href", "class", "data-stream-id", "title", "data-id"],
    "span": ["class", "data-user-id", "data-user-group-id", "aria-label", "role", "title", "aria-hidden"],
    "div": ["class", "data-code-language", "aria-hidden"],
    "code": [],
    "ol": ["start"],
    "th": ["align"],
    "td": ["align"],
    "time": ["datetime"],
    "img": ["alt", "class", "src", "title", "data-src-fullsize", "data-original-dimensions",
            "data-original-content-type", "data-animated", "data-transcoded-image"],
}

# KaTeX's: its spans carry computed styles (checked by _STYLE_RE in zulip_forms).
KATEX_ATTRIBUTES = {
    "span": ["style"],
    "math": ["xmlns", "display"],
    "annotation": ["encoding"],
    "svg": ["xmlns", "width", "height", "viewBox", "preserveAspectRatio", "style"],
    "path": ["d"],
    "line": ["x1", "x2", "y1", "y2", "stroke-width"],
    **{tag: _MATHML_ATTRIBUTES for tag in MATHML_TAGS - {"math", "annotation"}},
}

ALLOWED_PROTOCOLS = frozenset(["http", "https", "ftp", "mailto", "tel", "sms", "news", "irc", "ircs", "xmpp"])

# KaTeX's inline styles: declarations of lengths, colours and positions; no url(), no escapes,
# no comments, nothing that could load or run anything.
_STYLE_RE = re.compile(r"(?:\s*[a-z-]+\s*:\s*(?:[\w.#%+-]+|calc\([\w.%+\- ]*\))(?:\s+(?:[\w.#%+-]+))*\s*;?)*\s*")


# One immutable cleaner, shared by all threads (Ammonia's builder is Sync).
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS | MATHML_TAGS | SVG_TAGS),
    clean_content_tags={"script", "style"},
    attributes={tag: set(ALLOWED_ATTRIBUTES.get(tag, ())) | set(KATEX_ATTRIBUTES.get(tag, ()))
                for tag in ALLOWED_ATTRIBUTES.keys() | KATEX_ATTRIBUTES.keys()},
    url_schemes=set(ALLOWED_PROTOCOLS),
    strip_comments=True,
    # Zulip's markup carries no rel attribute; the web client adds its own.
    link_rel=None,
)

# A start tag with a URL, as our serialisers and html5ever write tags: attribute values in double quotes, with
# "<", ">" and '"' escaped inside them, so a tag ends at the first ">".
_TAG_RE = re.compile(r"<[a-zA-Z][^>]*?\s(?:href|src)=[^>]*>")
_URL_ATTRIBUTE_RE = re.compile(r'(\s(?:href|src)=)"([^"]*)"')
_CONTROL_RE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")


def _url_allowed(value: str) -> bool:
    """A link target's scheme is on the allow-list, or it has none (relative). Ammonia parses
    URLs strictly and drops targets browsers open fine (`http://host:port/x`, which Zulip
    keeps), so targets are checked here by their scheme, as a browser reads it (ignoring
    control characters and white space), and handed past it."""
    url = _CONTROL_RE.sub("", html_module.unescape(value))
    scheme = _SCHEME_RE.match(url)
    if scheme is None:
        return ":" not in url.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return scheme.group(1).lower() in ALLOWED_PROTOCOLS


def sanitize_html(html: str) -> str:
    """`html` through the allow-list, spelled as Zulip's stored HTML (module docstring)."""
    nonce = secrets.token_hex(6)
    urls: list[str] = []

    def stash_urls(tag: "re.Match[str]") -> str:
        def stash(attribute: "re.Match[str]") -> str:
            if not _url_allowed(attribute.group(2)):
                return ""
            urls.append(attribute.group(2))
            return f'{attribute.group(1)}"#zurl{nonce}n{len(urls) - 1}"'

        return _URL_ATTRIBUTE_RE.sub(stash, tag.group(0))

    cleaned = _CLEANER.clean(_TAG_RE.sub(stash_urls, html))
    if urls:
        cleaned = re.sub(rf'(\s(?:href|src)=)"#zurl{nonce}n([0-9]+)"',
                         lambda m: f'{m.group(1)}"{urls[int(m.group(2))].replace("<", "&lt;").replace(">", "&gt;")}"',
                         cleaned)
    return zulip_forms(cleaned)


_QUOTES_PYGMENTS = str.maketrans({'"': "&quot;", "'": "&#39;"})
_QUOTES_HTML_ESCAPE = str.maketrans({'"': "&quot;", "'": "&#x27;"})

# The elements whose insides have rules of their own, by their start tag as the sanitiser writes it.
_REGION_START_RE = re.compile(
    r'<span class="(katex|katex-display|tex-error)">|<div class="(codehilite)"(?: data-code-language="[^"]*")?>')
_SPAN_TAG_RE = re.compile(r"<(/?)span[\s>]")
_DIV_TAG_RE = re.compile(r"<(/?)div[\s>]")
_TEXT_WITH_QUOTES_RE = re.compile(r"(?<=>)[^<]*[\"'][^<]*")
_EMPTY_SVG_RE = re.compile(r"(<(path|line)\s[^>]*)></\2>")
_STYLE_ATTRIBUTE_RE = re.compile(r'\sstyle="([^"]*)"')
_FOREIGN_TAG_RE = re.compile(r"</?(?:%s)(?=[\s/>])[^>]*>" % "|".join(sorted(MATHML_TAGS | SVG_TAGS)))


def _region_end(html: str, start: int, tag_re: "re.Pattern[str]") -> int:
    """Where the element whose start tag begins at `start` ends (after its end tag)."""
    depth = 0
    for m in tag_re.finditer(html, start):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            return html.index(">", m.end() - 1) + 1
    return len(html)


def _katex_style(m: "re.Match[str]") -> str:
    return m.group(0) if _STYLE_RE.fullmatch(m.group(1)) else ""


def _outside(segment: str) -> str:
    """Markup outside KaTeX: no MathML, SVG or inline style."""
    if "<m" in segment or "<svg" in segment or "<path" in segment or "<line" in segment:
        segment = _FOREIGN_TAG_RE.sub("", segment)
    if " style=" in segment:
        segment = _STYLE_ATTRIBUTE_RE.sub("", segment)
    return segment


def zulip_forms(html: str) -> str:
    """The sanitiser's output with KaTeX's vocabulary (MathML, SVG, inline styles of its own
    grammar) kept only inside KaTeX's span -- Ammonia's allow-list cannot say "only inside" --
    and the entity forms of Zulip's stored HTML (module docstring) written back."""
    if not _NEEDS_SCAN.search(html):
        return html
    out: list[str] = []
    pos = 0
    for m in _REGION_START_RE.finditer(html):
        if m.start() < pos:
            continue  # inside a region already handled
        kind = m.group(1) or m.group(2)
        end = _region_end(html, m.start(), _DIV_TAG_RE if kind == "codehilite" else _SPAN_TAG_RE)
        out.append(_outside(html[pos:m.start()]))
        region = html[m.start():end]
        if kind in ("katex", "katex-display"):
            region = _STYLE_ATTRIBUTE_RE.sub(_katex_style, region)
            region = _EMPTY_SVG_RE.sub(r"\1/>", region)
            region = _TEXT_WITH_QUOTES_RE.sub(lambda t: t.group(0).translate(_QUOTES_HTML_ESCAPE), region)
        elif kind == "codehilite":
            region = _TEXT_WITH_QUOTES_RE.sub(lambda t: t.group(0).translate(_QUOTES_PYGMENTS), _outside(region))
        else:
            region = _outside(region)
            text = region[m.end() - m.start():-len("</span>")]
            inline = len(text) >= 4 and text.startswith("$$") and text.endswith("$$")
            if not inline and "<" not in text:
                region = region[:m.end() - m.start()] + text.translate(_QUOTES_HTML_ESCAPE) + "</span>"
        out.append(region)
        pos = end
    out.append(_outside(html[pos:]))
    return "".join(out)


_NEEDS_SCAN = re.compile(r'codehilite|katex|tex-error|<(?:svg|path|line|m[a-z]+)[\s>/]|\sstyle=')


def restore_code_blocks(html: str, blocks: list[tuple[str, str]]) -> str:
    """Put each highlighted code block where its token is (before sanitising: Pygments' HTML
    goes through the allow-list like everything else). A token alone in a paragraph replaces
    the paragraph, as the block it stands for."""
    if not blocks:
        return html
    lookup = dict(blocks)

    def put_back(m: "re.Match[str]") -> str:
        block_html = lookup.get(m.group(1))
        if block_html is None:
            return m.group(0)
        whole = m.group(0)
        if whole.startswith("<p>") and whole.endswith("</p>"):
            return block_html
        return whole.replace(m.group(1), block_html)

    return _CODE_TOKEN_RE.sub(put_back, html)


_CODE_TOKEN_RE = re.compile(r"(?:<p>)?(ZCODEBLOCK[0-9a-f]+N[0-9]+Z)(?:</p>)?")
