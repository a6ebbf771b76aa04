"""HTTP Basic authentication with the account's email and API key."""

from base64 import b64decode
from dataclasses import dataclass

from flask import g, request
from werkzeug.datastructures import Authorization

from chat_appliance.db import runtime
from chat_appliance import models  # the account models load on first use (models/__init__.py)
from chat_appliance.lib import passwords
from chat_appliance.models.realm import instance_realm
from chat_appliance.web import sessions
from chat_appliance.web.context import auth_settings, password_method
from chat_appliance.lib.errors import (
    AuthenticationFailedError,
    JsonableError,
    InvalidAPIKeyError,
    UnauthorizedError,
    UserDeactivatedError,
    WebhookBotOnlyError,
)
from chat_appliance.lib.passwords import api_key_matches
from chat_appliance.lib.snapshots import read_through, snapshot_versions
from chat_appliance.web.rate_limit import check_login_allowed, record_failed_login
from chat_appliance.web.sessions import CSRF_HEADER, SAFE_METHODS, SESSION_COOKIE


def basic_auth_pair(header):
    """(user name, password) of an Authorization header, "" for both when it is absent or not
    "<scheme> base64(name:password)". Parsed as flask-httpauth did before this replaced it (any
    scheme; UTF-8, else Latin-1), without its Authorization object and three callback hops, which
    were a tenth of a trivial request's time."""
    if header is None:
        return "", ""
    try:
        _scheme, credentials = header.encode("utf-8").split(b" ", 1)
        name, password = b64decode(credentials).split(b":", 1)
    except (ValueError, TypeError):  # binascii.Error is a ValueError
        return "", ""
    try:
        return name.decode("utf-8"), password.decode("utf-8")
    except UnicodeDecodeError:
        return name.decode("latin1"), password.decode("latin1")


def verify_api_key(email, api_key, *, allow_webhook_access=False):
    """Find the account by email (API or real address) and compare keys in constant time. An
    incoming webhook bot's key opens /api/v1/external/* alone (allow_webhook_access), as in Zulip:
    a key pasted into a third-party service must not read or act as anyone elsewhere."""
    if not email and not api_key:
        raise UnauthorizedError()
    user = user_for_login_email(email) if email else None
    if user is None or not api_key or not api_key_matches(user.api_key, api_key):
        raise InvalidAPIKeyError()
    if not user.is_active:
        raise UserDeactivatedError()
    if not allow_webhook_access and is_incoming_webhook_bot(user):
        raise WebhookBotOnlyError()
    return user


def is_incoming_webhook_bot(user):
    return bool(user.is_bot) and user.bot_type == models.BOT_INCOMING_WEBHOOK


# Login email -> account id (the app's runtime.login_ids), so that most requests find their
# account by primary key instead of matching both email columns case-insensitively (no index
# serves that). The row itself is always read fresh, and used only while it still answers to
# that email: the map never decides who someone is, it only says where to look first.
LOGIN_ID_SECONDS = 3600


def user_for_login_email(email):
    """The account a Basic user name names (API email or real address), or None."""
    lowered = email.strip().lower()
    login_ids = runtime.current().login_ids
    user_id = login_ids.get(lowered)
    if user_id is not None:
        user = account_by_id(user_id)
        if user is not None and lowered in (user.email.lower(), user.delivery_email.lower()):
            return user
    user = models.UserProfile.get_by_login_email(email)
    if user is not None:
        login_ids.put(lowered, user.id, LOGIN_ID_SECONDS)
    return user


def account_by_id(user_id):
    """The account with this id, or None: kept between requests while the configuration is
    unchanged (lib/snapshots.py; every change to an account row counts). The account carries the
    numbers read before it (None where none can be read): the data version (`read_at`), for the
    reads of a view that writes nothing, and the configuration generation (`config_at`), for the
    reads a send makes before it writes (actions/messages.py)."""
    data_version, generation = snapshot_versions()
    row = read_through("account", user_id, generation, lambda: models.UserProfile.fetch_row_by_id(user_id))
    if row is None:
        return None
    user = models.UserProfile.from_row(row)
    user.read_at = data_version
    user.config_at = generation
    return user


