"""Scheduled messages and reminders: /scheduled_messages and /reminders."""

from flask import Blueprint, request

from chat_appliance.actions.messages import client_name_from_user_agent
from chat_appliance.actions.scheduled_messages import (
    access_scheduled_message,
    do_create_reminder,
    do_delete_scheduled_message,
    do_edit_scheduled_message,
    do_schedule_message,
)
from chat_appliance.lib.scheduled_messages import reminder_dict, scheduled_message_dict, user_scheduled_messages
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, int_range, json_or_string, one_of
from chat_appliance.web.context import limits
from chat_appliance.models import MAX_DATABASE_INT, REMINDER
from chat_appliance.api.messages import access_message

bp = Blueprint("scheduled_messages", __name__)

MESSAGE_TYPES = ("direct", "private", "stream", "channel")
# Timestamps and ids beyond a database integer are refused before any query.
TIMESTAMP = int_range(0, MAX_DATABASE_INT)


@bp.get("/scheduled_messages")
@endpoint()
def get_scheduled_messages(user):
    """The requester's undelivered scheduled messages, soonest first."""
    return {"scheduled_messages": [scheduled_message_dict(sm) for sm in user_scheduled_messages(user)]}


@bp.post("/scheduled_messages")
@endpoint(type=Param(one_of(*MESSAGE_TYPES)), to=Param(json_or_string), content=Param(),
          topic=Param(default=None, aliases=("subject",)), scheduled_delivery_timestamp=Param(TIMESTAMP),
          read_by_sender=Param(check_bool, default=None))
def create_scheduled_message(user, type, to, content, topic, scheduled_delivery_timestamp, read_by_sender):
    """Schedule a channel or direct message."""
    client_name = client_name_from_user_agent(request.headers.get("User-Agent"))
    sm = do_schedule_message(user, message_type=type, to=to, topic=topic, content=content,
                             timestamp=scheduled_delivery_timestamp, read_by_sender=read_by_sender,
                             client_name=client_name, limits=limits())
    return {"scheduled_message_id": sm.id}


@bp.patch("/scheduled_messages/<int:scheduled_message_id>")
@endpoint(type=Param(one_of(*MESSAGE_TYPES), default=None), to=Param(json_or_string, default=None),
          content=Param(default=None), topic=Param(default=None, aliases=("subject",)),
          scheduled_delivery_timestamp=Param(TIMESTAMP, default=None))
def edit_scheduled_message(user, scheduled_message_id, type, to, content, topic, scheduled_delivery_timestamp):
    """Change a scheduled message's audience, topic, content or time."""
    sm = access_scheduled_message(user, scheduled_message_id)
    do_edit_scheduled_message(user, sm, message_type=type, to=to, topic=topic, content=content,
                              timestamp=scheduled_delivery_timestamp, limits=limits())


@bp.delete("/scheduled_messages/<int:scheduled_message_id>")
@endpoint()
def delete_scheduled_message(user, scheduled_message_id):
    """Cancel a scheduled message."""
    do_delete_scheduled_message(access_scheduled_message(user, scheduled_message_id))


@bp.get("/reminders")
@endpoint()
def get_reminders(user):
    """The requester's pending reminders, soonest first."""
    return {"reminders": [reminder_dict(sm) for sm in user_scheduled_messages(user, REMINDER)]}


@bp.post("/reminders")
@endpoint(message_id=Param(TIMESTAMP), scheduled_delivery_timestamp=Param(TIMESTAMP),
          note=Param(default=None))
def create_reminder(user, message_id, scheduled_delivery_timestamp, note):
    """A reminder, from Notification Bot, about a message the requester may read."""
    message, _flags = access_message(user, message_id)
    return {"reminder_id": do_create_reminder(user, message, scheduled_delivery_timestamp, note).id}


@bp.delete("/reminders/<int:reminder_id>")
@endpoint()
def delete_reminder(user, reminder_id):
    """Cancel a reminder."""
    do_delete_scheduled_message(access_scheduled_message(user, reminder_id, delivery_type=REMINDER))
