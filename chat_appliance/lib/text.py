"""Plain text from rendered HTML (search indexing, notifications)."""

from __future__ import annotations

import html
import re

_TAG = re.compile(r"<[^>]+>")


def html_to_text(rendered: str) -> str:
    """The text a reader sees, without markup."""
    return html.unescape(_TAG.sub(" ", rendered or ""))
