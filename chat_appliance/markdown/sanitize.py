"""Final HTML allow-list: exactly the markup the renderer emits."""

from __future__ import annotations

import threading

import bleach

ALLOWED_TAGS = frozenset(
    """p br strong em del code pre div span a blockquote ul ol li
    h1 h2 h3 h4 h5 h6 table thead tbody tr th td time img""".split()
)

ALLOWED_ATTRIBUTES = {
    "a": ["href", "class", "data-stream-id"],
    "span": ["class", "data-user-id", "data-user-group-id", "aria-label", "role", "title", "aria-hidden"],
    "div": ["class", "data-code-language", "aria-hidden"],
    "code": [],
    "ol": ["start"],
    "th": ["align"],
    "td": ["align"],
    "time": ["datetime"],
    "img": ["alt", "class", "src", "title"],
}

ALLOWED_PROTOCOLS = frozenset(["http", "https", "ftp", "mailto", "tel", "sms", "news", "irc", "ircs", "xmpp"])

_local = threading.local()


def _cleaner() -> bleach.Cleaner:
    cleaner = getattr(_local, "cleaner", None)
    if cleaner is None:
        cleaner = bleach.Cleaner(
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            protocols=ALLOWED_PROTOCOLS,
            strip=False,
            strip_comments=True,
        )
        _local.cleaner = cleaner
    return cleaner


def sanitize_html(html: str) -> str:
    return _cleaner().clean(html)
