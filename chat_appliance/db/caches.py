"""The kinds of cache a Runtime keeps for its app: bounded, thread-safe, and owned by one app.

Nothing here knows what it holds; the modules that fill a cache say that (web/auth.py,
web/sessions.py, lib/rendering.py, lib/messages.py). Like db/runtime.py, which makes one of each
per app, this module imports nothing from the package.
"""

import os
import threading
import time
from collections import OrderedDict


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

    def get(self, key):
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

    def put(self, key, value, seconds):
        """Keep `value` under `key` for `seconds` (nothing is kept for a lifetime of 0 or less)."""
        now = self.clock()
        with self._lock:
            self._entries.pop(key, None)
            self._drop_expired_front(now)
            if seconds <= 0:
                return
            while len(self._entries) >= self.max_entries:
                self._entries.popitem(last=False)
            self._entries[key] = (now + seconds, value)

    def __contains__(self, key):
        return self.get(key) is not None

    def pop(self, key):
        with self._lock:
            self._entries.pop(key, None)

    def discard_where(self, predicate):
        """Drop every entry whose value satisfies `predicate`."""
        with self._lock:
            for key in [k for k, (_expires, value) in self._entries.items() if predicate(value)]:
                del self._entries[key]

    def clear(self):
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

    def get(self, key):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def get_many(self, keys):
        """{key: value} for the keys present."""
        found = {}
        with self._lock:
            for key in keys:
                value = self._entries.get(key)
                if value is not None:
                    self._entries.move_to_end(key)
                    found[key] = value
        return found

    def put_many(self, items, generation):
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

    def discard(self, key):
        """Drop one key; readers that started before do not store what they read."""
        with self._lock:
            self.generation += 1
            self._entries.pop(key, None)

    def clear(self):
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

    def watch(self, path):
        """Signal and watch changes through `path` (a file of the instance folder)."""
        self.path = os.fspath(path)
        self.seen = self._time()

    def _time(self):
        try:
            return os.stat(self.path).st_mtime_ns if self.path else None
        except OSError:
            return None

    def changed(self):
        """Whether the file moved since the last question or touch (True once per change)."""
        current = self._time()
        if current == self.seen:
            return False
        self.seen = current
        return True

    def touch(self):
        """Tell the instance's other processes (touch the file), if a path is watched."""
        if not self.path:
            return
        try:
            with open(self.path, "a"):
                os.utime(self.path)
        except OSError:
            return
        self.seen = self._time()
