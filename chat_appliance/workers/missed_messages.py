"""Missed-message emails: a direct message or a mention that reaches someone away is mailed to
them after a short delay, with what else arrived for them meanwhile.

Zulip's rules (facts, not code):
- Away means no event queue of theirs that takes messages: a client that stops polling loses its
  queue after EVENT_QUEUE_IDLE_SECONDS, and from then on the person counts as offline (Zulip's
  receiver_is_off_zulip). Someone with a client open sees the message there instead.
- Direct messages and personal or group mentions are mailed when enable_offline_email_notifications
  is on; wildcard mentions (@**all**, @**topic**) also need wildcard_mentions_notify. Any other
  message in a topic the person follows is mailed when enable_followed_topic_email_notifications is on.
- The first such message starts the delay (Zulip batches for two minutes); what arrives for that
  person before it ends goes in the same batch, and the batch is mailed as one email per
  conversation. A message read (or deleted) by then is left out; settings are read again then.

The listener sees committed message events (as the service bots do), decides from the event
(flags, the queues in memory), and keeps pending batches in memory. Its only database work is one
indexed read of the topic's followers, and only for a channel message that leaves somebody away
with no other reason to be mailed. One timer thread mails due batches. Batches pending when the server stops are
lost (a restart within the delay costs those notifications, never a duplicate).
"""

import contextvars
import html
import logging
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any, Callable, Dict, List, Mapping, Optional

from chat_appliance.clients.send_email import EmailNotConfiguredError, Mailer, build_message
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.lib.system_bots import without_external_notifications
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import (FLAG_BITS, TOPIC_FOLLOWED, Message, Realm, UserMessage, UserProfile, UserTopic,
                                   database)
from chat_appliance.workers.base import WorkerContext

log = logging.getLogger(__name__)

MENTION_FLAGS = ("mentioned", "group_mentioned")
WILDCARD_FLAGS = ("stream_wildcard_mentioned", "topic_wildcard_mentioned")


@dataclass
class Missed:
    """One message someone missed: what the event said about it."""

    message_id: int
    trigger: str  # "direct_message", "mention", "wildcard_mention" or "followed_topic"
    conversation: tuple  # ("dm", sorted ids) or ("channel", stream id, topic)
    names: Dict[int, str] = field(default_factory=dict)  # DM participants' names, from the event
    channel_name: str = ""


def missed_trigger(message: Mapping[str, Any], flags: List[str]) -> Optional[str]:
    """Why a message would be mailed to a recipient with these flags, or None."""
    if "read" in flags:
        return None
    if message["type"] == "private":
        return "direct_message"
    if any(f in flags for f in MENTION_FLAGS):
        return "mention"
    if any(f in flags for f in WILDCARD_FLAGS):
        return "wildcard_mention"
    return None


def topic_followers(stream_id: int, topic: str) -> set[int]:
    """Who follows this topic (user_topics' visibility policy "followed")."""
    return {row.user_profile_id for row in UserTopic.select(UserTopic.user_profile).where(
        (UserTopic.stream == stream_id) & (UserTopic.topic_key == topic.casefold())
        & (UserTopic.visibility_policy == TOPIC_FOLLOWED))}


def wants_email(user: UserProfile, trigger: str) -> bool:
    """The person's settings for a mail about this trigger."""
    if trigger == "followed_topic":
        return bool(user_setting(user, "enable_followed_topic_email_notifications"))
    if not user_setting(user, "enable_offline_email_notifications"):
        return False
    return trigger != "wildcard_mention" or bool(user_setting(user, "wildcard_mentions_notify"))


def hash_encode(text: str) -> str:
    """Zulip's URL hash encoding: percent-encoding with "." in place of "%"."""
    return urllib.parse.quote(str(text), safe="").replace(".", "%2E").replace("%", ".")


def slug(name: str) -> str:
    return re.sub(r"[^\w-]+", "-", name)


