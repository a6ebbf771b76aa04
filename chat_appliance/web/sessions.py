"""Browser sessions: a cookie for the web client, with a CSRF token for every state change.

The web client calls the same API as other clients, under /json instead of /api/v1, and
authenticates with the session cookie instead of HTTP Basic (as Zulip's web app does). Any
request under /json is authenticated here (web.auth dispatches on the path), so no view knows
which kind of client called it. /api/v1 never looks at the cookie.

`authenticate_session` and `authenticate_session_cached` take the cookie value, the method and
the X-CSRFToken header as plain arguments, so that a handler outside Flask (the event loop's
long-poll handler) can call them as its authentication function.
"""

import hashlib
import secrets
import time
from dataclasses import dataclass

from chat_appliance.db import runtime
from chat_appliance.db.connection import write_transaction
from chat_appliance import models  # the session models load on first use (models/__init__.py)
from chat_appliance.models import now
from chat_appliance.lib.errors import CsrfFailedError, UnauthorizedError, UserDeactivatedError

SESSION_COOKIE = "chat_appliance_session"
CSRF_HEADER = "X-CSRFToken"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# How long a long poll may answer from memory before the session row is read again.
SESSION_CACHE_SECONDS = 60


def token_hash(token):
    return hashlib.sha256(token.encode()).hexdigest()


def create_session(user, lifetime_seconds):
    """A new session for `user`; returns (cookie token, csrf token)."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    with write_transaction():
        # Expired sessions of this user go when a new one starts: the table stays small.
        session = models.WebSession
        session.delete().where((session.user == user.id) & (session.expires <= now())).execute()
        session.create(token_hash=token_hash(token), user=user.id, csrf_token=csrf, expires=now() + lifetime_seconds)
    return token, csrf


def delete_session(token):
    """Log out: the session row goes, and with it the cached entry."""
    digest = token_hash(token)
    with write_transaction():
        models.WebSession.delete().where(models.WebSession.token_hash == digest).execute()
    runtime.current().sessions.pop(digest)


def delete_other_sessions(user_id, keep_token=None):
    """Every session of a user but `keep_token`'s (after a password change)."""
    session = models.WebSession
    query = session.delete().where(session.user == user_id)
    if keep_token:
        query = query.where(session.token_hash != token_hash(keep_token))
    with write_transaction():
        query.execute()
    forget_user_sessions(user_id)


def find_session(token):
    """The unexpired session of this cookie value, with its user, or None."""
    if not token:
        return None
    session, user = models.WebSession, models.UserProfile
    return (session.select(session, user).join(user)
            .where((session.token_hash == token_hash(token)) & (session.expires > now())).first())


def check_csrf(method, expected, offered):
    """State changes need the session's CSRF token in X-CSRFToken (a cross-site form cannot
    send a header, and a cross-site script cannot read the token)."""
    if method.upper() in SAFE_METHODS:
        return
    if not offered:
        raise CsrfFailedError("CSRF token missing.")
    if not secrets.compare_digest(expected.encode(), offered.encode()):
        raise CsrfFailedError("CSRF token incorrect.")


def active_session(token, method, csrf_offered):
    """The session of this cookie, its user active and the CSRF token right; raises 401 without
    one, 403 on a CSRF failure."""
    session = find_session(token)
    if session is None:
        raise UnauthorizedError()
    if not session.user.is_active:
        raise UserDeactivatedError()
    check_csrf(method, session.csrf_token, csrf_offered)
    return session


def authenticate_session(token, method, csrf_offered):
    """The active user of this session cookie (see active_session)."""
    return active_session(token, method, csrf_offered).user


# --- cached sessions for long polls (the counterpart of web.auth's credential cache) -------------

@dataclass(frozen=True)
class SessionUser:
    """The little a long poll needs to know about a session's user (as web.auth.CachedUser)."""

    id: int
    realm_id: int
    email: str


def authenticate_session_cached(token, method, csrf_offered):
    """Like authenticate_session, answering from memory (the app's runtime.sessions) for
    SESSION_CACHE_SECONDS, never past the session's end: a long poll needs only the user's id.
    Returns a SessionUser."""
    digest = token_hash(token) if token else ""
    cache = runtime.current().sessions
    entry = cache.get(digest)
    if entry is not None:
        check_csrf(method, entry[1], csrf_offered)
        return entry[0]
    session = active_session(token, method, csrf_offered)
    user = session.user
    cached = SessionUser(user.id, user.realm_id, user.email)
    cache.put(digest, (cached, session.csrf_token), min(SESSION_CACHE_SECONDS, session.expires - time.time()))
    return cached


def cookie_value(cookie_header, name):
    """One cookie's value from a Cookie header, or None."""
    # Imported here: only the event loop's /json/events reads cookies this way (Flask parses them
    # otherwise), and a restart's first answer need not wait for the module.
    from http.cookies import CookieError, SimpleCookie

    jar = SimpleCookie()
    try:
        jar.load(cookie_header or "")
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def authenticate_session_headers(headers):
    """The session user of a request known only by its headers (a dict with lower-case names),
    for a handler outside Flask such as the event loop's /json/events. It cannot tell GET from
    DELETE, so it always asks for the CSRF token, which the page sends on every /json request."""
    token = cookie_value(headers.get("cookie"), SESSION_COOKIE)
    return authenticate_session_cached(token, "POST", headers.get(CSRF_HEADER.lower()))


def forget_user_sessions(user_id):
    """Drop a user's cached sessions (deactivation, new key, logout elsewhere)."""
    active = runtime.current()
    if active is not None:
        active.forget_sessions(user_id)
