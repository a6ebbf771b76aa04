"""In-process event queues: register, long-poll get, heartbeat, garbage collection, fan-out.

One `QueueManager` per process listens on the bus. Each queue has its own condition
variable, so a publish wakes only the long polls of the queues it touched; the manager's
lock guards only the maps from ids to queues. Nothing here touches the database.

Message events arrive on the bus in a compact, queue-independent form (see
`QueueManager.message_event_for`) and are shaped per queue: markdown or HTML content,
gravatar nulling, the receiving user's flags, `local_message_id` for the sender's queue.
"""

import logging
import secrets
import threading
import time
from contextlib import contextmanager

from ..lib.errors import JsonableError
from ..lib.messages import EMPTY_TOPIC_DISPLAY_NAME
from ..lib.params import is_id_string

log = logging.getLogger(__name__)


class BadEventQueueIdError(JsonableError):
    """An unknown, expired or foreign queue. zulip-terminal 0.7.0 re-registers only when the
    message starts with exactly "Bad event queue id:" (lower-case id)."""

    code = "BAD_EVENT_QUEUE_ID"

    def __init__(self, queue_id):
        super().__init__(f"Bad event queue id: {queue_id}", queue_id=queue_id)


class EventQueue:
    """One client's queue: its registration options and its undelivered events."""

    def __init__(self, *, user_id, realm_id, user_email="", event_types=None, narrow=(), apply_markdown=False,
                 client_gravatar=True, all_public_streams=False, client_capabilities=None):
        self.id = f"{int(time.time())}:{secrets.token_hex(8)}"
        self.user_id = user_id
        self.realm_id = realm_id
        self.user_email = user_email.lower()
        self.event_types = set(event_types) if event_types is not None else None
        self.narrow = [(op.lower(), operand) for op, operand in narrow]
        self.apply_markdown = apply_markdown
        self.client_gravatar = client_gravatar
        self.all_public_streams = all_public_streams
        self.client_capabilities = dict(client_capabilities or {})
        self.events = []
        self.next_event_id = 0
        self.last_access = time.monotonic()
        self.waiters = 0
        self.closed = False
        self.condition = threading.Condition()

    def wants(self, event_type):
        """Whether the client registered for this event type (None means every type)."""
        return self.event_types is None or event_type in self.event_types

    def push(self, event):
        """Append an event with the next id and wake the waiting long poll."""
        with self.condition:
            self.events.append(dict(event, id=self.next_event_id))
            self.next_event_id += 1
            self.condition.notify_all()

    def acknowledge(self, last_event_id):
        """Drop the events the client has seen (ids <= last_event_id). Holds the condition."""
        if last_event_id is not None and self.events and self.events[0]["id"] <= last_event_id:
            self.events = [e for e in self.events if e["id"] > last_event_id]

    def get(self, last_event_id, *, dont_block, heartbeat_seconds):
        """Events newer than last_event_id: at once if any (or with dont_block), else after the
        next event arrives, else a heartbeat after heartbeat_seconds."""
        with self.condition:
            self.acknowledge(last_event_id)
            self.last_access = time.monotonic()
            if not self.events and not dont_block:
                self.waiters += 1
                try:
                    self.condition.wait_for(lambda: self.events or self.closed, timeout=heartbeat_seconds)
                finally:
                    self.waiters -= 1
                if not self.events and not self.closed:
                    # Heartbeats take an id like any event, so the client's last_event_id acknowledges them.
                    self.events.append({"type": "heartbeat", "id": self.next_event_id})
                    self.next_event_id += 1
            self.last_access = time.monotonic()
            return list(self.events)

    def close(self):
        """Wake any waiting poll of a deleted queue."""
        with self.condition:
            self.closed = True
            self.condition.notify_all()

    def idle_since(self):
        """Monotonic time of the last access, or None while a long poll is waiting."""
        return None if self.waiters else self.last_access


# --- narrow matching for message events (legacy [[operator, operand]] pairs) ----------------


def _participant_emails(message):
    recipients = message.get("display_recipient")
    return {r["email"].lower() for r in recipients} if isinstance(recipients, list) else set()


def _participant_ids(message):
    recipients = message.get("display_recipient")
    return {r["id"] for r in recipients} if isinstance(recipients, list) else set()


