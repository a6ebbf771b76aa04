"""Which instance this thread works for: the state one app (or one command) owns.

A `Runtime` holds an open database with its backend module, the event listeners, and every
cache of the app (each a typed attribute below; db/caches.py has their kinds). `create_app`
makes one per app (kept on its AppState) and makes it current for each of its requests; code
outside a request (the command line, tests calling actions, bot worker threads) works with the
latest one installed. Two apps in one process thus share no database handle, listener or cache:
no module of the package keeps a cache of its own (tests/test_app_state.py checks). The models
reach their database through `models.database`, which asks `current()`.

Configuration reaches actions as arguments from the views. The one value below the HTTP layer
needs outside any request (whether rendering previews images: messages are rendered by bot
workers, the scheduler and imports too) is given to the Runtime when it is made.

This module imports nothing from the package but db/caches.py, which imports nothing: every
other floor may use it.
"""

import contextvars

from chat_appliance.db.caches import ChangeMarker, ExpiringCache, GenerationCache

# Cache sizes: bounded, so that memory stays within the server's budget whatever the traffic.
CREDENTIALS_CACHE_SIZE = 10_000
LOGIN_ID_CACHE_SIZE = 10_000
SESSION_CACHE_SIZE = 10_000
RENDER_CONTEXT_CACHE_SIZE = 64
# Message objects, each about 1-2 KB.
MESSAGE_CACHE_SIZE = 2000

_current = contextvars.ContextVar("chat_appliance_runtime", default=None)
_latest = {"runtime": None}


class Runtime:
    """An instance's open database and what lives beside it for the life of the app."""

    def __init__(self, database, backend, *, inline_image_preview=True):
        self.database = database
        self.backend = backend
        self.listeners = []
        # web/auth.py: Basic credentials of long polls (login email -> (API key, CachedUser)).
        self.credentials = ExpiringCache(CREDENTIALS_CACHE_SIZE)
        # web/auth.py: login email -> account id, where to look first for a Basic user name.
        self.login_ids = ExpiringCache(LOGIN_ID_CACHE_SIZE)
        # web/auth.py: the instance file admin commands touch when they change credentials.
        self.credentials_marker = ChangeMarker()
        # web/sessions.py: browser sessions of long polls (token digest -> (SessionUser, CSRF token)).
        self.sessions = ExpiringCache(SESSION_CACHE_SIZE)
        # lib/rendering.py: what rendering needs to know of each organization (realm id -> data).
        self.render_contexts = GenerationCache(RENDER_CONTEXT_CACHE_SIZE)
        # lib/messages.py: message objects by (message id, shape).
        self.messages = GenerationCache(MESSAGE_CACHE_SIZE)
        # INLINE_IMAGE_PREVIEW: whether messages rendered for this app preview linked images.
        self.inline_image_preview = bool(inline_image_preview)

    def close(self):
        """Close this thread's connection and release what the backend holds (SQLite's keeper
        connection)."""
        self.backend.close_database(self.database)
        if _latest["runtime"] is self:
            _latest["runtime"] = None


def install(runtime):
    """Make `runtime` the one used outside requests (the latest app or command)."""
    _latest["runtime"] = runtime


def current():
    """The runtime of this thread's request, else the latest installed (None before any)."""
    return _current.get() or _latest["runtime"]


def activate(runtime):
    """Make `runtime` current in this context (a request); returns the token for `deactivate`."""
    return _current.set(runtime)


def deactivate(token):
    """Undo an `activate`."""
    _current.reset(token)
