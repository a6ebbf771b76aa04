"""Which instance this thread works for: the state one app (or one command) owns.

A `Runtime` holds an open database with its backend module, the event listeners, and every
cache of the app (each a typed attribute, of one of the kinds at the end of this module).
`create_app` makes one per app (kept on its AppState) and makes it current for each of its
requests; code outside a request (the command line, tests calling actions, bot worker threads)
works with the latest one installed. Two apps in one process thus share no database handle, listener or cache:
no module of the package keeps a cache of its own (tests/server/test_app_state.py checks). The models
reach their database through `models.database`, which asks `current()`.

Configuration reaches actions as arguments from the views. The one value below the HTTP layer
needs outside any request (whether rendering previews images: messages are rendered by bot
workers, the scheduler and imports too) is given to the Runtime when it is made.

This module imports nothing from the package: every other floor may use it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable


import contextvars
import heapq
import os
import threading
import time
from collections import OrderedDict

# Cache sizes: bounded, so that memory stays within the server's budget whatever the traffic.
CREDENTIALS_CACHE_SIZE = 10_000
LOGIN_ID_CACHE_SIZE = 10_000
SESSION_CACHE_SIZE = 10_000
RENDER_CONTEXT_CACHE_SIZE = 64
# Message objects, each about 1-2 KB.
MESSAGE_CACHE_SIZE = 2000
# Compiled alert-word expressions, one per user who has words.
ALERT_WORD_CACHE_SIZE = 10_000
# Messages' conversations (channel, topic, recipient), for /register's unread messages: about
# 150 bytes each, topics shared.
CONVERSATION_CACHE_SIZE = 60_000
# Rows kept while the database, or its configuration, is unchanged (see Runtime.versions): per
# account, its row and what GET /users/me adds to it; what a send reads of its channel, groups and
# mutes. Entries are small tuples and frozensets.
SNAPSHOT_CACHE_SIZE = 10_000
SNAPSHOT_SECONDS = 600

_current: contextvars.ContextVar[Runtime | None] = contextvars.ContextVar("chat_appliance_runtime", default=None)
_latest: dict[str, Runtime | None] = {"runtime": None}


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
        # actions/alert_words.py: each user's compiled alert-word matcher (False: no words).
        self.alert_word_matchers = GenerationCache(ALERT_WORD_CACHE_SIZE)
        # events/state.py: message id -> (channel id, topic, recipient id), emptied after a move
        # or a deletion (lib/cache_events.py).
        self.conversations = FlatCache(CONVERSATION_CACHE_SIZE)
        # INLINE_IMAGE_PREVIEW: whether messages rendered for this app preview linked images.
        self.inline_image_preview = bool(inline_image_preview)
        # events/shards.py: this process's ShardLink when it is one shard of several (None: alone).
        self.shard: Any = None
        # (A number that moves with every commit to the database by anyone, one that moves with
        # every change to the configuration a send reads), each None where the engine cannot
        # tell cheaply (PostgreSQL, SQLite in memory): backends/sqlite.Versions.
        self.versions: Callable[[], tuple[int | None, int | None]] = (getattr(database, "versions_reader", None)
                                                                       or _no_versions)
        # web/auth.py, lib/snapshots.py: (kind, id) -> (the version read before the rows, what was
        # read). Valid only while versions() still answers that number.
        self.snapshots = ExpiringCache(SNAPSHOT_CACHE_SIZE)

    def share_caches(self, stale_checks: Callable[[], Callable[[], bool]]) -> None:
        """Make the caches safe beside other processes on one database (shards): the caches of
        data read from the database (messages, render contexts, alert-word matchers) ask a check
        made by `stale_checks()` before each read, and empty themselves when it says another
        process changed what they may hold; the caches of credentials and sessions keep nothing
        (a key regenerated or a session ended on another shard must count at once, and the
        checks would cost what they save)."""
        for cache in (self.credentials, self.login_ids, self.sessions, self.snapshots):
            cache.clear()
            cache.max_entries = 0
        for generation_cache in (self.render_contexts, self.messages, self.alert_word_matchers, self.conversations):
            generation_cache.clear()
            generation_cache.stale = stale_checks()

    def forget_sessions(self, user_id: int) -> None:
        """Drop one account's cached browser sessions (entries are (SessionUser, CSRF token))."""
        self.sessions.discard_where(lambda entry: entry[0].id == user_id)

    def forget_user(self, user_id: int) -> None:
        """Drop what the caches hold of one account (new key, deactivation, new email): its long
        polls' Basic credentials and its browser sessions, and touch the marker so that a server
        running beside this process (an admin command's) drops them too."""
        self.forget_sessions(user_id)
        self.credentials.discard_where(lambda entry: entry[1].id == user_id)
        self.credentials_marker.touch()

    def close_unused_connections(self, keep: int) -> int:
        """Close the pooled connections that no request took since the previous call, beyond
        the `keep` the pool hands out first; how many were closed. A burst of concurrent requests
        leaves a connection per worker in the pool (about half a MiB each on SQLite); called
        every few seconds (server/asgi.py), this gives them back once the burst is over.

        peewee's pool keeps idle connections in a heap of (created, return counter, connection)
        and hands out the oldest first; the counter grows with every return, so an entry whose
        counter is at most the previous call's has not been out since."""
        db = self.database
        with db._pool_lock:
            mark, db.unused_mark = getattr(db, "unused_mark", -1), db._heap_counter
            excess = len(db._connections) - keep
            if excess <= 0:
                return 0
            # The newest connections are handed out last, so they are the ones to go.
            unused = sorted((entry for entry in db._connections if entry[1] <= mark), reverse=True)[:excess]
            if not unused:
                return 0
            going = {id(entry[2]) for entry in unused}
            db._connections = [entry for entry in db._connections if id(entry[2]) not in going]
            heapq.heapify(db._connections)
        for _created, _counter, connection in unused:
            db._close_raw(connection)
        return len(unused)

    def close(self) -> None:
        """Close this thread's connection and release what the backend holds (SQLite's keeper
        connection)."""
        self.backend.close_database(self.database)
        if _latest["runtime"] is self:
            _latest["runtime"] = None