def _dm_operand_matches(queue, message, operand):
    if message.get("type") != "private":
        return False
    if isinstance(operand, list):
        wanted_ids = {int(x) for x in operand}
        return _participant_ids(message) == wanted_ids | {queue.user_id} or _participant_ids(message) == wanted_ids
    # zulip-terminal joins emails with ", ", so split and strip.
    wanted = {e.strip().lower() for e in str(operand).split(",") if e.strip()}
    return _participant_emails(message) in (wanted | {queue.user_email}, wanted)


def narrow_matches(queue, message, flags):
    """Whether a message belongs to the queue's narrow (an empty narrow matches everything)."""
    for operator, operand in queue.narrow:
        if operator in ("stream", "channel"):
            if message.get("type") != "stream":
                return False
            if isinstance(operand, int) or is_id_string(operand):
                if message.get("stream_id") != int(operand):
                    return False
            elif str(message.get("display_recipient", "")).lower() != str(operand).lower():
                return False
        elif operator in ("topic", "subject"):
            topic = message.get("subject", message.get("topic", ""))
            if message.get("type") != "stream" or topic.lower() != str(operand).lower():
                return False
        elif operator == "sender":
            if isinstance(operand, int) or is_id_string(operand):
                if message.get("sender_id") != int(operand):
                    return False
            elif message.get("sender_email", "").lower() != str(operand).lower():
                return False
        elif operator == "is":
            kind = str(operand).lower()
            if kind in ("dm", "private") and message.get("type") != "private":
                return False
            if kind == "starred" and "starred" not in flags:
                return False
            if kind == "mentioned" and not {"mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned",
                                            "group_mentioned"} & set(flags):
                return False
        elif operator in ("dm", "pm-with", "pm_with"):
            if not _dm_operand_matches(queue, message, operand):
                return False
        # Other operators (search, has, near, ...) cannot be decided on a live event: let it through.
    return True


@contextmanager
def delivery_isolated(queue, event):
    """One queue's failure (a bug, or a narrow that slipped past /register's checks) is logged
    and costs that queue this event; it never stops delivery to the queues after it."""
    try:
        yield
    except Exception:  # noqa: BLE001 - isolation is the point
        log.exception("delivery of a %s event to queue %s failed", event.get("type"), queue.id)


