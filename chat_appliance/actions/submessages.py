"""Submessages (Zulip's POST /submessage): a vote, a new option, a task ticked, on a message's widget."""

from __future__ import annotations

from typing import Any

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.json_input import parse_json
from chat_appliance.lib.messages import message_audience_ids
from chat_appliance.lib.widgets import (
    WIDGET_MSG_TYPE,
    submessages_by_message,
    valid_widget_event,
    widget_type_of,
)
from chat_appliance.lib import event_catalogue
from chat_appliance.models import Message, Stream, SubMessage, UserProfile


def check_submessage(user: UserProfile, message: Message, msg_type: str, content: str) -> Any:
    """The parsed content of a submessage the user may add to this (accessible) message.

    A message gets submessages only if it has a widget, or from its sender (who starts one, as
    a /poll message does); later ones must be changes the widget knows."""
    if msg_type != WIDGET_MSG_TYPE:
        raise JsonableError("Invalid msg_type")
    try:
        data = parse_json(content)  # nesting bounded, as everywhere JSON is read
    except ValueError:  # JsonInputError is one
        raise JsonableError("Invalid json for submessage") from None
    existing = submessages_by_message([message.id])[message.id]
    if not existing:
        if message.sender_id != user.id:
            raise JsonableError("You cannot attach a submessage to this message.")
        return data
    widget_type = widget_type_of(existing)
    if widget_type is not None and not valid_widget_event(widget_type, data, is_author=user.id == message.sender_id):
        raise JsonableError(f"Invalid {widget_type} data")
    return data


def do_add_submessage(user: UserProfile, message: Message, msg_type: str, content: str) -> int:
    """Store the submessage and send it to everyone who has the message; its id."""
    with write_transaction():
        row = SubMessage.create(message=message.id, sender=user.id, msg_type=msg_type, content=content)
    stream = Stream.get_by_id(message.stream_id) if message.stream_id is not None else None
    publish(event_catalogue.submessage(msg_type, content, message.id, user.id, row.id),
            message_audience_ids([message.id], stream))
    return row.id