def conversation_url(realm_url: str, missed: Missed, recipient_id: int) -> str:
    """The web client's link to the conversation, at the first missed message."""
    base = realm_url.rstrip("/") + "/#narrow/"
    if missed.conversation[0] == "dm":
        others = [i for i in missed.conversation[1] if i != recipient_id] or [recipient_id]
        name = missed.names.get(others[0], "") if len(others) == 1 else "group"
        return base + f"dm/{hash_encode(','.join(map(str, others)) + '-' + slug(name))}/near/{missed.message_id}"
    _kind, stream_id, topic = missed.conversation
    return (base + f"channel/{hash_encode(f'{stream_id}-{slug(missed.channel_name)}')}/topic/{hash_encode(topic)}"
            f"/near/{missed.message_id}")


def absolute_links(rendered: str, realm_url: str) -> str:
    """Rendered HTML whose server-relative links (uploads, avatars, narrows) work from a mailbox."""
    return re.sub(r'(href|src)="/(?!/)', lambda m: f'{m.group(1)}="{realm_url.rstrip("/")}/', rendered)


def subject_for(missed: Missed, recipient_id: int, senders: List[str]) -> str:
    if missed.conversation[0] == "channel":
        return f"#{missed.channel_name} > {missed.conversation[2]}"
    others = [i for i in missed.conversation[1] if i != recipient_id]
    if len(others) <= 1:
        return f"DMs with {senders[0]}"
    return "Group DMs with " + ", ".join(sorted(missed.names.get(i, "") for i in others))


def missed_email(user: UserProfile, realm: Realm, batch: List[Missed], messages: List[Message],
                 noreply: str) -> EmailMessage:
    """One mail for one conversation's missed messages (oldest first)."""
    senders = [m.sender.full_name for m in messages]
    first = batch[0]
    url = conversation_url(realm.url, first, user.id)
    subject = subject_for(first, user.id, senders)
    text_parts, html_parts = [], []
    for message in messages:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(message.date_sent))
        text_parts.append(f"{message.sender.full_name} ({when}):\n{message.content}")
        html_parts.append(f"<div style=\"margin:0 0 1em\"><p style=\"margin:0;color:#555\"><b>"
                          f"{html.escape(message.sender.full_name)}</b> {html.escape(when)}</p>"
                          f"{absolute_links(message.rendered_content, realm.url)}</div>")
    reason = {"direct_message": "you received direct messages", "mention": "you were mentioned",
              "wildcard_mention": "everyone in a conversation was mentioned",
              "followed_topic": "a topic you follow got new messages"}[first.trigger]
    footer = (f"You are receiving this because {reason} while you were away from {realm.name}. "
              f"Turn these emails off in Settings > Notifications ({realm.url.rstrip('/')}).")
    text = "\n\n".join(text_parts) + f"\n\nReply in {realm.name}:\n{url}\n\n--\n{footer}\n"
    body = ("<!doctype html>\n<html><body>\n" + "\n".join(html_parts)
            + f'\n<p><a href="{html.escape(url, quote=True)}">Reply in {html.escape(realm.name)}</a></p>'
            + f'\n<p style="color:#666;font-size:small">{html.escape(footer)}</p>\n</body></html>\n')
    return build_message(sender_name=f"{senders[-1]} ({realm.name})", noreply=noreply, to_name=user.full_name,
                         to_email=user.delivery_email, subject=subject, text=text, html_body=body)


