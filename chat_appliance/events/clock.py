"""The time the event queues read: when a queue was last used, when a waiting poll gets its
heartbeat, when a saved queue was written.

`SystemClock` is the real one. `ManualClock` moves only when told to (`advance`), so that a test
can expire a queue or end a poll's wait without sleeping: its timers and waits end when the
clock passes their deadline, not when real time does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import heapq
import itertools
import threading
import time

if TYPE_CHECKING:
    import asyncio


class SystemClock:
    """Real time: the monotonic clock for durations, the wall clock for what is saved on disk."""

    monotonic = staticmethod(time.monotonic)
    time = staticmethod(time.time)

    @staticmethod
    def wait(event: threading.Event, seconds: float) -> bool:
        """Wait for a threading.Event at most `seconds`; whether it was set."""
        return event.wait(seconds)

    @staticmethod
    def call_later(loop: asyncio.AbstractEventLoop, seconds: float,
                   callback: Callable[[], object]) -> asyncio.TimerHandle:
        """callback() on the event loop after `seconds`; returns a handle with cancel()."""
        return loop.call_later(seconds, callback)


class _Timer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback):
        self.callback = callback
        self.cancelled = False

    def cancel(self):
        self.cancelled = True


class ManualClock:
    """A clock for tests: time stands still until `advance` moves it; waits and loop timers
    whose deadline it passes end then. Safe to use from several threads."""

    # How often a thread waiting on this clock looks at its event (Event.set cannot notify us).
    POLL_SECONDS = 0.01

    def __init__(self, start=1000.0, wall_start=1_800_000_000.0):
        self._now = start
        self._wall_offset = wall_start - start
        self._changed = threading.Condition()
        self._timers = []  # heap of (deadline, sequence, loop, timer)
        self._sequence = itertools.count()

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._now + self._wall_offset

    def advance(self, seconds: float) -> None:
        """Move time forward; fire the loop timers now due (on their loops), end the waits now due."""
        with self._changed:
            self._now += seconds
            due = []
            while self._timers and self._timers[0][0] <= self._now:
                due.append(heapq.heappop(self._timers))
            self._changed.notify_all()
        for _deadline, _seq, loop, timer in due:
            if not timer.cancelled and not loop.is_closed():
                loop.call_soon_threadsafe(self._fire, timer)

    @staticmethod
    def _fire(timer):
        if not timer.cancelled:
            timer.callback()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        deadline = self._now + seconds
        with self._changed:
            while not event.is_set() and self._now < deadline:
                self._changed.wait(self.POLL_SECONDS)
        return event.is_set()

    def call_later(self, loop: asyncio.AbstractEventLoop, seconds: float, callback: Callable[[], object]) -> _Timer:
        timer = _Timer(callback)
        with self._changed:
            heapq.heappush(self._timers, (self._now + seconds, next(self._sequence), loop, timer))
        return timer
