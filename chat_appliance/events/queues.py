"""In-process event queues: register, long-poll get, heartbeat, garbage collection, fan-out,
and saving them across a graceful restart.

One `QueueManager` per app (create_app keeps it on the app) listens on the app's bus. One lock guards every queue's state; it is
held only for list and dict operations, never while waiting. A long poll waits in one of two
ways: on the event loop of `chat-appliance serve` (`EventQueue.get_async`, a future per waiting
poll and no thread), or in a thread (`EventQueue.get`, used by the Flask view when the app runs
under a plain WSGI server or the test client). Nothing here touches the database.

When `serve` attaches its loop (`attach_loop`), the bus listener hands each published event to
the loop with `call_soon_threadsafe`, which runs callbacks in the order they were handed over:
publishing from any number of worker threads is thread-safe and keeps its order, and the fan-out
itself runs on the loop, where it resolves the waiting polls directly. Without a loop the
fan-out runs in the publishing thread.

Message events arrive on the bus in a compact, queue-independent form (see
`QueueManager.message_event_for`) and are shaped per queue: markdown or HTML content,
gravatar nulling, the receiving user's flags, `local_message_id` for the sender's queue. One
fan-out builds each distinct shape once and shares it between the queues that want it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import asyncio
import collections
import json
import logging
import os
import random
import secrets
import threading
from contextlib import contextmanager

from chat_appliance.db.admission import turns
from chat_appliance.events.clock import SystemClock
from chat_appliance.lib.errors import BadEventQueueIdError
from chat_appliance.lib import event_catalogue
from chat_appliance import models  # the message models load on first use (models/__init__.py)

if TYPE_CHECKING:
    import pathlib
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger(__name__)

# The file in the instance folder that holds the queues between a graceful stop and the next start.
DUMP_FILENAME = "event_queues.json"
# The layout of that file. Queues are restored one by one, each option taking its default when the
# file lacks it (see EventQueue.from_dump), so adding an option needs no new version: only a change
# that old files cannot be read under does.
DUMP_VERSION = 1
# Waiting polls woken per turn of the event loop during a fan-out (see QueueManager.schedule_wake).
WAKE_BATCH = 64
# A waiting poll gets its heartbeat after a wait drawn uniformly between this fraction of
# heartbeat_seconds and all of it (45 to 55 s by default, as Zulip does): after a restart, every
# client's poll starts at about the same moment, and equal waits would bring them all back at once.
HEARTBEAT_SPREAD = 10 / 55


def shard_of(queue_id: str) -> str | None:
    """The shard named at the start of a queue id ("K:..."), or None for an unsharded id."""
    head, sep, rest = queue_id.partition(":")
    return head if sep and rest.count(":") == 1 else None


# Registration options, as saved in the dump file.
QUEUE_OPTIONS = ("user_id", "realm_id", "user_email", "event_types", "narrow", "apply_markdown", "client_gravatar",
                 "all_public_streams", "client_capabilities", "idle_timeout")


class EventQueue:
    """One client's queue: its registration options, its undelivered events and its waiting polls.

    Every method expects to be called without the lock and takes it itself, except push,
    acknowledge and heartbeat, which the manager calls with the lock held.
    """

    def __init__(self, *, user_id, realm_id, user_email="", event_types=None, narrow=(), apply_markdown=False,
                 client_gravatar=True, all_public_streams=False, client_capabilities=None, idle_timeout=None,
                 lock=None, manager=None):
        self.clock = manager.clock if manager is not None else SystemClock()
        self.id = f"{int(self.clock.time())}:{secrets.token_hex(8)}"
        if manager is not None and manager.shard_id is not None:
            # The shard that holds it, first: the proxy routes GET/DELETE /events by it.
            self.id = f"{manager.shard_id}:{self.id}"
        self.user_id = user_id
        self.realm_id = realm_id
        self.user_email = user_email.lower()
        self.event_types = set(event_types) if event_types is not None else None
        self.narrow = [(op.lower(), operand) for op, operand in narrow]
        self.apply_markdown = apply_markdown
        self.client_gravatar = client_gravatar
        self.all_public_streams = all_public_streams
        self.client_capabilities = dict(client_capabilities or {})
        # Seconds without access before the queue is collected (register's idle_queue_timeout);
        # None: the manager's idle_seconds.
        self.idle_timeout = idle_timeout
        self.events = []
        self.next_event_id = 0
        self.last_access = self.clock.monotonic()
        self.waiters = []  # callables that wake one waiting poll
        self.closed = False
        self.lock = lock or threading.RLock()
        self.manager = manager

    def wants(self, event_type: str) -> bool:
        """Whether the client registered for this event type (None means every type)."""
        return self.event_types is None or event_type in self.event_types

    def push(self, event: JSONDict) -> None:
        """Append an event with the next id and wake the waiting polls. Lock held."""
        self.events.append(dict(event, id=self.next_event_id))
        self.next_event_id += 1
        self.wake()

    def wake(self) -> None:
        """Wake every waiting poll of this queue. Lock held."""
        waiters, self.waiters = self.waiters, []
        for wake in waiters:
            wake()

    def acknowledge(self, last_event_id: int | None) -> None:
        """Drop the events the client has seen (ids <= last_event_id). Lock held."""
        if last_event_id is not None and self.events and self.events[0]["id"] <= last_event_id:
            self.events = [e for e in self.events if e["id"] > last_event_id]

    def heartbeat(self) -> None:
        """Heartbeats take an id like any event, so the client's last_event_id acknowledges them. Lock held."""
        self.events.append(event_catalogue.heartbeat(self.next_event_id))
        self.next_event_id += 1

    def _closing(self):
        return self.manager is not None and self.manager.closing

    def _answer_now(self, last_event_id, dont_block):
        """With the lock held, as a poll starts: acknowledge what the client has, and the events
        to answer with at once, or None if the poll has to wait. A queue deleted since the poll
        looked it up (idle collection runs between QueueManager.access and here) is a bad queue
        id, as if the poll had come a moment later: waiting on it would end in an empty answer a
        heartbeat later, and the client would not know to register again."""
        if self.closed:
            raise BadEventQueueIdError(self.id)
        self.acknowledge(last_event_id)
        self.last_access = self.clock.monotonic()
        if self.events or dont_block:
            return list(self.events)
        if self._closing():
            self.heartbeat()
            return list(self.events)
        return None

    def _answer_after_wait(self):
        """With the lock held, as a waiting poll ends: its events, or a heartbeat if none came."""
        self.last_access = self.clock.monotonic()
        if not self.events and not self.closed:
            self.heartbeat()
        return list(self.events)

    def heartbeat_wait(self, heartbeat_seconds: float | None) -> float:
        """How long a poll waits before its heartbeat: heartbeat_seconds if given, else the manager's spread wait."""
        if heartbeat_seconds is not None:
            return heartbeat_seconds
        return self.manager.heartbeat_wait() if self.manager is not None else 55

    def get(self, last_event_id: int, *, dont_block: bool, heartbeat_seconds: float | None = None) -> list[JSONDict]:
        """Events newer than last_event_id: at once if any (or with dont_block), else after the
        next event arrives, else a heartbeat after heartbeat_seconds (by default the manager's
        spread wait). Waits in this thread."""
        woken = threading.Event()
        with self.lock:
            ready = self._answer_now(last_event_id, dont_block)
            if ready is not None:
                return ready
            self.waiters.append(woken.set)
        with turns.waiting_on_others():
            self.clock.wait(woken, self.heartbeat_wait(heartbeat_seconds))
        with self.lock:
            if woken.set in self.waiters:
                self.waiters.remove(woken.set)
            return self._answer_after_wait()

    async def get_async(self, last_event_id: int, *, dont_block: bool, heartbeat_seconds: float | None = None,
                        disconnected: Any = None) -> list[JSONDict] | None:
        """As get, waiting on the running event loop without a thread. `disconnected` gives an
        awaitable that completes when the client goes away: the poll then ends at once and
        None is returned (nothing is sent, nothing is lost: the events stay queued). It is a
        callable returning the awaitable, called only if the poll has to wait."""
        loop = asyncio.get_running_loop()
        with self.lock:
            ready = self._answer_now(last_event_id, dont_block)
            if ready is not None:
                return ready
            future = loop.create_future()
            loop_thread = threading.get_ident()

            def resolve(reason):
                if not future.done():
                    future.set_result(reason)

            def wake():
                if threading.get_ident() != loop_thread:
                    loop.call_soon_threadsafe(resolve, "event")
                elif self.manager is not None:
                    self.manager.schedule_wake(loop, resolve)
                else:
                    resolve("event")

            self.waiters.append(wake)
        timer = self.clock.call_later(loop, self.heartbeat_wait(heartbeat_seconds), lambda: resolve("heartbeat"))
        watcher = None
        if disconnected is not None:
            watcher = asyncio.ensure_future(disconnected())
            watcher.add_done_callback(lambda _task: resolve("disconnected"))
        try:
            reason = await future
        finally:
            timer.cancel()
            if watcher is not None and not watcher.done():
                watcher.cancel()
            with self.lock:
                if wake in self.waiters:
                    self.waiters.remove(wake)
        with self.lock:
            if reason == "disconnected" and not self._closing():
                self.last_access = self.clock.monotonic()
                return None
            return self._answer_after_wait()

    def close(self) -> None:
        """Wake any waiting poll of a deleted queue."""
        with self.lock:
            self.closed = True
            self.wake()

    def idle_since(self) -> float | None:
        """Monotonic time of the last access, or None while a long poll is waiting."""
        return None if self.waiters else self.last_access

    def to_dump(self, now: float) -> Any:
        """The queue as saved across a restart: options, pending events, next id, idle time."""
        data = {name: getattr(self, name) for name in QUEUE_OPTIONS}
        data["event_types"] = sorted(self.event_types) if self.event_types is not None else None
        data["narrow"] = [list(pair) for pair in self.narrow]
        data.update(id=self.id, events=self.events, next_event_id=self.next_event_id,
                    idle_seconds=0.0 if self.waiters else max(0.0, now - self.last_access))
        return data

    @classmethod
    def from_dump(cls, saved: JSONDict, *, lock: Any, manager: QueueManager | None) -> EventQueue:
        """A queue from its saved form. An option the file lacks (saved by an older version) takes
        its default and one it has that this version does not know is ignored, so that an upgrade
        keeps every client's queue; a queue without its identity (id, user, events) raises."""
        options = {name: saved[name] for name in QUEUE_OPTIONS if name in saved and saved[name] is not None}
        options["narrow"] = [tuple(pair) for pair in options.get("narrow", ())]
        queue = cls(**options, lock=lock, manager=manager)
        queue.id = saved["id"]
        if not isinstance(queue.id, str):
            raise TypeError("the queue id is not a string")
        queue.events = [dict(event) for event in saved["events"]]
        queue.next_event_id = int(saved["next_event_id"])
        return queue


