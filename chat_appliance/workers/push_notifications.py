"""The push worker: mobile notifications through Zulip's Mobile Push Notification Service
(clients/push_service.py), to the devices registered by actions/push_notifications.py (legacy
FCM/APNs tokens, plaintext notifications through push/notify) and actions/push_devices.py (the
current app's devices, end-to-end encrypted notifications through push/e2ee/notify, whose token
registrations this worker forwards to the service off the request path). A person with both kinds
of device gets both, as from Zulip.

Notifications, by Zulip's rules (facts, not code):
- a recipient other than the sender, whose copy of the message is not already read (a muted
  sender's messages arrive read), gets a notification for: a direct message or a personal or
  group mention (enable_offline_push_notifications); a wildcard mention (also
  wildcard_mentions_notify, or the channel's own setting); a message in a topic they follow
  (enable_followed_topic_push_notifications); a channel with push notifications on (the
  subscription's push_notifications, else enable_stream_push_notifications; never a muted channel);
- only when they are away (no event queue taking messages: the missed-message emails' rule), or
  always with enable_online_push_notifications (on by default, as on Zulip);
- only to people with a registered device, once: the message is marked
  active_mobile_push_notification, and when it is read a "remove" notification takes it off the
  phone, as it does when a notified message is deleted.

The bus listener only notes the committed event; one worker thread reads the settings, builds
Zulip's payloads and calls the service, retrying a failure that may pass (no answer, a 5xx) a
few times, logging what fails for good. A request never waits on the service. Jobs pending when
the server stops are lost.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import re
import threading
import time
from typing import Any, Callable, Mapping

from chat_appliance.actions import push_devices
from chat_appliance.actions.push_notifications import USER_AGENT, recipient_of
from chat_appliance.clients import push_e2ee, push_service
from chat_appliance.clients.push_service import PushMessage, PushService
from chat_appliance.db.connection import write_transaction
from chat_appliance.lib import push_credentials
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.lib.errors import PushServiceRefusedError, PushServiceRetryLaterError
from chat_appliance.lib.groups import is_user_in_group
from chat_appliance.lib.serializers import gravatar_url, uploaded_avatar_url
from chat_appliance.lib.system_bots import without_external_notifications
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import (
    FLAG_BITS,
    Message,
    PushDeviceToken,
    Realm,
    Stream,
    Subscription,
    UserMessage,
    UserProfile,
    UserTopic,
    database,
    received_conditions,
)
from chat_appliance.models import EMPTY_TOPIC_DISPLAY_NAME, TOPIC_FOLLOWED
from chat_appliance.workers.base import WorkerContext

log = logging.getLogger(__name__)

ACTIVE_PUSH = FLAG_BITS["active_mobile_push_notification"]
# A "remove" names at most the newest 200 messages (Zulip's limit).
MAX_REMOVE_IDS = 200
# Seconds between server data uploads (server/analytics).
SERVER_DATA_INTERVAL = 3600


# ---- Notifications ----

def wants_push(user: UserProfile, trigger: str, subscription: Subscription | None) -> bool:
    """The person's settings for a notification about this trigger."""
    if trigger in ("direct_message", "mention"):
        return bool(user_setting(user, "enable_offline_push_notifications"))
    if trigger == "wildcard_mention":
        wildcard = subscription.wildcard_mentions_notify if subscription is not None else None
        if wildcard is None:
            wildcard = user_setting(user, "wildcard_mentions_notify")
        return bool(user_setting(user, "enable_offline_push_notifications")) and bool(wildcard)
    if trigger == "followed_topic":
        return bool(user_setting(user, "enable_followed_topic_push_notifications"))
    if trigger == "stream_push":
        if subscription is None or subscription.is_muted:
            return False
        setting = subscription.push_notifications
        return bool(user_setting(user, "enable_stream_push_notifications") if setting is None else setting)
    return False


def triggers_for(message: Mapping[str, Any], flags: list[str], follows: bool) -> list[str]:
    """The reasons to notify, strongest first (Zulip's order: DM, mention, wildcard mention,
    followed topic, channel setting)."""
    if message["type"] == "private":
        return ["direct_message"]
    reasons = []
    if "mentioned" in flags or "group_mentioned" in flags:
        reasons.append("mention")
    if "stream_wildcard_mentioned" in flags or "topic_wildcard_mentioned" in flags:
        reasons.append("wildcard_mention")
    if follows:
        reasons.append("followed_topic")
    reasons.append("stream_push")
    return reasons


