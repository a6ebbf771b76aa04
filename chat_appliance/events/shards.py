"""Events across shards: several `serve --shard-id K` processes on one PostgreSQL database.

Publishing (events/bus.py) hands each event to `ShardLink.publish`, which runs
`pg_notify('chat_events', payload)` on the publisher's own database connection: inside the
action's write transaction, PostgreSQL delivers the notification only when that transaction
commits, and never if it rolls back, so the rule "events go out after commit" holds across
processes as it does in one. A payload over PostgreSQL's 8000-byte limit is written to the
`event_log` table (migration 114) in the same transaction, and only its id is notified; rows
older than EVENT_LOG_KEEP_SECONDS are pruned by the publishers.

Every shard, the publisher's own included, keeps one connection outside the pool in
`LISTEN chat_events` (a thread per shard) and hands every notification to its queue manager,
which delivers to the queues it holds and ignores the others. All queue deliveries go through
that one channel, in the order PostgreSQL delivers notifications (commit order; writers commit
one at a time under the writer lock), so a queue receives its events in commit order whichever
shard committed them.

A listener that loses its connection cannot know what it missed: on reconnecting it drops
every queue its shard holds, and their clients get BAD_EVENT_QUEUE_ID and register again, as
after a restart.

Besides events, the channel carries two control messages: "delete this queue" (DELETE /events
received by a shard that does not hold the queue) and nothing else yet.
"""

from __future__ import annotations

from typing import Any, Callable

import json
import logging
import zlib
import select
import threading
import time

from chat_appliance.db import runtime
from chat_appliance.lib.cache_events import HARMLESS_EVENTS, INVALIDATING_EVENTS
from chat_appliance.models import database

log = logging.getLogger(__name__)

CHANNEL = "chat_events"
# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; larger events go through event_log.
NOTIFY_LIMIT = 7900
# event_log rows are read by every listener within moments of their commit; kept this long.
EVENT_LOG_KEEP_SECONDS = 300
# Prune event_log every this many large payloads.
PRUNE_EVERY = 50
# How long the listener waits on its socket before checking whether it should stop.
POLL_SECONDS = 0.5
# Every this many seconds a shard writes whom it holds message queues for (shard_queue_holder);
# another shard's word counts for HOLDER_VALID_SECONDS (a dead shard's stops counting).
HOLDER_REFRESH_SECONDS = 10.0
HOLDER_VALID_SECONDS = 35.0


# Raising the cache generation (an upsert: a database copied in without the row still works).
BUMP_GENERATION = ("INSERT INTO shard_cache_generation (id, value) VALUES (1, 1) ON CONFLICT (id)"
                   " DO UPDATE SET value = shard_cache_generation.value + 1")
# Events that change nothing a cache holds: lib/messages.py's list, less those that change what
# the render contexts (lib/rendering.py) or the alert-word matchers hold.
KEEPS_CACHES = (HARMLESS_EVENTS - INVALIDATING_EVENTS) - {"alert_words"}


def changes_cached_data(event: dict[str, Any]) -> bool:
    """Whether an event announces a change that may make a cache of another shard stale."""
    return event.get("type") not in KEEPS_CACHES


def _plain(value: Any) -> Any:
    """JSON for what events hold besides JSON types (sets and tuples become lists)."""
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def encode(shard_id: str, event: dict[str, Any], user_ids: list[int]) -> str:
    """A notification's payload: origin shard, audience, event."""
    return json.dumps({"s": shard_id, "u": user_ids, "e": event}, separators=(",", ":"), default=_plain,
                      ensure_ascii=False)


def restore_keys(event: dict[str, Any]) -> dict[str, Any]:
    """JSON made the user-id keys of the per-user flag maps strings; the queues look them up by
    int."""
    for key in ("flags", "user_flags"):
        value = event.get(key)
        if isinstance(value, dict):
            event[key] = {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in value.items()}
    return event


