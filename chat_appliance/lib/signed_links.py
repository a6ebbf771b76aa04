"""Tokens for mailed links that need no table: what they stand for, signed with the instance's
secret key (HMAC-SHA256), with their issue time.

A token is "<parts joined by '-'>-<issue time, hex>-<signature>"; the signature also covers
`bound`, values the link depends on without carrying them (a password hash, the current
address), so a link stops working once one of those changes. The parts must not contain "-"."""

import hashlib
import hmac
import time
from typing import List, Optional, Sequence


def _signature(secret: bytes, purpose: str, parts: Sequence[str], issued: int, bound: Sequence[str]) -> str:
    signed = "|".join([purpose, *parts, str(issued), *bound])
    return hmac.new(secret, signed.encode(), hashlib.sha256).hexdigest()[:40]


def make_token(secret: bytes, purpose: str, parts: Sequence[str], bound: Sequence[str],
               issued: Optional[int] = None) -> str:
    """A token for `parts`, issued now (or at `issued`, UNIX seconds)."""
    issued = int(time.time()) if issued is None else issued
    return "-".join([*parts, f"{issued:x}", _signature(secret, purpose, parts, issued, bound)])


def token_parts(token: str, count: int, max_age_seconds: int) -> Optional[List[str]]:
    """The `count` parts of a token not older than `max_age_seconds`, unverified (the caller
    fetches what `bound` needs, then calls `token_valid`); None when malformed or too old."""
    pieces = token.split("-")
    if len(pieces) != count + 2:
        return None
    try:
        issued = int(pieces[count], 16)
    except ValueError:
        return None
    if not 0 <= time.time() - issued <= max_age_seconds:
        return None
    return pieces[:count]


def token_valid(secret: bytes, purpose: str, token: str, bound: Sequence[str]) -> bool:
    """Whether the token's signature matches its parts, issue time and `bound`."""
    *parts, issued_hex, signature = token.split("-")
    expected = _signature(secret, purpose, parts, int(issued_hex, 16), bound)
    return hmac.compare_digest(signature, expected)