def absolute(realm_url: str, url: str) -> str:
    return realm_url.rstrip("/") + url if url.startswith("/") else url


def push_message(message: Message, sender: UserProfile, realm: Realm) -> PushMessage:
    """What a notification tells about a message, read from the database."""
    avatar = uploaded_avatar_url(sender) if getattr(sender, "avatar_source", "G") == "U" \
        else gravatar_url(sender.delivery_email, sender.avatar_version)
    data = PushMessage(id=message.id, sender_id=sender.id, sender_email=sender.email,
                       sender_full_name=sender.full_name, sender_avatar_url=absolute(realm.url, avatar),
                       date_sent=message.date_sent, rendered_content=message.rendered_content)
    if message.stream_id is not None:
        data.stream_id = message.stream_id
        data.stream_name = Stream.get_by_id(message.stream_id).name
        data.topic = message.topic or EMPTY_TOPIC_DISPLAY_NAME
    return data


def mentioned_group(user: UserProfile, rendered: str, flags: list[str]) -> tuple[int, str] | None:
    """The group through which the person was mentioned, when not mentioned personally."""
    if "mentioned" in flags or "group_mentioned" not in flags:
        return None
    for match in re.finditer(r'class="user-group-mention[^"]*" data-user-group-id="(\d+)"[^>]*>@?([^<]*)<', rendered):
        if is_user_in_group(user, int(match.group(1))):
            return int(match.group(1)), match.group(2)
    return None


