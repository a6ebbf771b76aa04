"""Password hashing (hashlib) and API key generation (secrets).

A stored hash reads "METHOD$SALT$HEX", METHOD being "scrypt:N:R:P" or "pbkdf2:HASH:ITERATIONS":
the format werkzeug.security writes, so that every hash stored before this module stopped
using werkzeug (the layers below HTTP import no web framework) still verifies. The configured
method may leave its parameters out ("scrypt", "pbkdf2:sha256"); the hash stores them in full.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string

from chat_appliance.db.admission import turns

API_KEY_LENGTH = 32  # as Zulip's generate_api_key
# The one password policy (Zulip's PASSWORD_MIN_LENGTH), for every account however it is made
# (sign-up by invitation, POST /users, the command line) and every change of password.
PASSWORD_MIN_LENGTH = 6
_API_KEY_ALPHABET = string.ascii_letters + string.digits
SALT_LENGTH = 16
# scrypt's cost when the method names none (N, r, p), and PBKDF2's rounds: werkzeug's defaults.
SCRYPT_DEFAULTS = (2**15, 8, 1)
PBKDF2_DEFAULT_ITERATIONS = 1_000_000


def _derive(method, salt, password):
    """(hex digest, method with every parameter spelled out); ValueError for an unknown method."""
    name, *args = method.split(":")
    if name == "scrypt":
        n, r, p = map(int, args) if args else SCRYPT_DEFAULTS
        # hashlib's default memory cap (32 MiB) is just under what the default cost needs.
        digest = hashlib.scrypt(password.encode(), salt=salt.encode(), n=n, r=r, p=p, maxmem=132 * n * r * p)
        return digest.hex(), f"scrypt:{n}:{r}:{p}"
    if name == "pbkdf2" and len(args) <= 2:
        hash_name = args[0] if args else "sha256"
        iterations = int(args[1]) if len(args) == 2 else PBKDF2_DEFAULT_ITERATIONS
        digest = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt.encode(), iterations)
        return digest.hex(), f"pbkdf2:{hash_name}:{iterations}"
    raise ValueError(f"Invalid hash method '{method}'.")


def _generate_hash(password, method):
    salt = "".join(secrets.choice(_API_KEY_ALPHABET) for _ in range(SALT_LENGTH))
    digest, full_method = _derive(method, salt, password)
    return f"{full_method}${salt}${digest}"


def _hash_matches(stored_hash, password):
    """Whether `password` gives `stored_hash`; False for a hash this module cannot read."""
    try:
        method, salt, expected = stored_hash.split("$", 2)
        digest, _method = _derive(method, salt, password)
    except ValueError:
        return False
    return hmac.compare_digest(digest, expected)


def generate_api_key() -> str:
    """32 random characters from a cryptographic source."""
    return "".join(secrets.choice(_API_KEY_ALPHABET) for _ in range(API_KEY_LENGTH))


def password_too_weak(password: str) -> bool:
    """Whether a new password breaks the policy."""
    return len(password) < PASSWORD_MIN_LENGTH


def hash_password(password: str, method: str) -> str:
    """A salted hash by `method` (scrypt in production, a cheap pbkdf2 in tests).
    Hashing runs outside the GIL for tens of milliseconds: other requests take their turns."""
    with turns.waiting_on_others():
        return _generate_hash(password, method)


def check_password(stored_hash: str, password: str) -> bool:
    """Constant-time check of a password against its stored hash; False when none is set."""
    if not stored_hash:
        # Spend comparable work so a missing password is not distinguishable by timing.
        hmac.compare_digest("x", "y")
        return False
    with turns.waiting_on_others():
        return _hash_matches(stored_hash, password)


_dummy_hashes: dict[str, str] = {}


def check_password_against_dummy(password: str, method: str) -> bool:
    """Spend the work of one password check for a login that has no account behind it, so that
    answering "no such account" takes as long as "wrong password" (no timing oracle)."""
    if method not in _dummy_hashes:
        _dummy_hashes[method] = _generate_hash(secrets.token_urlsafe(16), method)
    with turns.waiting_on_others():
        _hash_matches(_dummy_hashes[method], password)
    return False


def api_key_matches(stored_key: str, offered_key: str) -> bool:
    """Constant-time comparison of API keys."""
    return hmac.compare_digest(stored_key.encode(), offered_key.encode())