def narrow_matches(queue: EventQueue, message: JSONDict, flags: list[str]) -> bool:
    """Whether a message event belongs to the queue's narrow (lib/narrow decides, as for fetches).
    Most queues have none; lib/narrow loads with the first that has one."""
    if not queue.narrow:
        return True
    from chat_appliance.lib.narrow import message_matches_narrow

    return message_matches_narrow(queue.narrow, message, flags, user_id=queue.user_id, user_email=queue.user_email)


@contextmanager
def delivery_isolated(queue: EventQueue, event: JSONDict) -> Iterator[None]:
    """One queue's failure (a bug, or a narrow that slipped past /register's checks) is logged
    and costs that queue this event; it never stops delivery to the queues after it."""
    try:
        yield
    except Exception:  # noqa: BLE001 - isolation is the point
        log.exception("delivery of a %s event to queue %s failed", event.get("type"), queue.id)


class QueueManager:
    """All queues of the process. Registered on the bus by create_app."""

    def __init__(self, idle_seconds=600, heartbeat_seconds=55, *, clock=None, random_fraction=random.random,
                 shard_id=None):
        self.idle_seconds = idle_seconds
        # SHARD_ID of this process when it is one of several (events/shards.py), else None.
        self.shard_id = shard_id
        self.heartbeat_seconds = heartbeat_seconds
        # Injectable so that tests move time and choose the heartbeat spread instead of waiting.
        self.clock = clock or SystemClock()
        self.random_fraction = random_fraction
        self.lock = threading.RLock()
        self.queues = {}
        self.by_user = {}
        self.all_public_streams_queues = 0  # how many of them take every public channel's messages
        self.last_gc = self.clock.monotonic()
        self.loop = None
        self.closing = False
        self.pending_wakes: collections.deque[Any] = collections.deque()
        self.wake_scheduled = False

    # --- waking polls on the loop in batches ------------------------------------------------
    # A fan-out to thousands of waiting polls would otherwise queue thousands of answers at
    # once, ahead of everything else the loop has to do, such as handing the sender the answer
    # to its POST /messages. Waking WAKE_BATCH polls per loop turn lets other work in between.

    def schedule_wake(self, loop: Any, resolve: Callable[..., Any]) -> None:
        """Wake one waiting poll soon (called on the loop's thread)."""
        self.pending_wakes.append(resolve)
        if not self.wake_scheduled:
            self.wake_scheduled = True
            loop.call_soon(self._wake_batch, loop)

    def _wake_batch(self, loop):
        for _ in range(min(WAKE_BATCH, len(self.pending_wakes))):
            self.pending_wakes.popleft()("event")
        if self.pending_wakes:
            loop.call_soon(self._wake_batch, loop)
        else:
            self.wake_scheduled = False

    def configure(self, *, idle_seconds: float, heartbeat_seconds: int) -> None:
        self.idle_seconds = idle_seconds
        self.heartbeat_seconds = heartbeat_seconds

    def heartbeat_wait(self) -> float:
        """One waiting poll's time until its heartbeat, spread over the last HEARTBEAT_SPREAD of heartbeat_seconds."""
        return self.heartbeat_seconds * (1 - HEARTBEAT_SPREAD * self.random_fraction())

    # --- the event loop of `serve` ---------------------------------------------------------

    def attach_loop(self, loop: Any) -> None:
        """Run fan-outs on this loop from now on (serve's loop, before it accepts requests)."""
        self.loop = loop
        self.closing = False

    def detach_loop(self) -> None:
        """Back to fan-out in the publishing thread (after serve's loop has stopped)."""
        self.loop = None

    def begin_shutdown(self) -> None:
        """Answer every waiting poll now (with a heartbeat, as when its wait runs out), and any
        poll that arrives from here on at once: the server is about to stop."""
        with self.lock:
            self.closing = True
            for queue in list(self.queues.values()):
                queue.wake()

    # --- lifecycle ---------------------------------------------------------------------

    def register(self, **options: Any) -> EventQueue:
        """A new queue for options['user_id']."""
        self.collect_garbage()
        queue = EventQueue(**options, lock=self.lock, manager=self)
        self._add(queue)
        return queue

    def _add(self, queue):
        with self.lock:
            self.queues[queue.id] = queue
            self.by_user.setdefault(queue.user_id, set()).add(queue.id)
            self.all_public_streams_queues += bool(queue.all_public_streams)

    def access(self, queue_id: str, user_id: int) -> EventQueue:
        """The queue, if it exists and belongs to this user; else BAD_EVENT_QUEUE_ID."""
        self.collect_garbage()
        with self.lock:
            queue = self.queues.get(queue_id)
        if queue is None or queue.user_id != user_id:
            raise BadEventQueueIdError(queue_id)
        return queue

    def delete(self, queue_id: str) -> None:
        """Remove a queue and wake its waiting poll."""
        with self.lock:
            queue = self.queues.pop(queue_id, None)
            if queue is not None:
                self.all_public_streams_queues -= bool(queue.all_public_streams)
                ids = self.by_user.get(queue.user_id, set())
                ids.discard(queue_id)
                if not ids:
                    self.by_user.pop(queue.user_id, None)
        if queue is not None:
            queue.close()

    def delete_user_queues(self, user_id: int) -> None:
        """Drop every queue of a user (a deactivated account)."""
        with self.lock:
            ids = list(self.by_user.get(user_id, ()))
        for queue_id in ids:
            self.delete(queue_id)

    def collect_garbage(self, force: bool = False) -> None:
        """Delete queues idle longer than idle_seconds; runs at most once a second unless forced."""
        now = self.clock.monotonic()
        if not force and now - self.last_gc < min(1.0, self.idle_seconds):
            return
        self.last_gc = now
        with self.lock:
            queues = list(self.queues.values())
        for queue in queues:
            since = queue.idle_since()
            if since is not None and now - since > self.queue_idle_seconds(queue):
                self.delete(queue.id)

    def queue_idle_seconds(self, queue: EventQueue) -> float:
        """How long this queue may stay idle: its own idle_queue_timeout, else the server's."""
        return queue.idle_timeout if queue.idle_timeout is not None else self.idle_seconds

    def online_user_ids(self) -> set[int]:
        """Users with a queue that takes messages and was polled within idle_seconds (or is
        being polled): not away, for missed-message mail."""
        now = self.clock.monotonic()
        with self.lock:
            queues = list(self.queues.values())
        online = set()
        for queue in queues:
            since = queue.idle_since()
            if queue.wants("message") and (since is None or now - since <= self.idle_seconds):
                online.add(queue.user_id)
        return online

    def user_queues(self, user_ids: Any) -> list[EventQueue]:
        with self.lock:
            return [self.queues[qid] for uid in user_ids for qid in self.by_user.get(uid, ()) if qid in self.queues]

    def clear(self) -> None:
        for queue_id in list(self.queues):
            self.delete(queue_id)

    # --- surviving a graceful restart ----------------------------------------------------

    def dump(self, path: pathlib.Path) -> int:
        """Write every queue to `path` (atomically: a temporary file, then a rename)."""
        now = self.clock.monotonic()
        with self.lock:
            data: JSONDict = {"version": DUMP_VERSION, "saved_at": self.clock.time(),
                    "queues": [queue.to_dump(now) for queue in self.queues.values()]}
        temporary = f"{path}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"), default=str)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        return len(data["queues"])

    def restore(self, path: pathlib.Path) -> int:
        """Load the queues a graceful stop wrote, then delete the file, so that a later crash
        does not bring back queues that missed events in between. Each queue is restored on its
        own: one that cannot be read is logged and skipped, the others come back. Queues idle for
        longer than idle_seconds (time while the server was down included) are dropped. Returns
        how many were restored."""
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return 0
        except (OSError, ValueError):
            log.warning("ignoring unreadable event queue file %s", path)
            data = {}
        finally:
            if os.path.exists(path):
                os.remove(path)
        if not isinstance(data, dict) or data.get("version") != DUMP_VERSION:
            if data:
                log.warning("ignoring event queue file %s of another version", path)
            return 0
        saved_at = data.get("saved_at")
        down_for = max(0.0, self.clock.time() - saved_at) if isinstance(saved_at, (int, float)) else 0.0
        restored = 0
        for saved in data.get("queues") or []:
            try:
                restored += self._restore_one(saved, down_for)
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                queue_id = saved.get("id") if isinstance(saved, dict) else None
                log.warning("could not restore event queue %s: %r", queue_id, error)
        return restored

    def _restore_one(self, saved, down_for):
        """Restore one saved queue unless it has expired; 1 if restored, else 0."""
        idle = float(saved.get("idle_seconds", 0.0)) + down_for
        queue = EventQueue.from_dump(saved, lock=self.lock, manager=self)
        if idle > self.queue_idle_seconds(queue):
            return 0
        queue.last_access = self.clock.monotonic() - idle
        self._add(queue)
        return 1

    # --- fan-out -----------------------------------------------------------------------

    def __call__(self, event, user_ids):
        """The bus listener: deliver an event to the queues of these users, on serve's loop
        when one is attached (in publishing order), else in this thread."""
        if event.get("type") == "message" and not self.message_may_reach_a_queue(user_ids):
            return  # a message to a channel none of whose members is connected wakes nothing
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.deliver, event, user_ids)
        else:
            self.deliver(event, user_ids)

    def message_may_reach_a_queue(self, user_ids: list[int]) -> bool:
        """Whether a message event could go to any queue: one of its recipients', or an
        all_public_streams queue. Read without the lock, in the publishing thread: a queue
        registered meanwhile fetches its initial state after this event's commit, so it misses
        nothing."""
        if self.all_public_streams_queues:
            return True
        by_user = self.by_user
        return any(uid in by_user for uid in user_ids)

    def deliver(self, event: JSONDict, user_ids: list[int]) -> None:
        """The fan-out of one event; a failure for one queue costs only that queue the event."""
        try:
            with self.lock:
                if event.get("type") == "message":
                    self.deliver_message(event, user_ids)
                else:
                    for queue in self.user_queues(user_ids):
                        with delivery_isolated(queue, event):
                            if queue.wants(event["type"]) and self.accepts(queue, event):
                                for shaped in self.shape_for(queue, event):
                                    queue.push(shaped)
        except Exception:  # one bad event must not stop the delivery of the next ones
            log.exception("event fan-out failed for %s", event.get("type"))
        if event.get("type") == "realm_user" and (
            event.get("op") == "remove" or event.get("person", {}).get("is_active") is False
        ):
            self.delete_user_queues(event["person"]["user_id"])

    @staticmethod
    def accepts(queue: EventQueue, event: JSONDict) -> bool:
        """Capability-gated events: channel typing, and linkifiers (URL templates since Zulip
        feature level 176), only to clients that declared they handle them."""
        if event["type"] == "typing" and event.get("message_type") == "stream":
            return queue.client_capabilities.get("stream_typing_notifications", False)
        if event["type"] == "realm_linkifiers":
            return queue.client_capabilities.get("linkifier_url_template", False)
        if "_capability" in event:
            # Published twice, for clients that declared a capability and for those that did not.
            name, declared = event["_capability"]
            return bool(queue.client_capabilities.get(name, False)) == declared
        return True

    @staticmethod
    def shape_for(queue: EventQueue, event: JSONDict) -> list[JSONDict]:
        """The events a queue receives for one bus event (most pass through unchanged).

        update_message arrives with `user_flags` ({user_id: flag names}) and leaves with the
        receiving user's `flags`. delete_message arrives with `message_ids`: clients that declared
        bulk_message_deletion get it as is, others (zulip-terminal) one event per message with
        `message_id`. Topics of
        update_message and delete_message are shown as the display name to clients without the
        empty_topic_name capability.
        """
        if "_capability" in event:
            event = {k: v for k, v in event.items() if k != "_capability"}
        if event["type"] not in ("delete_message", "update_message"):
            return [event]
        event = dict(event)
        if not queue.client_capabilities.get("empty_topic_name", False):
            for key in ("topic", "subject", "orig_subject"):
                if event.get(key) == "":
                    event[key] = models.EMPTY_TOPIC_DISPLAY_NAME
        if event["type"] == "update_message":
            # Published with every recipient's flags; each queue gets its user's.
            event["flags"] = event.pop("user_flags", {}).get(queue.user_id, [])
            return [event]
        ids = sorted(event.get("message_ids") or [event["message_id"]])
        base = {k: v for k, v in event.items() if k not in ("message_ids", "message_id")}
        if queue.client_capabilities.get("bulk_message_deletion", False):
            return [dict(base, message_ids=ids)]
        return [dict(base, message_id=message_id) for message_id in ids]

    def deliver_message(self, event: JSONDict, user_ids: Any) -> None:
        """A message event to its recipients' queues, and to all_public_streams queues of the
        organization for messages of public channels."""
        recipients = set(user_ids)
        targets = self.user_queues(recipients)
        if event.get("stream_id") is not None and not event.get("invite_only"):
            with self.lock:
                targets += [q for q in self.queues.values()
                            if q.all_public_streams and q.realm_id == event.get("realm_id")
                            and q.user_id not in recipients]
        if not targets:  # nobody of a channel's members has a queue open: no work per member
            return
        flags_by_user = {int(k): v for k, v in (event.get("flags") or {}).items()}
        # One shaped event per distinct (content form, gravatar, flags, local id): a fan-out to
        # N queues builds a handful of dicts, not N. Queues share them; nothing mutates them.
        shapes: dict[Any, Any] = {}
        seen = set()
        for queue in targets:
            with delivery_isolated(queue, event):
                if queue.id in seen or not queue.wants("message"):
                    continue
                seen.add(queue.id)
                flags = list(flags_by_user.get(queue.user_id, []))
                if not narrow_matches(queue, event["message"], flags):
                    continue
                local = event.get("local_id") if event.get("sender_queue_id") == queue.id else None
                key = (bool(queue.apply_markdown), bool(queue.client_gravatar), tuple(flags), local,
                       bool(queue.client_capabilities.get("empty_topic_name", False)))
                shaped = shapes.get(key)
                if shaped is None:
                    shaped = shapes[key] = self.message_event_for(queue, event, flags)
                queue.push(shaped)

    @staticmethod
    def message_event_for(queue: EventQueue, event: JSONDict, flags: Any) -> Any:
        """The per-queue message event.

        The bus event is {"type": "message", "message": dict with HTML content, "raw_content":
        markdown, "flags": {user_id: [names]}, "sender_queue_id", "local_id", "invite_only",
        "stream_id", "realm_id"}.
        """
        message = dict(event["message"])
        if not queue.apply_markdown:
            message["content"] = event.get("raw_content", message.get("content"))
            message["content_type"] = "text/x-markdown"
        else:
            message["content_type"] = "text/html"
        if queue.client_gravatar and "avatar_url" in message:
            message["avatar_url"] = None
        if message.get("subject") == "" and message.get("type") == "stream" \
                and not queue.client_capabilities.get("empty_topic_name", False):
            message["subject"] = models.EMPTY_TOPIC_DISPLAY_NAME
        local = event.get("local_id") if event.get("sender_queue_id") == queue.id else None
        return event_catalogue.message_for_queue(message, flags, local)

