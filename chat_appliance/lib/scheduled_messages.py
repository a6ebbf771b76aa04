"""Reads and shapes of scheduled messages and reminders (actions/scheduled_messages.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import SEND_LATER, ScheduledMessage
from chat_appliance.models.base import raw_select

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's limit on a reminder's note (reported as max_reminder_note_length).
MAX_REMINDER_NOTE_LENGTH = 1000


def next_due_timestamp() -> int | None:
    """When the next pending message or reminder is due, or None."""
    row = (ScheduledMessage.select(ScheduledMessage.scheduled_timestamp)
           .where(~ScheduledMessage.delivered & ~ScheduledMessage.failed)
           .order_by(ScheduledMessage.scheduled_timestamp).first())
    return row.scheduled_timestamp if row else None


def scheduled_message_dict(sm: ScheduledMessage) -> JSONDict:
    """A scheduled message as GET /scheduled_messages and its events give it."""
    data = {
        "scheduled_message_id": sm.id,
        "type": sm.type,
        "to": sm.to,
        "content": sm.content,
        "rendered_content": sm.rendered_content,
        "scheduled_delivery_timestamp": sm.scheduled_timestamp,
        "failed": sm.failed,
    }
    if sm.type == "stream":
        data["topic"] = sm.topic
    return data


def reminder_dict(sm: ScheduledMessage) -> JSONDict:
    """A reminder as GET /reminders and its events give it."""
    return {
        "reminder_id": sm.id,
        "type": "private",
        "to": sm.to,
        "content": sm.content,
        "rendered_content": sm.rendered_content,
        "scheduled_delivery_timestamp": sm.scheduled_timestamp,
        "failed": sm.failed,
        "reminder_target_message_id": sm.reminder_target_message_id,
    }


def user_scheduled_messages(user: UserProfile, delivery_type: int = SEND_LATER) -> list[ScheduledMessage]:
    """The user's undelivered scheduled messages (or reminders), soonest first. SQL written
    once (raw_select): /register asks twice, and peewee's building cost more than the query."""
    return raw_select(ScheduledMessage, '"sender_id" = {p} AND "delivery_type" = {p} AND NOT "delivered"'
                                        ' ORDER BY "scheduled_timestamp", "id"', user.id, delivery_type)