def authenticate_request(*, allow_webhook_access=False):
    """The authenticated user of this request; raises a 401 error otherwise. Requests of the web
    client (/json/...) authenticate by session cookie and CSRF token instead (web.sessions)."""
    if is_session_request():
        user = sessions.authenticate_session(*request_session_args())
    else:
        user = verify_api_key(*basic_auth_pair(request.environ.get("HTTP_AUTHORIZATION")),
                              allow_webhook_access=allow_webhook_access)
    # A person back after a long absence gets the rows soft deactivation left out before their
    # request reads anything (actions/soft_deactivation.py). Long polls (the cached paths
    # below) read no messages, and their queue's /register came through here.
    if user.long_term_idle:
        # Imported here: it loads every model, which a restarted server leaves for later.
        from chat_appliance.actions.soft_deactivation import reactivate_if_idle

        reactivate_if_idle(user)
    g.user = user
    return user


# --- cached credentials for long polls ---------------------------------------------------------
# Every GET /events re-poll authenticates. Going to the database for it made hundreds of
# simultaneous re-polls queue on connection set-up (peewee opens connections under one lock),
# which dominated event latency with 500 clients. A long poll needs only the user's id, so the
# events endpoints check credentials against this cache. Entries live AUTH_CACHE_SECONDS, and
# are dropped at once when a key is regenerated, an account deactivated or an email changed.

AUTH_CACHE_SECONDS = 60

# Admin commands (`chat-appliance reset-api-key`, deactivation) run in another process. They touch
# this file of the instance folder when credentials change, and the server drops its whole cache
# when the file's time moves: one stat() per long poll, no database query.
CREDENTIALS_MARKER = "credentials.changed"


def set_credentials_marker(active, path):
    """Where runtime `active` signals and watches credential changes (the instance folder)."""
    active.credentials_marker.watch(path)


def _credentials():
    """The current runtime's credential cache, emptied first if an admin command changed
    credentials: one per app."""
    active = runtime.current()
    if active.credentials_marker.changed():
        active.credentials.clear()
    return active.credentials


@dataclass(frozen=True)
class CachedUser:
    """The little a long poll needs to know about its user."""

    id: int
    realm_id: int
    email: str


def basic_credentials(authorization):
    """(email lower-cased, api key) from an Authorization header; ("", "") when absent or not Basic."""
    auth = Authorization.from_header(authorization) if authorization else None
    if auth is None or auth.type != "basic":
        return "", ""
    return (auth.username or "").strip().lower(), auth.password or ""


def cached_basic_user(authorization):
    """The CachedUser for these Basic credentials if the cache vouches for them, else None.
    Never touches the database (the event loop of `serve` calls it)."""
    email, api_key = basic_credentials(authorization)
    entry = _credentials().get(email)
    if entry is not None and api_key and api_key_matches(entry[0], api_key):
        return entry[1]
    return None


def authenticate_basic(authorization):
    """The CachedUser for an Authorization header: from the cache, else checked against the
    database (and then cached). Raises the 401 errors of verify_api_key."""
    user = cached_basic_user(authorization)
    if user is not None:
        return user
    email, api_key = basic_credentials(authorization)
    full = verify_api_key(email, api_key)
    cached = CachedUser(full.id, full.realm_id, full.email)
    _credentials().put(email, (full.api_key, cached), AUTH_CACHE_SECONDS)
    return cached


def authenticate_request_cached():
    """Like authenticate_request, answering from the cache when the credentials match."""
    if is_session_request():
        g.user = sessions.authenticate_session_cached(*request_session_args())
        return g.user
    user = authenticate_basic(request.headers.get("Authorization"))
    g.user = user
    return user


# --- the web client's session on a request (web.sessions checks it) ------------------------------

# Links inside messages that the page's browser follows with its cookie: uploads and image
# previews (/thumbnail). Other clients send HTTP Basic there.
BROWSER_DOWNLOAD_PREFIXES = ("/user_uploads/", "/thumbnail")


