"""Text for the search index of both engines: words as FTS5's unicode61 tokenizer makes them, and the
text of rendered HTML.

SQLite's index splits text itself; the PostgreSQL backend splits text and queries with this, so
that "e-mail", "foo.bar" or "café" are the same words on both engines before stemming.
"""

from __future__ import annotations

import html
import re
import unicodedata

_WORD = re.compile(r"[^\W_]+")
_TAG = re.compile(r"<[^>]+>")


def words(text: str) -> list[str]:
    """Lower-case runs of letters and digits, diacritics removed; NUL and punctuation separate."""
    decomposed = unicodedata.normalize("NFKD", (text or "").replace("\x00", " "))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _WORD.findall(stripped.lower())


def html_to_text(rendered: str) -> str:
    """The text a reader sees in rendered HTML, without markup (what both engines index)."""
    return html.unescape(_TAG.sub(" ", rendered or ""))