def _no_versions() -> tuple[None, None]:
    return None, None


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


# --- the kinds of cache a Runtime keeps --------------------------------------------------------
# Bounded and thread-safe. Nothing here knows what a cache holds; the modules that fill one say
# that (web/auth.py, web/sessions.py, lib/rendering.py, lib/messages.py).


class FlatCache:
    """GenerationCache's promise (nothing read before an invalidation is stored after it; the
    shards' staleness check) for many small values read thousands at a time: a plain dict, which
    the caller reads, emptied whole when a store would take it past `max_entries`. Keeping the
    least recently used order cost a third of a microsecond per key, as much as reading the value
    from the database's index."""

    def __init__(self, max_entries):
        self.max_entries = max_entries
        self.generation = 0
        self._entries: dict[Any, Any] = {}
        self._lock = threading.Lock()
        self.stale: Callable[[], bool] | None = None

    def entries(self) -> dict[Any, Any]:
        """The values by key, to read (not to change). A store adds to this dict in place; a
        clear, or a store past `max_entries`, puts a new one in its place."""
        if self.stale is not None and self.stale():
            self.clear()
        return self._entries

    def put_many(self, items: dict[Any, Any], generation: int) -> None:
        """Store values read at `generation`, unless the cache was invalidated since."""
        with self._lock:
            if generation != self.generation:
                return
            if len(self._entries) + len(items) > self.max_entries:
                self._entries = {}
            # In place: readers only look keys up, which a dict answers whole under the GIL.
            self._entries.update(items if len(items) <= self.max_entries
                                 else dict(list(items.items())[:self.max_entries]))

    def clear(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries = {}


class ExpiringCache:
    """A map whose entries live a given number of seconds, holding at most `max_entries`.

    Entries are kept in the order they were stored, and every lookup or store first drops the
    expired entries at the front: an expired entry goes within one lifetime of the entries stored
    before it (entries of one cache live about as long as each other), whether or not anyone asks
    for it again. When the cache is full, the oldest entry makes room."""

    def __init__(self, max_entries, clock=time.monotonic):
        self.max_entries = max_entries
        self.clock = clock
        self._entries = OrderedDict()  # key -> (expires, value)
        self._lock = threading.Lock()

    def _drop_expired_front(self, now):
        entries = self._entries
        while entries:
            key, (expires, _value) = next(iter(entries.items()))
            if expires > now:
                break
            del entries[key]

    def get(self, key: Any) -> Any:
        """The live value stored under `key`, else None (an expired entry is dropped)."""
        now = self.clock()
        with self._lock:
            self._drop_expired_front(now)
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= now:
                del self._entries[key]
                return None
            return entry[1]

    def put(self, key: Any, value: Any, seconds: float) -> None:
        """Keep `value` under `key` for `seconds` (nothing is kept for a lifetime of 0 or less)."""
        now = self.clock()
        with self._lock:
            self._entries.pop(key, None)
            self._drop_expired_front(now)
            if seconds <= 0 or self.max_entries <= 0:
                return
            while len(self._entries) >= self.max_entries:
                self._entries.popitem(last=False)
            self._entries[key] = (now + seconds, value)

    def __contains__(self, key):
        return self.get(key) is not None

    def pop(self, key: Any) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def discard_where(self, predicate: Callable[[Any], bool]) -> None:
        """Drop every entry whose value satisfies `predicate`."""
        with self._lock:
            for key in [k for k, (_expires, value) in self._entries.items() if predicate(value)]:
                del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self):
        with self._lock:
            return len(self._entries)