def is_session_request():
    """/json/... always authenticates by session. A download a message links to does too when
    the browser sends the cookie and no Authorization header (images inside messages)."""
    if request.path.startswith("/json/"):
        return True
    return (request.path.startswith(BROWSER_DOWNLOAD_PREFIXES) and "Authorization" not in request.headers
            and SESSION_COOKIE in request.cookies and request.method in SAFE_METHODS)


def request_session_args():
    """(cookie token, method, CSRF header) of this request, as web.sessions takes them."""
    return request.cookies.get(SESSION_COOKIE), request.method, request.headers.get(CSRF_HEADER)


def set_session_cookie(response, token, lifetime_seconds):
    """HttpOnly (no script reads it), SameSite=Lax, Secure when the page came over HTTPS."""
    response.set_cookie(SESSION_COOKIE, token, max_age=lifetime_seconds, httponly=True, samesite="Lax",
                        secure=request.is_secure, path="/")


def clear_session_cookie(response):
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Lax", secure=request.is_secure)


# --- password sign-in ---------------------------------------------------------------------------


def authenticate_by_password(email, password):
    """The active human account `email` (with LDAP: a user name or an email) if `password` is its
    password; every sign-in path (POST /fetch_api_key, the web client's login form) goes through
    here. With LDAP on, the directory is asked first; a name it does not know falls through to the
    passwords kept here when EmailAuthBackend is on too, so accounts outside the directory keep
    theirs (Zulip tries its backends in turn the same way).

    Failed attempts count toward the account's authenticate_by_username limit; once it is used
    up, even the right password is refused until the window ends. An unknown email costs the same
    hashing work as a known one, and a deactivated account gives the same answer whether or not
    the password was right, so neither timing nor the error tells an attacker anything."""
    auth = auth_settings()
    if auth.ldap is not None and email:
        user = authenticate_by_ldap(auth.ldap, email, password)
        if user is not None:
            return user
    if not auth.email:
        check_login_allowed(email, None)
        record_failed_login(email, None)
        raise AuthenticationFailedError()
    user = models.UserProfile.get_by_login_email(email) if email else None
    check_login_allowed(email, user)
    if user is None or user.is_bot or not user.password:
        passwords.check_password_against_dummy(password, password_method())
        matches = False
    else:
        matches = passwords.check_password(user.password, password)
    if not matches or not user.is_active:
        record_failed_login(email, user)
        raise AuthenticationFailedError()
    return user


def authenticate_by_ldap(settings, login, password):
    """The account of the one directory entry `login` names, once a bind as that entry with
    `password` succeeds: created as a member on first sign-in, its name taken from the directory.
    None when the directory has no such entry (or cannot be reached), so that the next backend
    may answer; AuthenticationFailedError when the entry refuses the password or the account is
    deactivated."""
    # Loaded at the first LDAP sign-in: a server answers /server_settings before it loads the
    # account models (tests/test_lazy_imports.py), and ldap3 is needed only here.
    from chat_appliance.actions.external_auth import account_for_email, do_create_external_user, do_sync_full_name
    from chat_appliance.clients.ldap_directory import DirectoryUnavailable, check_password, find_person

    try:
        person = find_person(settings, login)
    except DirectoryUnavailable:
        return None
    if person is None or not person.email:
        return None
    realm = instance_realm()
    user = account_for_email(realm, person.email) if realm is not None else None
    check_login_allowed(person.email, user)
    if realm is None or not check_password(settings, person, password):
        record_failed_login(person.email, user)
        raise AuthenticationFailedError()
    if user is None:
        try:
            return do_create_external_user(realm, person.email, person.full_name, password_method())
        except JsonableError:  # an address Zulip's rules refuse (or a race on the same address)
            raise AuthenticationFailedError() from None
    if not user.is_active:
        raise AuthenticationFailedError()
    if settings.manages_name:
        do_sync_full_name(user, person.full_name)
    return user
