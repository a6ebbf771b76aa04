"""Which instance this thread works for: the state one app (or one command) owns.

A `Runtime` holds an open database with its backend module, the event listeners, and the
credential cache of long polls. `create_app` makes one per app (kept on its AppState) and makes
it current for each of its requests; code outside a request (the command line, tests calling
actions, bot worker threads) works with the latest one installed. Two apps in one process thus
share no database handle, listener or cache. The models reach their database through
`models.database`, which asks `current()`.

This module imports nothing from the package: every other floor may use it.
"""

from __future__ import annotations


import contextvars
import threading

_current: contextvars.ContextVar[Runtime | None] = contextvars.ContextVar("chat_appliance_runtime", default=None)
_latest: dict[str, Runtime | None] = {"runtime": None}


class Runtime:
    """An instance's open database and what lives beside it for the life of the app."""

    def __init__(self, database, backend):
        self.database = database
        self.backend = backend
        self.listeners = []
        self.credentials = {}
        self.credentials_lock = threading.Lock()
        # The few configuration values code below the HTTP layer reads (set by create_app).
        self.settings = {}

    def close(self) -> None:
        """Close this thread's connection and release what the backend holds (SQLite's keeper
        connection)."""
        self.backend.close_database(self.database)
        if _latest["runtime"] is self:
            _latest["runtime"] = None


def install(runtime: Runtime) -> None:
    """Make `runtime` the one used outside requests (the latest app or command)."""
    _latest["runtime"] = runtime


def current() -> Runtime:
    """The runtime of this thread's request, else the latest installed (None before any)."""
    return _current.get() or _latest["runtime"]  # type: ignore[return-value]  # callers run after install()


def activate(runtime: Runtime) -> contextvars.Token[Runtime | None]:
    """Make `runtime` current in this context (a request); returns the token for `deactivate`."""
    return _current.set(runtime)


def deactivate(token: contextvars.Token[Runtime | None]) -> None:
    """Undo an `activate`."""
    _current.reset(token)
