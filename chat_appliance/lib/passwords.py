"""Password hashing and API key generation (secrets)."""

from __future__ import annotations

import hmac
import secrets
import string

from werkzeug.security import check_password_hash, generate_password_hash

from chat_appliance.db.admission import turns

API_KEY_LENGTH = 32  # as Zulip's generate_api_key
_API_KEY_ALPHABET = string.ascii_letters + string.digits


def generate_api_key() -> str:
    """32 random characters from a cryptographic source."""
    return "".join(secrets.choice(_API_KEY_ALPHABET) for _ in range(API_KEY_LENGTH))


def hash_password(password: str, method: str) -> str:
    """A salted hash; `method` is werkzeug's (scrypt in production, a cheap pbkdf2 in tests).
    Hashing runs outside the GIL for tens of milliseconds: other requests take their turns."""
    with turns.waiting_on_others():
        return generate_password_hash(password, method=method)


def check_password(stored_hash: str, password: str) -> bool:
    """Constant-time check of a password against its stored hash; False when none is set."""
    if not stored_hash:
        # Spend comparable work so a missing password is not distinguishable by timing.
        hmac.compare_digest("x", "y")
        return False
    with turns.waiting_on_others():
        return check_password_hash(stored_hash, password)


_dummy_hashes: dict[str, str] = {}


def check_password_against_dummy(password: str, method: str) -> bool:
    """Spend the work of one password check for a login that has no account behind it, so that
    answering "no such account" takes as long as "wrong password" (no timing oracle)."""
    if method not in _dummy_hashes:
        _dummy_hashes[method] = generate_password_hash(secrets.token_urlsafe(16), method=method)
    with turns.waiting_on_others():
        check_password_hash(_dummy_hashes[method], password)
    return False


def api_key_matches(stored_key: str, offered_key: str) -> bool:
    """Constant-time comparison of API keys."""
    return hmac.compare_digest(stored_key.encode(), offered_key.encode())
