"""Plain text from rendered HTML (search indexing, notifications)."""

import html
import re

_TAG = re.compile(r"<[^>]+>")


def html_to_text(rendered):
    """The text a reader sees, without markup."""
    return html.unescape(_TAG.sub(" ", rendered or ""))
