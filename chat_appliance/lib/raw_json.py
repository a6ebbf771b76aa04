"""JSON already encoded, for a value of a response (web/response.py writes it as it is)."""

from __future__ import annotations


class RawJSON:
    """A JSON value's encoded bytes. The message cache keeps each message object encoded: a fetch
    of 100 messages spent more time copying their dictionaries to add the viewer's flags and
    encoding them again than reading them from the database."""

    __slots__ = ("json",)

    def __init__(self, encoded: bytes) -> None:
        self.json = encoded

    def __repr__(self) -> str:
        return f"RawJSON({self.json[:60]!r})"