class MissedMessageNotifier:
    """The worker (workers/base.py) that collects missed messages and mails them after the delay.

    `is_online(user_id)` says whether the person has an event queue taking messages (app.py
    asks the app's QueueManager); `config` is read at each message (MISSED_MESSAGE_EMAIL_DELAY_SECONDS)."""

    def __init__(self, config: Mapping[str, Any], mailer: Mailer, is_online: Callable[[int], bool],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.mailer = mailer
        self.is_online = is_online
        self.clock = clock
        self._pending: Dict[int, tuple] = {}  # user id -> (due, [Missed])
        self._changed = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    @classmethod
    def start(cls, context: WorkerContext) -> "MissedMessageNotifier":
        return cls(context.config, context.mailer(), context.is_online)

    def __call__(self, event: Mapping[str, Any], user_ids: List[int]) -> None:
        """Bus listener: note which recipients missed this message; no database work."""
        if event.get("type") != "message" or not self.mailer.configured:
            return
        message = event["message"]
        if without_external_notifications(message):
            return
        flags = {int(k): v for k, v in (event.get("flags") or {}).items()}
        noted = []
        unmentioned = []  # unread, in a channel, with no other reason to be mailed
        for user_id in user_ids:
            if user_id == message["sender_id"]:
                continue
            user_flags = flags.get(user_id, [])
            trigger = missed_trigger(message, user_flags)
            if trigger is None:
                if message["type"] == "stream" and "read" not in user_flags:
                    unmentioned.append(user_id)
            elif not self.is_online(user_id):
                noted.append((user_id, self._missed(message, trigger)))
        if unmentioned:
            # The followers first: asking the queues whether each of a large channel's members is
            # away would cost every send; only followers can be mailed for this message.
            followers = topic_followers(message["stream_id"], message["subject"])
            noted.extend((user_id, self._missed(message, "followed_topic")) for user_id in unmentioned
                         if user_id in followers and not self.is_online(user_id))
        if noted:
            self._add(noted)

    @staticmethod
    def _missed(message: Mapping[str, Any], trigger: str) -> Missed:
        if message["type"] == "private":
            people = message["display_recipient"]
            return Missed(message["id"], trigger, ("dm", tuple(sorted(p["id"] for p in people))),
                          names={p["id"]: p["full_name"] for p in people})
        return Missed(message["id"], trigger, ("channel", message["stream_id"], message["subject"]),
                      channel_name=message["display_recipient"])

    def _add(self, noted: List[tuple]) -> None:
        delay = float(self.config.get("MISSED_MESSAGE_EMAIL_DELAY_SECONDS", 120))
        with self._changed:
            if self._closed:
                return
            for user_id, missed in noted:
                due, batch = self._pending.get(user_id, (self.clock() + delay, []))
                batch.append(missed)
                self._pending[user_id] = (due, batch)
            if self._thread is None:
                # The timer runs in a copy of this context: the publishing app's runtime (database).
                context = contextvars.copy_context()
                self._thread = threading.Thread(target=context.run, args=(self._run,), name="missed-messages",
                                                daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._closed:
                    now = self.clock()
                    due = [uid for uid, (at, _b) in self._pending.items() if at <= now]
                    if due:
                        break
                    wait = min((at for at, _b in self._pending.values()), default=now + 60) - now
                    self._changed.wait(max(0.01, wait))
                if self._closed:
                    return
                batches = [(uid, self._pending.pop(uid)[1]) for uid in due]
            for user_id, batch in batches:
                try:
                    with database.connection_context():
                        self.mail_batch(user_id, batch)
                except Exception as error:  # one person's batch must never stop the others'
                    log_failure(log, error, "missed-message email for user %s failed", user_id)

    def mail_batch(self, user_id: int, batch: List[Missed]) -> None:
        """Mail what is still unread of a person's batch, one email per conversation."""
        user = UserProfile.get_or_none(UserProfile.id == user_id)
        if user is None or not user.is_active or user.is_bot:
            return
        batch = [m for m in batch if wants_email(user, m.trigger)]
        read = FLAG_BITS["read"]
        unread = {row.message_id for row in UserMessage.select(UserMessage.message).where(
            (UserMessage.user_profile == user_id) & UserMessage.message.in_([m.message_id for m in batch])
            & (UserMessage.flags.bin_and(read) == 0))}
        batch = [m for m in batch if m.message_id in unread]
        if not batch:
            return
        realm = Realm.get_by_id(user.realm_id)
        conversations: Dict[tuple, List[Missed]] = {}
        for missed in batch:
            conversations.setdefault(missed.conversation, []).append(missed)
        for group in conversations.values():
            rows = {m.id: m for m in Message.select(Message, UserProfile).join(
                UserProfile, on=(Message.sender == UserProfile.id)).where(Message.id.in_([m.message_id for m in group]))}
            messages = [rows[m.message_id] for m in sorted(group, key=lambda m: m.message_id) if m.message_id in rows]
            if not messages:
                continue
            try:
                self.mailer.send(missed_email(user, realm, group, messages, self.mailer.noreply()))
            except EmailNotConfiguredError:
                return

    def close(self) -> None:
        """Stop the timer; pending batches are dropped (see the module's note)."""
        with self._changed:
            self._closed = True
            self._pending.clear()
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(5)
