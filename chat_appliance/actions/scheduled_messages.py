"""Scheduled messages ("send later") and reminders: create, edit, delete, and delivery when due.

Delivery is `deliver_due_messages(now, limits)`, which the scheduler (chat_appliance/server/scheduler.py)
calls in the server process, with the app's limits given to it when it was made; it takes the
time as an argument so that tests choose the clock. A message
that cannot be sent when due (its channel was archived, a recipient deactivated) is kept, marked
`failed`, and Notification Bot tells its sender, as Zulip does; editing it with a new time
schedules it again.

Events go to the owner only: scheduled_messages add/update/remove and reminders add/remove.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import logging

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.models import REMINDER, SEND_LATER, ScheduledMessage, UserProfile, now
from chat_appliance.lib.rendering import render_message
from chat_appliance.actions.messages import (
    access_stream_for_send,
    check_content,
    check_send_message,
    internal_send_direct_message,
    normalize_topic,
    resolve_direct_recipients,
)
from chat_appliance.lib.scheduled_messages import MAX_REMINDER_NOTE_LENGTH, reminder_dict, scheduled_message_dict
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Message, Realm

log = logging.getLogger(__name__)

# A reminder quotes at most this much of its message, so that quote, link and note stay within
# the message length limit whatever the message's length.
MAX_REMINDER_QUOTE_LENGTH = 2000


def check_delivery_time(timestamp: int, at: int | None = None) -> int:
    """A time in the future."""
    if timestamp <= (now() if at is None else at):
        raise JsonableError("Scheduled delivery time must be in the future.")
    return timestamp


def check_target(sender: UserProfile, message_type: str, to: Any, topic: str | None,
                 limits: Limits) -> tuple[str, Any, str]:
    """(API type, stored `to`, topic) after the checks sending would make now: the channel exists
    and the sender may post there, or the direct-message recipients exist and are active.
    `limits` (config.Limits) bounds the topic."""
    if message_type in ("stream", "channel"):
        if isinstance(to, list) and len(to) == 1:
            to = to[0]
        if isinstance(to, bool) or not isinstance(to, int):
            raise JsonableError("Invalid channel ID")
        stream = access_stream_for_send(sender, to)
        if topic is None:
            raise JsonableError("Missing topic")
        topic = normalize_topic(topic, limits.max_topic_length)
        if topic == "" and (sender.realm.settings or {}).get("mandatory_topics"):
            raise JsonableError("Topics are required in this organization.")
        return "stream", stream.id, topic
    if isinstance(to, int) and not isinstance(to, bool):
        to = [to]
    if not isinstance(to, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in to):
        raise JsonableError("Invalid user ID")
    users = resolve_direct_recipients(sender, to)
    recipients = sorted(u.id for u in users if u.id != sender.id) or [sender.id]
    return "private", recipients, ""


def render(sender: UserProfile, content: str) -> str:
    return render_message(content, realm=sender.realm, sender=sender).html


def do_schedule_message(sender: UserProfile, *, message_type: str, to: Any, topic: str | None, content: str,
                        timestamp: int, read_by_sender: bool | None, client_name: str,
                        limits: Limits) -> ScheduledMessage:
    """Store a message to send at `timestamp`; the sender's clients get scheduled_messages add.
    `limits` (config.Limits) bounds what the sender writes, as for a message sent now."""
    content = check_content(content, limits.max_message_length)
    message_type, to, topic = check_target(sender, message_type, to, topic, limits)
    check_delivery_time(timestamp)
    with write_transaction():
        sm = ScheduledMessage.create(realm=sender.realm_id, sender=sender.id, delivery_type=SEND_LATER,
                                     type=message_type, to=to, topic=topic, content=content,
                                     rendered_content=render(sender, content), scheduled_timestamp=timestamp,
                                     read_by_sender=read_by_sender, sending_client=client_name)
    publish(event_catalogue.scheduled_messages_add([scheduled_message_dict(sm)]), [sender.id])
    return sm


def access_scheduled_message(user: UserProfile, scheduled_message_id: int, *,
                             delivery_type: int = SEND_LATER) -> ScheduledMessage:
    """The user's undelivered scheduled message (or reminder), else Zulip's 404."""
    sm = ScheduledMessage.get_or_none((ScheduledMessage.id == scheduled_message_id)
                                      & (ScheduledMessage.sender == user.id)
                                      & (ScheduledMessage.delivery_type == delivery_type)
                                      & ~ScheduledMessage.delivered)
    if sm is None:
        what = "Reminder" if delivery_type == REMINDER else "Scheduled message"
        raise JsonableError(f"{what} does not exist", http_status=404)
    return sm


def do_edit_scheduled_message(sender: UserProfile, sm: ScheduledMessage, *, message_type: str | None,
                              to: list[int] | None, topic: str | None, content: str | None, timestamp: int | None,
                              limits: Limits) -> None:
    """Change any of type, recipients, topic, content and time (the Zulip rules: a new type needs
    `to`, and a channel type a topic; a failed message needs a new time). Editing clears `failed`."""
    changes: JSONDict = {}
    if message_type is not None:
        if to is None:
            raise JsonableError("Recipient required when updating type of scheduled message.")
        if message_type in ("stream", "channel") and topic is None:
            raise JsonableError("Topic required when updating scheduled message type to channel.")
    if to is not None or message_type is not None:
        new_type = message_type or sm.type
        new_topic = topic if topic is not None else sm.topic
        changes["type"], changes["to"], changes["topic"] = check_target(
            sender, new_type, to if to is not None else sm.to, new_topic, limits)
    elif topic is not None and sm.type == "stream":
        changes["type"], changes["to"], changes["topic"] = check_target(sender, "stream", sm.to, topic, limits)
    if content is not None:
        changes["content"] = check_content(content, limits.max_message_length)
        changes["rendered_content"] = render(sender, changes["content"])
    if timestamp is not None:
        changes["scheduled_timestamp"] = check_delivery_time(timestamp)
    elif sm.failed:
        raise JsonableError("Scheduled delivery time must be in the future.")
    changes["failed"], changes["failure_message"] = False, None
    with write_transaction():
        for key, value in changes.items():
            setattr(sm, key, value)
        sm.save()
    publish(event_catalogue.scheduled_messages_update(scheduled_message_dict(sm)), [sender.id])


def do_delete_scheduled_message(sm: ScheduledMessage) -> None:
    """Cancel a scheduled message or a reminder."""
    with write_transaction():
        ScheduledMessage.delete().where(ScheduledMessage.id == sm.id).execute()
    if sm.delivery_type == REMINDER:
        publish(event_catalogue.reminders_remove(sm.id), [sm.sender_id])
    else:
        publish(event_catalogue.scheduled_messages_remove(sm.id), [sm.sender_id])


# --- reminders ---------------------------------------------------------------------------------


def message_link(realm: Realm, message: Message) -> str:
    """A link that opens the message in the web app."""
    return f"{realm.url.rstrip('/')}/#narrow/id/{message.id}"


def reminder_text(user: UserProfile, message: Message, note: str | None) -> str:
    """What Notification Bot will send: the message quoted with a link, then the note."""
    sender = message.sender
    excerpt = message.content
    if len(excerpt) > MAX_REMINDER_QUOTE_LENGTH:
        excerpt = excerpt[:MAX_REMINDER_QUOTE_LENGTH] + "…"
    quoted = "\n".join("> " + line for line in excerpt.splitlines()) or "> "
    text = (f"Here is the reminder you asked for, about [a message]({message_link(user.realm, message)}) "
            f"from @_**{sender.full_name}|{sender.id}**:\n\n{quoted}")
    if note:
        text += f"\n\nYour note: {note}"
    return text


def do_create_reminder(user: UserProfile, message: Message, timestamp: int, note: str | None) -> ScheduledMessage:
    """A reminder about a message the user may read, sent to them by Notification Bot at `timestamp`."""
    check_delivery_time(timestamp)
    if note is not None and len(note) > MAX_REMINDER_NOTE_LENGTH:
        raise JsonableError(f"Maximum reminder note length: {MAX_REMINDER_NOTE_LENGTH} characters")
    content = reminder_text(user, message, note)
    with write_transaction():
        sm = ScheduledMessage.create(realm=user.realm_id, sender=user.id, delivery_type=REMINDER, type="private",
                                     to=[user.id], topic="", content=content,
                                     rendered_content=render(user, content), scheduled_timestamp=timestamp,
                                     read_by_sender=False, sending_client="Internal",
                                     reminder_target_message_id=message.id)
    publish(event_catalogue.reminders_add([reminder_dict(sm)]), [user.id])
    return sm


# --- delivery ----------------------------------------------------------------------------------


def notification_bot(realm: Realm) -> UserProfile:

    return system_bot(realm, NOTIFICATION_BOT[0])


def send_scheduled(sm: ScheduledMessage, limits: Limits) -> int:
    """Send one due message as its sender (or, for a reminder, from Notification Bot), within
    `limits` (config.Limits); returns the new message's id. Raises JsonableError when it cannot be
    sent any more."""
    sender = UserProfile.get_by_id(sm.sender_id)
    if not sender.is_active:
        raise JsonableError("Account is deactivated")
    if sm.delivery_type == REMINDER:
        message_id, _policy = internal_send_direct_message(notification_bot(sender.realm), sender, sm.content)
        return message_id
    message_type = "stream" if sm.type == "stream" else "private"
    message_id, _policy = check_send_message(sender, message_type=message_type, to=sm.to,
                                             topic=sm.topic if message_type == "stream" else None,
                                             content=sm.content, client_name=sm.sending_client,
                                             limits=limits, read_by_sender=sm.read_by_sender)
    return message_id


def mark_delivered(sm: ScheduledMessage, message_id: int) -> None:
    with write_transaction():
        ScheduledMessage.update(delivered=True, delivered_message_id=message_id).where(
            ScheduledMessage.id == sm.id).execute()
    if sm.delivery_type == REMINDER:
        publish(event_catalogue.reminders_remove(sm.id), [sm.sender_id])
    else:
        publish(event_catalogue.scheduled_messages_remove(sm.id), [sm.sender_id])


def mark_failed(sm: ScheduledMessage, reason: str) -> None:
    """Keep the message, flagged failed, and tell its sender why."""
    with write_transaction():
        ScheduledMessage.update(failed=True, failure_message=reason).where(ScheduledMessage.id == sm.id).execute()
    sm.failed, sm.failure_message = True, reason
    if sm.delivery_type == REMINDER:
        return  # Zulip's reminders list shows failed=true; the reminder itself cannot be re-sent to them
    publish(event_catalogue.scheduled_messages_update(scheduled_message_dict(sm)), [sm.sender_id])
    sender = UserProfile.get_by_id(sm.sender_id)
    if sender.is_active:
        internal_send_direct_message(
            notification_bot(sender.realm), sender,
            f"A message you scheduled could not be sent when it was due: {reason}\n\n"
            "It is still in your scheduled messages; edit it with a new time to try again.")


def deliver_due_messages(at: int, limits: Limits) -> list[int]:
    """Send every scheduled message and reminder due at or before `at` (UNIX seconds), oldest
    first, within `limits` (the app's config.Limits). Returns the ids delivered."""
    due = list(ScheduledMessage.select().where(~ScheduledMessage.delivered & ~ScheduledMessage.failed
                                               & (ScheduledMessage.scheduled_timestamp <= at))
               .order_by(ScheduledMessage.scheduled_timestamp, ScheduledMessage.id))
    delivered = []
    for sm in due:
        try:
            message_id = send_scheduled(sm, limits)
        except JsonableError as error:
            mark_failed(sm, error.msg)
            continue
        mark_delivered(sm, message_id)
        delivered.append(sm.id)
    return delivered