class PushNotifier:
    """The worker (workers/base.py) that sends notifications through the service.

    `config` is read at each job (the service: a server registered while running starts pushing;
    PUSH_NOTIFICATION_ATTEMPTS and _RETRY_SECONDS); `is_online(user_id)` is the missed-message
    emails' rule."""

    def __init__(self, config: Mapping[str, Any], is_online: Callable[[int], bool], *, version: str = "",
                 feature_level: int = 0) -> None:
        self.config = config
        self.is_online = is_online
        self.version = version
        self.feature_level = feature_level
        self._next_sync = 0.0
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def start(cls, context: WorkerContext) -> PushNotifier:
        return cls(context.config, context.is_online, version=context.version,
                   feature_level=context.feature_level)

    def __call__(self, event: Mapping[str, Any], user_ids: list[int]) -> None:
        """Bus listener: note the event for the worker; no per-recipient work here (a channel's
        members are many, and most have no device). Nothing at all while push is not configured
        (the usual case): waking the worker for each message, only for it to find that out, cost
        every send a thread hand-over."""
        kind = event.get("type")
        if kind not in ("message", "update_message_flags", "remove_push_notifications",
                        push_devices.REGISTRATION_JOB) or push_credentials.configured(self.config) is None:
            return
        if kind == push_devices.REGISTRATION_JOB:
            self._add(("register", dict(event)))
            return
        if kind == "remove_push_notifications":  # deleted: the rows that said so are gone
            for uid in user_ids:
                self._add(("deleted", uid, list(event["message_ids"])))
            return
        if kind == "message":
            if not without_external_notifications(event["message"]):
                self._add(("message", event["message"], event.get("flags") or {}, list(user_ids)))
        elif kind == "update_message_flags" and event.get("flag") == "read" and event.get("op") == "add":
            for uid in user_ids:
                self._add(("remove", uid, list(event.get("messages") or [])))

    def service(self) -> PushService | None:
        return push_service.service_from_config(self.config)

    def _add(self, job: Any) -> None:
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                # The worker runs in a copy of this context: the publishing app's runtime (database).
                context = contextvars.copy_context()
                self._thread = threading.Thread(target=context.run, args=(self._run,), name="push-notifications",
                                                daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def _run(self) -> None:
        while True:
            self._maybe_sync()
            try:
                job = self._jobs.get(timeout=60)
            except queue.Empty:
                continue
            if job is None:
                return
            if self.service() is None:  # not registered: no database work either
                self._jobs.task_done()
                continue
            try:
                with database.connection_context():
                    if job[0] == "message":
                        self.notify_message(job[1], job[2], job[3])
                    elif job[0] == "register":
                        self.forward_registration(job[1])
                    elif job[0] == "deleted":
                        self.send_removal(job[1], job[2])
                    else:
                        self.notify_removal(job[1], job[2])
            except Exception as error:  # one job must never stop the others
                log_failure(log, error, "push notification job %s failed", job[0])
            finally:
                self._jobs.task_done()

    def _maybe_sync(self) -> None:
        """The server data upload, when the worker starts and then every SERVER_DATA_INTERVAL
        seconds (Zulip's servers upload hourly): without it the service cannot tell whether this
        server's plan allows pushing."""
        service = self.service()
        if service is None or time.monotonic() < self._next_sync:
            return
        self._next_sync = time.monotonic() + SERVER_DATA_INTERVAL
        try:
            with database.connection_context():
                answer = send_server_data(service, self.version, self.feature_level)
            refused = [uuid for uuid, status in (answer.get("realms") or {}).items()
                       if isinstance(status, dict) and not status.get("can_push", True)]
            if refused:
                log.warning("the push notification service says organizations %s may not push", refused)
        except (PushServiceRetryLaterError, PushServiceRefusedError) as error:
            log.warning("server data upload to the push notification service failed: %s",
                        getattr(error, "detail", error.msg))
        except Exception:
            log.exception("server data upload to the push notification service failed")

    def wait_idle(self) -> None:
        """Until every job noted so far is done (tests, shutdown)."""
        self._jobs.join()

    def devices_of(self, user_ids: list[int]) -> dict[int, dict[str, list[Any]]]:
        """Each person's devices: legacy FCM and APNs tokens, and devices registered for end-to-end
        encrypted notifications ("e2ee"). Zulip notifies both kinds, each in its own protocol."""
        devices: dict[int, dict[str, list[Any]]] = {}
        for row in PushDeviceToken.select().where(PushDeviceToken.user_profile.in_(user_ids)).order_by(PushDeviceToken.id):
            devices.setdefault(row.user_profile_id, {"fcm": [], "apns": [], "e2ee": []})[row.kind].append(row.token)
        for user_id, registered in push_devices.registered_devices(user_ids).items():
            devices.setdefault(user_id, {"fcm": [], "apns": [], "e2ee": []})["e2ee"] = registered
        return devices

    def notify_message(self, event_message: Mapping[str, Any], event_flags: Mapping[Any, list[str]],
                       user_ids: list[int]) -> None:
        """Decide, build and send the notifications of one message."""
        service = self.service()
        if service is None:
            return
        flags = {int(k): list(v) for k, v in event_flags.items()}
        unread = [uid for uid in user_ids if uid != event_message["sender_id"] and "read" not in flags.get(uid, [])]
        devices = self.devices_of(unread) if unread else {}
        # Away or not is asked only of people with a device, now (moments after the send).
        candidates = [(uid, flags.get(uid, []), self.is_online(uid)) for uid in unread if uid in devices]
        if not candidates:
            return
        message = Message.get_or_none(Message.id == event_message["id"])
        if message is None:
            return
        sender = UserProfile.get_by_id(message.sender_id)
        realm = Realm.get_by_id(message.realm_id)
        data = push_message(message, sender, realm)
        subscriptions: dict[int, Subscription] = {}
        followers: set[int] = set()
        if message.stream_id is not None:
            ids = [uid for uid, _f, _o in candidates]
            subscriptions = {s.user_profile_id: s for s in Subscription.select().where(
                (Subscription.stream == message.stream_id) & Subscription.user_profile.in_(ids) & Subscription.active)}
            followers = {row.user_profile_id for row in UserTopic.select(UserTopic.user_profile).where(
                (UserTopic.stream == message.stream_id) & (UserTopic.topic_key == message.topic.casefold())
                & (UserTopic.visibility_policy == TOPIC_FOLLOWED) & UserTopic.user_profile.in_(ids))}
        elif event_message.get("display_recipient") and len(event_message["display_recipient"]) > 2:
            people = sorted(event_message["display_recipient"], key=lambda p: p["id"])
            data.group_user_ids = tuple(p["id"] for p in people)
            data.group_full_names = tuple(p["full_name"] for p in people)
        for user_id, user_flags, online in candidates:
            user = UserProfile.get_or_none(UserProfile.id == user_id)
            if user is None or not user.is_active or user.is_bot:
                continue
            if online and not user_setting(user, "enable_online_push_notifications"):
                continue
            subscription = subscriptions.get(user_id)
            trigger = next((t for t in triggers_for(event_message, user_flags, user_id in followers)
                            if wants_push(user, t, subscription)), None)
            if trigger is None:
                continue
            self.send_message_notification(service, user, realm, data, trigger, user_flags, devices[user_id])

    def send_message_notification(self, service: PushService, user: UserProfile, realm: Realm, data: PushMessage,
                                  trigger: str, flags: list[str], devices: dict[str, list[Any]]) -> None:
        recipient = recipient_of(user, realm, service)
        group = mentioned_group(user, data.rendered_content, flags) if trigger == "mention" else None
        with write_transaction():
            row = UserMessage.get_or_none((UserMessage.user_profile == user.id) & (UserMessage.message == data.id))
            # Read meanwhile, or notified already: nothing to send (Zulip's check).
            if row is None or row.flags & (FLAG_BITS["read"] | ACTIVE_PUSH):
                return
            UserMessage.update(flags=UserMessage.flags.bin_or(ACTIVE_PUSH)).where(
                (UserMessage.user_profile == user.id) & (UserMessage.message == data.id)).execute()
        if devices["fcm"] or devices["apns"]:
            body = push_service.notify_body(recipient, push_service.gcm_message_payload(recipient, data, group),
                                            push_service.apns_message_payload(recipient, data, trigger, group),
                                            devices["fcm"], devices["apns"])
            self.notify(service, user.id, body)
        if devices["e2ee"]:
            self.notify_e2ee(service, user, devices["e2ee"], push_e2ee.message_payload(recipient, data, group))

    def notify_removal(self, user_id: int, message_ids: list[int]) -> None:
        """A "remove" for those of these messages that were notified, now read or deleted."""
        service = self.service()
        if service is None:
            return
        devices = self.devices_of([user_id]).get(user_id)
        if devices is None:  # nothing was sent to this person (or there is nowhere to send now)
            return
        with write_transaction():
            if message_ids:  # by the key
                parts = [UserMessage.message.in_(message_ids)]
            else:  # by the per-user index
                parts = received_conditions()
            notified = sorted({row.message_id for part in parts for row in UserMessage.select(UserMessage.message).where(
                (UserMessage.user_profile == user_id) & (UserMessage.flags.bin_and(ACTIVE_PUSH) != 0) & part)})
            if notified:
                UserMessage.update(flags=UserMessage.flags.bin_and(~ACTIVE_PUSH)).where(
                    (UserMessage.user_profile == user_id) & UserMessage.message.in_(notified)).execute()
        if notified:
            self.send_removal(user_id, notified, devices)

    def send_removal(self, user_id: int, notified: list[int], devices: dict[str, list[Any]] | None = None) -> None:
        """One "remove" for these notified messages to the person's devices."""
        service = self.service()
        devices = devices or self.devices_of([user_id]).get(user_id)
        if service is None or devices is None:
            return
        user = UserProfile.get_by_id(user_id)
        recipient = recipient_of(user, Realm.get_by_id(user.realm_id), service)
        # One notification, with the newest ids only when there are many (Zulip's: APNs allows 4 KB;
        # older notifications were most likely dismissed on the phone already).
        newest = notified[-MAX_REMOVE_IDS:]
        if devices["fcm"] or devices["apns"]:
            body = push_service.notify_body(recipient, push_service.gcm_remove_payload(recipient, newest),
                                            push_service.apns_remove_payload(recipient, newest),
                                            devices["fcm"], devices["apns"])
            self.notify(service, user_id, body)
        if devices["e2ee"]:
            self.notify_e2ee(service, user, devices["e2ee"], push_e2ee.remove_payload(recipient, newest))

    def retrying(self, what: str, call: Callable[[], Any]) -> Any:
        """call(), again (PUSH_NOTIFICATION_ATTEMPTS times, PUSH_NOTIFICATION_RETRY_SECONDS apart)
        while it fails in a way that may pass later; None when it never succeeds or is refused
        (logged, with `what` it was)."""
        attempts = max(1, int(self.config.get("PUSH_NOTIFICATION_ATTEMPTS", 3)))
        for attempt in range(1, attempts + 1):
            try:
                return call()
            except PushServiceRetryLaterError as error:
                if attempt == attempts or self._closed:
                    log.warning("%s not delivered after %s attempts: %s", what, attempt, error.detail)
                    return None
                time.sleep(float(self.config.get("PUSH_NOTIFICATION_RETRY_SECONDS", 10)))
            except PushServiceRefusedError as error:
                log.warning("%s refused by the service: %s", what, error.msg)
                return None
        return None

    def notify(self, service: PushService, user_id: int, body: dict[str, Any]) -> None:
        """push/notify, retried when it may pass later; tokens the service says it deleted are
        forgotten here too."""
        answer = self.retrying(f"push notification to user {user_id}", lambda: push_service.send(
            service, "POST", "push/notify", body, json_body=True, user_agent=USER_AGENT))
        if answer is None:
            return
        deleted = answer.get("deleted_devices") or {}
        stale = [("fcm", t) for t in deleted.get("android_devices") or []] \
            + [("apns", t) for t in deleted.get("apple_devices") or []]
        if stale:
            with write_transaction():
                for kind, token in stale:
                    PushDeviceToken.delete().where((PushDeviceToken.user_profile == user_id)
                                                   & (PushDeviceToken.kind == kind)
                                                   & (PushDeviceToken.token == token)).execute()

    def notify_e2ee(self, service: PushService, user: UserProfile, devices: list[push_e2ee.E2EEDevice],
                    payload: dict[str, Any]) -> None:
        """push/e2ee/notify of one payload to the person's registered devices, retried as
        push/notify is."""
        self.retrying(f"end-to-end encrypted push notification to user {user.id}",
                      lambda: push_devices.send_e2ee_notification(service, user, devices, payload, USER_AGENT))

    def forward_registration(self, job: dict[str, Any]) -> None:
        """A device's token registration, to the service (push_devices.forward_registration)."""
        service = self.service()
        if service is not None:
            self.retrying(f"push registration of device {job['device_id']}",
                          lambda: push_devices.forward_registration(service, job, USER_AGENT))

    def close(self) -> None:
        """Stop the worker; jobs not started are dropped."""
        with self._lock:
            self._closed = True
            thread = self._thread
        while True:
            try:
                self._jobs.get_nowait()
                self._jobs.task_done()
            except queue.Empty:
                break
        if thread is not None:
            self._jobs.put(None)
            thread.join(5)


# ---- Server data ----

def realm_summaries() -> list[push_service.RealmSummary]:
    """Each organization with its active people counted by role, and its bots."""
    summaries = []
    for realm in Realm.select().order_by(Realm.id):
        humans: dict[int, int] = {}
        bots = 0
        for user in UserProfile.select(UserProfile.role, UserProfile.is_bot).where(
                (UserProfile.realm == realm.id) & UserProfile.is_active):
            if user.is_bot:
                bots += 1
            else:
                humans[user.role] = humans.get(user.role, 0) + 1
        summaries.append(push_service.RealmSummary(id=realm.id, host=realm.host, url=realm.url, name=realm.name,
                                                   date_created=realm.date_created, humans_by_role=humans, bots=bots))
    return summaries


def send_server_data(service: PushService, version: str, feature_level: int) -> dict[str, Any]:
    """Zulip's server data upload: ask which rows the service has (server/analytics/status), then
    send the organizations and their role counts (server/analytics). The rows' ids are the time
    in seconds, so that each upload's are newer than the last. Returns the service's answer,
    whose `realms` say whether each organization may push."""
    status = push_service.send(service, "GET", "server/analytics/status", None, user_agent=USER_AGENT)
    realms = realm_summaries()
    row_id = max(int(time.time()), int(status.get("last_realmauditlog_id") or 0) + 1)
    request = push_service.analytics_request(service, realms, row_id, time.time(), version, feature_level)
    return push_service.send(service, "POST", "server/analytics", request, user_agent=USER_AGENT)
