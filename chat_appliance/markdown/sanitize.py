"""Final HTML allow-list: exactly the markup the renderer emits.

Everything Markdown produced goes through nh3 (bindings to the Rust Ammonia
sanitiser, which parses with html5ever as browsers do).  Markup outside the
allow-list is removed -- tags stripped to their text, ``script``/``style``
with their content -- attributes outside the per-tag list dropped, and URLs
in ``href``/``src`` kept only for the allowed schemes or when relative.

Highlighted code blocks are kept out of the Markdown output as opaque
tokens and put back afterwards (Pygments output is span-heavy, so this
halves the work); each must match CODE_BLOCK_RE -- the exact shape of our
code markup (div/pre/code plus class-only spans around text without
markup) -- or it is sanitised like everything else.
"""

from __future__ import annotations

import re

import nh3

ALLOWED_TAGS = frozenset(
    """p br strong em del code pre div span a blockquote ul ol li
    h1 h2 h3 h4 h5 h6 table thead tbody tr th td time img""".split()
)

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

ALLOWED_PROTOCOLS = frozenset(["http", "https", "ftp", "mailto", "tel", "sms", "news", "irc", "ircs", "xmpp"])

# One immutable cleaner, shared by all threads (Ammonia's builder is Sync).
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style"},
    attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
    url_schemes=set(ALLOWED_PROTOCOLS),
    strip_comments=True,
    # Zulip's markup carries no rel attribute; the web client adds its own.
    link_rel=None,
)


def sanitize_html(html: str) -> str:
    return _CLEANER.clean(html)


CODE_BLOCK_RE = re.compile(
    r'<div class="codehilite"(?: data-code-language="[^"<>]*")?><pre><span></span><code>'
    r'(?:<span class="[\w -]*">|</span>|[^<>])*'
    r"</code></pre></div>"
)


def restore_code_blocks(sanitized: str, blocks: list[tuple[str, str]]) -> str:
    """Put verified code blocks back where their tokens are."""
    if not blocks:
        return sanitized
    lookup = dict(blocks)

    def put_back(m: "re.Match[str]") -> str:
        block_html = lookup.get(m.group(1))
        if block_html is None:
            return m.group(0)
        if not CODE_BLOCK_RE.fullmatch(block_html):
            block_html = sanitize_html(block_html)
        whole = m.group(0)
        if whole.startswith("<p>") and whole.endswith("</p>"):
            return block_html
        return whole.replace(m.group(1), block_html)

    return _TOKEN_RE.sub(put_back, sanitized)


_TOKEN_RE = re.compile(r"(?:<p>)?(ZCODEBLOCK[0-9a-f]+N[0-9]+Z)(?:</p>)?")