class QueueManager:
    """All queues of the process. Registered on the bus by create_app."""

    def __init__(self, idle_seconds=600, heartbeat_seconds=55):
        self.idle_seconds = idle_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.lock = threading.Lock()
        self.queues = {}
        self.by_user = {}
        self.last_gc = time.monotonic()

    def configure(self, *, idle_seconds, heartbeat_seconds):
        self.idle_seconds = idle_seconds
        self.heartbeat_seconds = heartbeat_seconds

    # --- lifecycle ---------------------------------------------------------------------

    def register(self, **options):
        """A new queue for options['user_id']."""
        self.collect_garbage()
        queue = EventQueue(**options)
        with self.lock:
            self.queues[queue.id] = queue
            self.by_user.setdefault(queue.user_id, set()).add(queue.id)
        return queue

    def access(self, queue_id, user_id):
        """The queue, if it exists and belongs to this user; else BAD_EVENT_QUEUE_ID."""
        self.collect_garbage()
        with self.lock:
            queue = self.queues.get(queue_id)
        if queue is None or queue.user_id != user_id:
            raise BadEventQueueIdError(queue_id)
        return queue

    def delete(self, queue_id):
        """Remove a queue and wake its waiting poll."""
        with self.lock:
            queue = self.queues.pop(queue_id, None)
            if queue is not None:
                ids = self.by_user.get(queue.user_id, set())
                ids.discard(queue_id)
                if not ids:
                    self.by_user.pop(queue.user_id, None)
        if queue is not None:
            queue.close()

    def delete_user_queues(self, user_id):
        """Drop every queue of a user (a deactivated account)."""
        with self.lock:
            ids = list(self.by_user.get(user_id, ()))
        for queue_id in ids:
            self.delete(queue_id)

    def collect_garbage(self, force=False):
        """Delete queues idle longer than idle_seconds; runs at most once a second unless forced."""
        now = time.monotonic()
        if not force and now - self.last_gc < min(1.0, self.idle_seconds):
            return
        self.last_gc = now
        with self.lock:
            queues = list(self.queues.values())
        for queue in queues:
            since = queue.idle_since()
            if since is not None and now - since > self.idle_seconds:
                self.delete(queue.id)

    def user_queues(self, user_ids):
        with self.lock:
            return [self.queues[qid] for uid in user_ids for qid in self.by_user.get(uid, ()) if qid in self.queues]

    def clear(self):
        for queue_id in list(self.queues):
            self.delete(queue_id)

    # --- fan-out -----------------------------------------------------------------------

    def __call__(self, event, user_ids):
        """The bus listener: deliver an event to the queues of these users."""
        if event.get("type") == "message":
            self.deliver_message(event, user_ids)
        else:
            for queue in self.user_queues(user_ids):
                with delivery_isolated(queue, event):
                    if queue.wants(event["type"]) and self.accepts(queue, event):
                        for shaped in self.shape_for(queue, event):
                            queue.push(shaped)
        if event.get("type") == "realm_user" and (
            event.get("op") == "remove" or event.get("person", {}).get("is_active") is False
        ):
            self.delete_user_queues(event["person"]["user_id"])

    @staticmethod
    def accepts(queue, event):
        """Capability-gated events: channel typing, and linkifiers (URL templates since Zulip
        feature level 176), only to clients that declared they handle them."""
        if event["type"] == "typing" and event.get("message_type") == "stream":
            return queue.client_capabilities.get("stream_typing_notifications", False)
        if event["type"] == "realm_linkifiers":
            return queue.client_capabilities.get("linkifier_url_template", False)
        return True

    @staticmethod
    def shape_for(queue, event):
        """The events a queue receives for one bus event (most pass through unchanged).

        update_message arrives with `user_flags` ({user_id: flag names}) and leaves with the
        receiving user's `flags`. delete_message arrives with `message_ids`: clients that declared
        bulk_message_deletion get it as is, others (zulip-terminal) one event per message with
        `message_id`. Topics of
        update_message and delete_message are shown as the display name to clients without the
        empty_topic_name capability.
        """
        if event["type"] not in ("delete_message", "update_message"):
            return [event]
        event = dict(event)
        if not queue.client_capabilities.get("empty_topic_name", False):
            for key in ("topic", "subject", "orig_subject"):
                if event.get(key) == "":
                    event[key] = EMPTY_TOPIC_DISPLAY_NAME
        if event["type"] == "update_message":
            # Published with every recipient's flags; each queue gets its user's.
            event["flags"] = event.pop("user_flags", {}).get(queue.user_id, [])
            return [event]
        ids = sorted(event.get("message_ids") or [event["message_id"]])
        base = {k: v for k, v in event.items() if k not in ("message_ids", "message_id")}
        if queue.client_capabilities.get("bulk_message_deletion", False):
            return [dict(base, message_ids=ids)]
        return [dict(base, message_id=message_id) for message_id in ids]

    def deliver_message(self, event, user_ids):
        """A message event to its recipients' queues, and to all_public_streams queues of the
        organization for messages of public channels."""
        recipients = set(user_ids)
        targets = self.user_queues(recipients)
        if event.get("stream_id") is not None and not event.get("invite_only"):
            with self.lock:
                targets += [q for q in self.queues.values()
                            if q.all_public_streams and q.realm_id == event.get("realm_id")
                            and q.user_id not in recipients]
        flags_by_user = {int(k): v for k, v in (event.get("flags") or {}).items()}
        for queue in targets:
            with delivery_isolated(queue, event):
                if not queue.wants("message"):
                    continue
                flags = list(flags_by_user.get(queue.user_id, []))
                if not narrow_matches(queue, event["message"], flags):
                    continue
                queue.push(self.message_event_for(queue, event, flags))

    @staticmethod
    def message_event_for(queue, event, flags):
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
        shaped = {"type": "message", "message": message, "flags": flags}
        if event.get("sender_queue_id") == queue.id and event.get("local_id") is not None:
            shaped["local_message_id"] = event["local_id"]
        return shaped


manager = QueueManager()
