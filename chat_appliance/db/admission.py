"""One worker thread runs the app's Python at a time; the others wait their turn in order.

Python runs one thread at a time anyway (the GIL), but SQLite's driver lets go of the GIL around
every statement it steps, and with sixteen busy worker threads each of those moments handed the
interpreter to another thread: about 210 thread switches per send, which doubled each send's CPU
time. With this turn, a worker that lets go of the GIL for a few
microseconds finds nobody else waiting for it and carries on. In-process, 16 threads sending to a
50-subscriber channel went from 488 to 700 sends/s; with two turns at once, 631.

A worker gives its turn up while it waits on something that another thread has to finish, or
that runs outside the GIL for long: the writer lock and the COMMIT of a group commit
(backends/group_commit.py), a streamed response (wsgi_bridge.py), password hashing
(lib/passwords.py), calls to the push notification service, a long poll waiting in a thread.
The worker takes a turn again afterwards.

A slow request must not hold everyone up: a request that has had the turn for PATIENCE_SECONDS
(a 40 ms search, a large export, a password hash, a stalled disk) no longer counts, and waiting
workers go ahead beside it, as they would without turns. Threads that never took a turn (the
Flask test client, the event loop, CLI commands, service-bot workers) are not affected.

Requests that arrive while a worker holds the turn wait in the WSGI bridge's backlog, and that
worker answers them one after another before giving the turn up (server/wsgi_bridge.py): waking
a thread per request and then waiting for the turn cost more than a trivial request itself. The
holder stops and gives the turn up when another thread waits for it (`waiters`), so that a late
request's own worker is never passed over.

A worker waiting for the writer lock keeps its turn for up to the patience: the lock's holder
is nearly always a COMMIT that ends within a millisecond or two, and another worker given the
turn meanwhile would soon wait for the same lock, handing the turn on again.

Only on SQLite (backends: WORKERS_TAKE_TURNS), whose queries run in this process. On PostgreSQL
every query waits on the network, and a turn held through those waits would hold everyone up.
"""

from __future__ import annotations

from typing import Any

import threading
import time

PATIENCE_SECONDS = 0.010


class Turns:
    """The turn to run the app's Python: one holder; the next waiter watches the holder's time."""

    def __init__(self, patience=PATIENCE_SECONDS):
        self.patience = patience
        self._turn = threading.Lock()
        # Only the next waiter in line watches the clock; the others wait for it without polling.
        self._next = threading.Lock()
        self._holder = None  # (thread ident, time.monotonic() when it took the turn)
        self._local = threading.local()
        # Threads in take(): a holder that could go on with more work leaves the turn to them.
        self.waiters = 0
        self._count = threading.Lock()

    def holding(self) -> bool:
        """Whether this thread holds the turn."""
        return getattr(self._local, "held", False)

    def take(self) -> None:
        """Wait for the turn, or until its holder has had it for longer than the patience."""
        with self._count:
            self.waiters += 1
        try:
            self._take()
        finally:
            with self._count:
                self.waiters -= 1

    def _take(self) -> None:
        with self._next:
            while True:
                holder = self._holder
                held_for = time.monotonic() - holder[1] if holder is not None else 0.0
                if held_for > self.patience:
                    self._local.held = False
                    return  # the holder is slow: run beside it
                if self._turn.acquire(timeout=self.patience - held_for + 0.001):
                    break
        self._holder = (threading.get_ident(), time.monotonic())
        self._local.held = True

    def held_since(self) -> float | None:
        """When the holder took the turn, or began its current request (renew): time.monotonic();
        None when nobody holds it."""
        holder = self._holder
        return holder[1] if holder is not None else None

    def give_back(self) -> None:
        """End this thread's turn (nothing if it runs without one)."""
        if self.holding():
            self._local.held = False
            self._holder = None
            self._turn.release()

    def renew(self) -> None:
        """The holder starts on another request in the same turn: its time runs from now."""
        if self.holding():
            self._holder = (threading.get_ident(), time.monotonic())

    def set_wait_hooks(self, on_wait: Any = None, on_resume: Any = None) -> None:
        """Callables this thread's waits (waiting_on_others) call after giving the turn up and
        after taking it again; None to stop (the WSGI bridge: server/wsgi_bridge.py)."""
        self._local.hooks = (on_wait, on_resume) if on_wait is not None else None

    # --- answers that wait for a group commit (backends/group_commit.py, server/wsgi_bridge.py) ---

    def allow_deferred_commits(self, allowed: bool) -> None:
        """Whether this thread's current request may leave its deferrable write uncommitted, its
        answer held until the commit (set by the WSGI bridge around each request it runs)."""
        self._local.defer = allowed
        self._local.debt = None

    def deferring(self) -> bool:
        """Whether a deferrable write of this thread's request may be left for a later commit."""
        return getattr(self._local, "defer", False)

    def owe(self, debt: Any) -> None:
        """Note the commit this thread's request now waits for (a group commit's batch)."""
        self._local.debt = debt

    def debt(self) -> Any:
        """The commit this thread's request waits for, or None."""
        return getattr(self._local, "debt", None)

    def waiting_on_others(self) -> Any:
        """A context manager: give the turn up for a wait on another thread, then take it again."""
        return _Waiting(self)


class _Waiting:
    __slots__ = ("turns", "held")

    def __init__(self, turns):
        self.turns = turns
        self.held = False

    def __enter__(self):
        self.held = self.turns.holding()
        if self.held:
            self.turns.give_back()
            hooks = getattr(self.turns._local, "hooks", None)
            if hooks is not None:
                hooks[0]()

    def __exit__(self, *exc):
        if self.held:
            self.turns.take()
            hooks = getattr(self.turns._local, "hooks", None)
            if hooks is not None:
                hooks[1]()
        return False


# One per process: there is one interpreter lock to share.
turns = Turns()