class GenerationCache:
    """Values by key, least recently used dropped first beyond `max_entries`, for data read from
    the database and dropped when it changes. A reader notes `generation` before it reads the
    database and hands it to `put_many`: if an invalidation came in between, what it read may be
    stale and is not stored, so nothing stale is ever put back."""

    def __init__(self, max_entries):
        self.max_entries = max_entries
        self.generation = 0
        self._entries = OrderedDict()
        self._lock = threading.Lock()
        # Shards (Runtime.share_caches): a callable saying whether another process changed the
        # data since it was last asked; the cache empties itself before a read when it says so.
        self.stale: Callable[[], bool] | None = None

    def _check(self):
        if self.stale is not None and self.stale():
            self.clear()

    def get(self, key: Any) -> Any:
        self._check()
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def get_many(self, keys: Iterable[Any]) -> dict[Any, Any]:
        """{key: value} for the keys present."""
        self._check()
        found = {}
        with self._lock:
            for key in keys:
                value = self._entries.get(key)
                if value is not None:
                    self._entries.move_to_end(key)
                    found[key] = value
        return found

    def put_many(self, items: Iterable[tuple[Any, Any]], generation: int) -> None:
        """Store (key, value) pairs read at `generation`, unless the cache was invalidated since."""
        with self._lock:
            if generation != self.generation:
                return
            for key, value in items:
                self._entries[key] = value
                self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __contains__(self, key):
        with self._lock:
            return key in self._entries

    def discard(self, key: Any) -> None:
        """Drop one key; readers that started before do not store what they read."""
        with self._lock:
            self.generation += 1
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries.clear()

    def __len__(self):
        with self._lock:
            return len(self._entries)


class ChangeMarker:
    """A file whose modification time tells the processes of one instance that something changed
    (credentials changed by an admin command while the server runs): `touch` it after a change,
    and ask `changed` before trusting what a cache holds. One stat() per question."""

    def __init__(self, path=None):
        self.path = None
        self.seen = None
        if path is not None:
            self.watch(path)

    def watch(self, path: str | os.PathLike[str]) -> None:
        """Signal and watch changes through `path` (a file of the instance folder)."""
        self.path = os.fspath(path)
        self.seen = self._time()

    def _time(self):
        try:
            return os.stat(self.path).st_mtime_ns if self.path else None
        except OSError:
            return None

    def changed(self) -> bool:
        """Whether the file moved since the last question or touch (True once per change)."""
        current = self._time()
        if current == self.seen:
            return False
        self.seen = current
        return True

    def touch(self) -> None:
        """Tell the instance's other processes (touch the file), if a path is watched."""
        if not self.path:
            return
        try:
            with open(self.path, "a"):
                os.utime(self.path)
        except OSError:
            return
        self.seen = self._time()