class ShardLink:
    """One shard's link to the others: publishes its events through NOTIFY and listens for
    everyone's.

    `queues` is the shard's QueueManager (called as a bus listener: event, user_ids).
    `remote_listeners` also receive the events of other shards (the scheduler's wake-up); the
    listeners with side effects that must happen once (outgoing webhooks, missed-message mail)
    stay local to the shard that made the change."""

    def __init__(self, shard_id: str, queues: Any, connect: Callable[[], Any], *,
                 reconnect_seconds: float = 1.0) -> None:
        self.shard_id = shard_id
        self.queues = queues
        self.remote_listeners: list[Any] = []
        self.reconnect_seconds = reconnect_seconds
        # Opens a connection of the link's own, in autocommit (backends.postgres.autocommit_connection).
        self._connect = connect
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._published_large = 0
        self._lock = threading.Lock()
        self._control: Any = None  # a connection for control messages sent outside any transaction
        # Set once LISTEN is in place (and again after every reconnection): tests and start-up wait on it.
        self.listening = threading.Event()
        # How many times the listener lost its connection (and dropped its queues).
        self.reconnections = 0
        # The Leadership on the shard's name that app.py took (released at stop).
        self.name_lock: Any = None

    # --- publishing -----------------------------------------------------------------------

    def publish(self, event: dict[str, Any], user_ids: list[int]) -> None:
        """NOTIFY every shard of `event` on this thread's database connection (inside a write
        transaction: delivered at its commit)."""
        payload = encode(self.shard_id, event, list(user_ids))
        if len(payload.encode()) > NOTIFY_LIMIT:
            cursor = database.execute_sql("INSERT INTO event_log (payload, created) VALUES (%s, %s) RETURNING id",
                                          (payload, time.time()))
            (row_id,) = cursor.fetchone()
            payload = json.dumps({"s": self.shard_id, "id": row_id})
            with self._lock:
                self._published_large += 1
                prune = self._published_large % PRUNE_EVERY == 0
            if prune:
                database.execute_sql("DELETE FROM event_log WHERE created < %s",
                                     (time.time() - EVENT_LOG_KEEP_SECONDS,))
        if changes_cached_data(event):
            # In the same transaction: visible to every shard's next cache read once it commits.
            database.execute_sql(BUMP_GENERATION + "; SELECT pg_notify(%s, %s)", (CHANNEL, payload))
        else:
            database.execute_sql("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    @staticmethod
    def stale_check() -> Callable[[], bool]:
        """A check for one cache (Runtime.share_caches): whether shard_cache_generation moved
        since this check last read it. One query, on the reading thread's connection."""
        seen: list[Any] = [None]
        lock = threading.Lock()

        def stale() -> bool:
            row = database.execute_sql("SELECT value FROM shard_cache_generation WHERE id = 1").fetchone()
            value = row[0] if row else 0
            with lock:
                changed, seen[0] = value != seen[0], value
            return changed

        return stale

    def send_control(self, message: dict[str, Any]) -> None:
        """A control message to every shard (itself included), at once."""
        payload = json.dumps({"s": self.shard_id, "c": message}, separators=(",", ":"))
        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._control is None or self._control.closed:
                        self._control = self._connect()
                    with self._control.cursor() as cursor:
                        cursor.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
                    return
                except Exception:  # a connection broken by a database restart: one more try
                    self._control = None
                    if attempt == 2:
                        raise

    def delete_remote_queue(self, queue_id: str, user_id: int) -> None:
        """Ask the shard holding `queue_id` to delete it if it belongs to `user_id`."""
        self.send_control({"op": "delete_queue", "queue_id": queue_id, "user_id": user_id})

    # --- listening ------------------------------------------------------------------------

    def start(self, active: runtime.Runtime | None = None, wait: float = 10.0) -> ShardLink:
        """Start the listener thread (with `active` as its runtime), and wait until it listens."""
        self._runtime = active
        self._thread = threading.Thread(target=self._run, name=f"shard-{self.shard_id}-listener", daemon=True)
        self._thread.start()
        self.listening.wait(wait)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.name_lock is not None:
            self.name_lock.release()
        with self._lock:
            if self._control is not None:
                try:
                    self._control.close()
                except Exception:  # noqa: BLE001 - closing a broken connection
                    pass
                self._control = None

    def _run(self):
        token = runtime.activate(self._runtime) if self._runtime is not None else None
        try:
            first = True
            while not self._stopping.is_set():
                try:
                    conn = self._connect()
                except Exception as error:  # the database is down: try again
                    log.warning("shard %s: cannot connect to listen (%s); retrying", self.shard_id, error)
                    self._stopping.wait(self.reconnect_seconds)
                    continue
                try:
                    with conn.cursor() as cursor:
                        cursor.execute(f"LISTEN {CHANNEL}")
                    if not first:
                        # Whatever was published while we were not listening is lost for our queues.
                        self.reconnections += 1
                        log.warning("shard %s: listener reconnected; dropping its event queues", self.shard_id)
                        self.queues.clear()
                    first = False
                    self.listening.set()
                    self._listen(conn)
                except Exception as error:  # noqa: BLE001 - a lost connection: reconnect
                    if not self._stopping.is_set():
                        log.warning("shard %s: listener connection lost (%s)", self.shard_id, error)
                finally:
                    self.listening.clear()
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001
                        pass
                if not self._stopping.is_set():
                    self._stopping.wait(self.reconnect_seconds)
        finally:
            if token is not None:
                runtime.deactivate(token)

    def refresh_holders(self, conn: Any) -> None:
        """Write whom this shard holds message queues for (and no one else) to shard_queue_holder."""
        online = sorted(self.queues.online_user_ids())
        with conn.cursor() as cursor:
            cursor.execute("DELETE FROM shard_queue_holder WHERE shard = %s AND NOT (user_id = ANY(%s))",
                           (self.shard_id, online))
            if online:
                cursor.execute(
                    "INSERT INTO shard_queue_holder (user_id, shard, seen)"
                    " SELECT u, %s, extract(epoch FROM clock_timestamp()) FROM unnest(%s::int[]) AS u"
                    " ON CONFLICT (user_id, shard) DO UPDATE SET seen = EXCLUDED.seen",
                    (self.shard_id, online))

    def holds_queue_elsewhere(self, user_id: int) -> bool:
        """Whether another shard said lately that it holds a message queue of this user."""
        cursor = database.execute_sql(
            "SELECT 1 FROM shard_queue_holder WHERE user_id = %s AND shard <> %s"
            " AND seen > extract(epoch FROM clock_timestamp()) - %s",
            (user_id, self.shard_id, HOLDER_VALID_SECONDS))
        return cursor.fetchone() is not None

    def _listen(self, conn):
        refreshed = 0.0
        while not self._stopping.is_set():
            if time.monotonic() - refreshed >= HOLDER_REFRESH_SECONDS:
                refreshed = time.monotonic()
                self.refresh_holders(conn)
            readable, _w, _x = select.select([conn], [], [], POLL_SECONDS)
            if not readable:
                continue
            conn.poll()
            while conn.notifies:
                notification = conn.notifies.pop(0)
                try:
                    self.handle(notification.payload, conn)
                except Exception:  # one bad payload must not stop the listener
                    log.exception("shard %s: could not handle a notification", self.shard_id)

    def handle(self, payload: str, conn: Any = None) -> None:
        """One notification: an event (inline or by event_log id) or a control message."""
        message = json.loads(payload)
        if "c" in message:
            self._control_message(message["c"])
            return
        if "id" in message:
            with conn.cursor() as cursor:
                cursor.execute("SELECT payload FROM event_log WHERE id = %s", (message["id"],))
                row = cursor.fetchone()
            if row is None:
                log.warning("shard %s: event_log row %s is gone", self.shard_id, message["id"])
                return
            message = json.loads(row[0])
        event = restore_keys(message["e"])
        user_ids = message["u"]
        self.queues(event, user_ids)
        if message.get("s") != self.shard_id:
            for listener in list(self.remote_listeners):
                try:
                    listener(event, user_ids)
                except Exception:  # noqa: BLE001 - as bus._deliver: a listener must not stop the others
                    log.exception("remote event listener failed for %s", event.get("type"))

    def _control_message(self, control):
        if control.get("op") == "delete_queue":
            queue = self.queues.queues.get(control.get("queue_id"))
            if queue is not None and queue.user_id == control.get("user_id"):
                self.queues.delete(queue.id)


def shard_lock_key(shard_id: str) -> int:
    """The advisory lock a shard holds while it runs: two processes with one name would each
    take the other's queues for their own."""
    return 0x5348_0000_0000_0000 + zlib.crc32(shard_id.encode())


# Key of the session-level advisory lock whose holder runs the once-only background work
# (scheduled messages and reminders): any constant other than the writer lock's.
LEADER_LOCK_KEY = 0x63686C64  # "chld"


class Leadership:
    """One elected shard among several: whoever holds a PostgreSQL session-level advisory lock on
    a connection of its own. The lock goes with that connection, so a shard that dies (even
    kill -9) or loses the database gives it up, and another takes it at its next `held()`."""

    def __init__(self, connect: Callable[[], Any], key: int = LEADER_LOCK_KEY):
        self.key = key
        self._connect = connect
        self._conn: Any = None
        self._holding = False
        self._lock = threading.Lock()

    def held(self) -> bool:
        """Whether this process is the leader now (taking the lock if it is free)."""
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                with self._conn.cursor() as cursor:
                    if self._holding:
                        cursor.execute("SELECT 1")  # still connected, so still holding it
                    else:
                        cursor.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))
                        self._holding = bool(cursor.fetchone()[0])
                return self._holding
            except Exception:  # noqa: BLE001 - a lost connection: not the leader until it is back
                log.warning("leader election: database connection lost", exc_info=True)
                self.release()
                return False

    def release(self) -> None:
        """Give up leadership (close the connection)."""
        conn, self._conn = self._conn, None
        self._holding = False
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass
