"""The scheduler: a background thread of the server process that sends scheduled messages and
reminders when they are due, including those that fell due while the server was down (it
delivers everything overdue as soon as it starts, or, in `serve`, a second later).

It sleeps until the next message is due (at most `max_wait` seconds, so that a clock change or a
row written by another process is noticed), and wakes early when a scheduled_messages or reminders
event says the schedule changed. The clock is injectable: tests move time without waiting.
"""

from __future__ import annotations

import logging
import threading
import time

from chat_appliance.events import bus
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.web.context import EXTENSION
from chat_appliance.models import database

log = logging.getLogger(__name__)

SCHEDULE_EVENT_TYPES = ("scheduled_messages", "reminders")
# A shard that is not the leader asks for the leadership this often.
FOLLOWER_WAIT_SECONDS = 3.0


class Scheduler:
    def __init__(self, app, *, clock=time.time, max_wait=60.0, leadership=None, first_pass_after=0.0):
        self.app = app
        self.first_pass_after = first_pass_after
        # With shards, only the shard holding the leadership (events/shards.py) delivers: a
        # message is sent once, whichever shards run. Others ask again every few seconds, so that
        # a dead leader's work moves to another shard.
        self.leadership = leadership
        # The app's limits, which messages sent when due must respect as they would if sent now.
        self.limits = app.extensions[EXTENSION].limits
        self.clock = clock
        self.max_wait = max_wait
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = None

    def run_once(self) -> int | None:
        """Deliver what is due now; returns when the next message is due (None: nothing pending)."""
        # The schedule's model loads the models (models/__init__.py): here, not at start-up.
        from chat_appliance.lib.scheduled_messages import next_due_timestamp

        at = int(self.clock())
        with self.app.app_context(), database.connection_context():
            next_due = next_due_timestamp()
            if next_due is None or next_due > at:
                return next_due
            # Sending loads the whole send path (rendering, flags, alert words...): a server
            # with nothing scheduled, the usual case, never needs it.
            from chat_appliance.actions.scheduled_messages import deliver_due_messages

            deliver_due_messages(at, self.limits)
            return next_due_timestamp()

    def seconds_until(self, next_due: int | None) -> float:
        if next_due is None:
            return self.max_wait
        return min(self.max_wait, max(0.0, next_due - self.clock()))

    def _loop(self):
        # serve's first pass waits a moment (or for a change to the schedule): a restarted server
        # answers its first requests before this thread loads the models (a shorter restart).
        if self.first_pass_after:
            self._wake.wait(self.first_pass_after)
        while not self._stopping.is_set():
            # Cleared before the schedule is read, never between the wait and the read: a wake-up
            # that lands after this line either is seen by the read below (its row was committed
            # before the event was published) or ends the wait below at once.
            self._wake.clear()
            if self.leadership is not None and not self.leadership.held():
                self._wake.wait(min(self.max_wait, FOLLOWER_WAIT_SECONDS))
                continue
            try:
                wait = self.seconds_until(self.run_once())
            except Exception as error:  # a bad row must not stop deliveries for good
                log_failure(log, error, "scheduled message delivery failed")
                wait = min(self.max_wait, 5.0)
            self._wake.wait(wait)

    def __call__(self, event, user_ids):
        """Bus listener: a change to someone's schedule may move the next due time earlier."""
        if event.get("type") in SCHEDULE_EVENT_TYPES:
            self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> Scheduler:
        bus.add_listener(self)
        self._thread = threading.Thread(target=self._loop, name="scheduler", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        bus.remove_listener(self)
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.leadership is not None:
            self.leadership.release()
