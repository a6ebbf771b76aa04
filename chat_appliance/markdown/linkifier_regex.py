"""Linkifier patterns, compiled with RE2.

A linkifier's pattern is written by an administrator and run over every message and topic of the
organization. Python's `re` backtracks, holding the GIL while it does: `(a+)+c` over a few dozen
`a`s froze every request of the process for seconds. RE2 matches in time linear in the text
whatever the pattern, and refuses what it cannot do so (backreferences, look-around), which is
also the syntax Zulip accepts for linkifiers. The same compiler checks a pattern when it is saved
and compiles it for rendering, so a pattern that was accepted is the pattern that runs.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator, Optional

import re2

# The groups the renderer wraps around an administrator's pattern. A pattern may not name its own
# groups so (the wrapped pattern would not compile, and the linkifier would match nothing).
BEFORE_GROUP = "linkifier_before"
MATCH_GROUP = "linkifier_match"
AFTER_GROUP = "linkifier_after"


class BadPattern(ValueError):
    """A pattern RE2 refuses; the message is Zulip's error text."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # refused patterns are answered to the caller, not written to stderr
    return options


def pattern_groups(source: str) -> set[str]:
    """The named groups of `source`, or BadPattern with Zulip's wording."""
    try:
        regex = re2.compile(source, options=_options())
    except re2.error as error:
        detail = error.args[0] if error.args else None
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        if isinstance(detail, str):
            raise BadPattern(f"Bad regular expression: {detail}") from None
        raise BadPattern("Unknown regular expression error") from None
    return set(regex.groupindex)


def wrap(source: str) -> str:
    """`source` as the renderer runs it: a match starts the text or follows white space or an
    opening delimiter (or \\x03, the end of markup an earlier inline pattern stashed), and is not
    followed by a letter or digit. RE2 has no look-around, so the delimiters are groups of their
    own and the link covers MATCH_GROUP only. `\\s` is ASCII in RE2: NEL and the Unicode
    separators (`\\pZ`) are named too."""
    return (rf"(?P<{BEFORE_GROUP}>^|\s|\x85|\pZ|['\"(,:<\x03])(?P<{MATCH_GROUP}>{source})"
            rf"(?P<{AFTER_GROUP}>$|[^\pL\pN])")


class _Text:
    """A text as RE2 reads it: UTF-8, with the offsets between characters and bytes."""

    __slots__ = ("text", "data", "char_to_byte", "byte_to_char")

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8")
        self.char_to_byte: Optional[list[int]] = None
        self.byte_to_char: Optional[dict[int, int]] = None
        if len(self.data) != len(text):
            self.char_to_byte = [0, *itertools.accumulate(len(c.encode("utf-8")) for c in text)]
            self.byte_to_char = {b: i for i, b in enumerate(self.char_to_byte)}


class LinkifierMatch:
    """A match, its offsets in characters of the text searched (the part of `re.Match` the
    renderer uses)."""

    __slots__ = ("re", "string", "_spans")

    def __init__(self, pattern: "LinkifierPattern", string: str, spans: list[tuple[int, int]]):
        self.re = pattern
        self.string = string
        self._spans = spans

    def span(self, group: int = 0) -> tuple[int, int]:
        return self._spans[group]

    def start(self, group: int = 0) -> int:
        return self._spans[group][0]

    def end(self, group: int = 0) -> int:
        return self._spans[group][1]

    def group(self, group: int = 0) -> Optional[str]:
        start, end = self._spans[group]
        return None if start < 0 else self.string[start:end]

    def groupdict(self) -> dict[str, Optional[str]]:
        return {name: self.group(index) for name, index in self.re.groupindex.items()}


class LinkifierPattern:
    """A wrapped pattern compiled with RE2. The inline pass searches one text many times from
    growing positions; RE2's module encodes the whole text to UTF-8 and counts characters up to
    the position on every search of a `str`, so a text of thousands of matches cost thousands
    of encodings. This keeps the last text's bytes and offsets and searches the bytes."""

    def __init__(self, regex: Any):
        self._regex = regex
        self.pattern: str = regex.pattern
        self.groupindex: dict[str, int] = dict(regex.groupindex)
        self.groups: int = regex.groups
        self._last: Optional[_Text] = None

    def _text(self, text: str) -> _Text:
        last = self._last  # one read: renders on other threads may replace it meanwhile
        if last is None or last.text is not text:
            last = self._last = _Text(text)
        return last

    def search(self, text: str, pos: int = 0) -> Optional[LinkifierMatch]:
        if pos > len(text):
            return None
        encoded = self._text(text)
        start = pos if encoded.char_to_byte is None else encoded.char_to_byte[pos]
        m = self._regex.search(encoded.data, start)
        if m is None:
            return None
        spans = [m.span(i) for i in range(self.groups + 1)]
        if encoded.byte_to_char is not None:
            to_char = encoded.byte_to_char
            spans = [(-1, -1) if a < 0 else (to_char[a], to_char[b]) for a, b in spans]
        return LinkifierMatch(self, text, spans)


def compile_wrapped(source: str) -> Optional[LinkifierPattern]:
    """The wrapped pattern compiled, or None when RE2 refuses it (a pattern saved before patterns
    were checked with RE2 matches nothing rather than failing the message)."""
    try:
        return LinkifierPattern(re2.compile(wrap(source), options=_options()))
    except re2.error:
        return None


def match_span(m: LinkifierMatch) -> tuple[int, int]:
    """The linked text's span in a match of a wrapped pattern."""
    return m.span(m.re.groupindex[MATCH_GROUP])


def pattern_values(m: LinkifierMatch) -> dict[str, str]:
    """The administrator's named groups that matched: the URL template's values."""
    return {k: v for k, v in m.groupdict().items()
            if v is not None and k not in (BEFORE_GROUP, MATCH_GROUP, AFTER_GROUP)}


def matches(regex: LinkifierPattern, text: str) -> Iterator[LinkifierMatch]:
    """The matches of a wrapped pattern in `text`, each search starting where the last linked
    text ended, as the inline pass does (`finditer` would go on after the delimiter that follows
    a match, and miss the match that delimiter starts: "T1 T2")."""
    pos = 0
    while pos <= len(text):
        m = regex.search(text, pos)
        if m is None:
            return
        yield m
        start, end = match_span(m)
        pos = max(end, m.start() + 1)
