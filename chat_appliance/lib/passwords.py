"""Password hashing and API key generation (secrets)."""

import hmac
import secrets
import string

from werkzeug.security import check_password_hash, generate_password_hash

from chat_appliance.db.admission import turns

API_KEY_LENGTH = 32  # as Zulip's generate_api_key
# The one password policy (Zulip's PASSWORD_MIN_LENGTH), for every account however it is made
# (sign-up by invitation, POST /users, the command line) and every change of password.
PASSWORD_MIN_LENGTH = 6
_API_KEY_ALPHABET = string.ascii_letters + string.digits


def generate_api_key():
    """32 random characters from a cryptographic source."""
    return "".join(secrets.choice(_API_KEY_ALPHABET) for _ in range(API_KEY_LENGTH))


def password_too_weak(password):
    """Whether a new password breaks the policy."""
    return len(password) < PASSWORD_MIN_LENGTH


def hash_password(password, method):
    """A salted hash; `method` is werkzeug's (scrypt in production, a cheap pbkdf2 in tests).
    Hashing runs outside the GIL for tens of milliseconds: other requests take their turns."""
    with turns.waiting_on_others():
        return generate_password_hash(password, method=method)


def check_password(stored_hash, password):
    """Constant-time check of a password against its stored hash; False when none is set."""
    if not stored_hash:
        # Spend comparable work so a missing password is not distinguishable by timing.
        hmac.compare_digest("x", "y")
        return False
    with turns.waiting_on_others():
        return check_password_hash(stored_hash, password)


_dummy_hashes = {}


def check_password_against_dummy(password, method):
    """Spend the work of one password check for a login that has no account behind it, so that
    answering "no such account" takes as long as "wrong password" (no timing oracle)."""
    if method not in _dummy_hashes:
        _dummy_hashes[method] = generate_password_hash(secrets.token_urlsafe(16), method=method)
    with turns.waiting_on_others():
        check_password_hash(_dummy_hashes[method], password)
    return False


def api_key_matches(stored_key, offered_key):
    """Constant-time comparison of API keys."""
    return hmac.compare_digest(stored_key.encode(), offered_key.encode())
