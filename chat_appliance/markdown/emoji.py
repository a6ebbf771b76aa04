"""Emoji tables derived from the zulip-emoji-mapping package.

That package ships Zulip's ``EMOJI_NAME_MAPS`` (emoji code -> canonical
name and aliases); we index it both ways once, at import time. Nothing imports this module
at start: the renderer (markdown/inline.py), reactions, statuses and the web client's table load
it when they first need an emoji.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from zulip_emoji_mapping.emoji_names import EMOJI_NAME_MAPS

# name (canonical or alias) -> emoji code such as "1f642" or "1f937-200d-2640"
NAME_TO_CODE: dict[str, str] = {}
# emoji code -> canonical name
CODE_TO_NAME: dict[str, str] = {}

for _code, _info in EMOJI_NAME_MAPS.items():
    CODE_TO_NAME[_code] = _info["canonical_name"]
    NAME_TO_CODE.setdefault(_info["canonical_name"], _code)
    for _alias in _info["aliases"]:
        NAME_TO_CODE.setdefault(_alias, _code)

# Zulip's own emoji, rendered as an image rather than a Unicode glyph.
ZULIP_EXTRA_EMOJI = {"zulip": "/static/generated/emoji/images/emoji/unicode/zulip.png"}


def _unicode_emoji_regex() -> str:
    chars: set[str] = set()
    for code in EMOJI_NAME_MAPS:
        for part in code.split("-"):
            cp = int(part, 16)
            if cp >= 0x2000 and cp not in (0x200D, 0xFE0F, 0x20E3):
                chars.add(chr(cp))
    ordered = sorted(chars)
    # Collapse into ranges to keep the character class small.
    ranges: list[str] = []
    start = prev = ordered[0]
    for ch in ordered[1:] + ["\U0010ffff"]:
        if ord(ch) == ord(prev) + 1:
            prev = ch
            continue
        ranges.append(re.escape(start) if start == prev else f"{re.escape(start)}-{re.escape(prev)}")
        start = prev = ch
    glyph = "[" + "".join(ranges) + "]"
    atom = rf"(?:[#*0-9]\ufe0f?\u20e3|{glyph}[\U0001F3FB-\U0001F3FF]?\ufe0f?)"
    return rf"{atom}(?:\u200d{atom})*"


# One emoji: a glyph (or keycap) with optional skin tone and variation
# selector, or several joined by zero-width joiners.
UNICODE_EMOJI_SINGLE = _unicode_emoji_regex()
UNICODE_EMOJI_SINGLE_RE = re.compile(UNICODE_EMOJI_SINGLE)
# A run of adjacent emoji, handled in one match.
UNICODE_EMOJI_RUN_RE = rf"(?:{UNICODE_EMOJI_SINGLE})+"


@functools.lru_cache(maxsize=4096)
def code_for_unicode(text: str) -> Optional[str]:
    code = "-".join(f"{ord(c):04x}" for c in text if c != "\ufe0f")
    return code if code in CODE_TO_NAME else None
