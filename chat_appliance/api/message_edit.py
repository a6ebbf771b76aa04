"""Editing a message and reading its history: PATCH /messages/{id}, GET /messages/{id}/history."""

from flask import Blueprint

from chat_appliance.actions.message_edit import PROPAGATE_MODES, check_update_message, do_update_message
from chat_appliance.lib.access import access_message
from chat_appliance.lib.message_history import edit_snapshots
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_int, one_of
from chat_appliance.web.context import limits

bp = Blueprint("message_edits", __name__)


@bp.patch("/messages/<int:message_id>")
@endpoint(
    content=Param(default=None),
    topic=Param(default=None, aliases=("subject",)),
    stream_id=Param(check_int, default=None),
    propagate_mode=Param(one_of(*PROPAGATE_MODES), default="change_one"),
    send_notification_to_old_thread=Param(check_bool, default=False),
    send_notification_to_new_thread=Param(check_bool, default=True),
    prev_content_sha256=Param(default=None),
)
def update_message(user, message_id, content, topic, stream_id, propagate_mode, send_notification_to_old_thread,
                   send_notification_to_new_thread, prev_content_sha256):
    """Edit a message's content, move it (and others of its topic) to another topic or channel,
    or resolve its topic."""
    message, _flags = access_message(user, message_id)
    plan = check_update_message(user, message, content=content, topic=topic, stream_id=stream_id,
                                propagate_mode=propagate_mode, notify_old=send_notification_to_old_thread,
                                notify_new=send_notification_to_new_thread, limits=limits(),
                                prev_content_sha256=prev_content_sha256)
    do_update_message(user, plan)
    return {"detached_uploads": []}


@bp.get("/messages/<int:message_id>/history")
@endpoint(allow_empty_topic_name=Param(check_bool, default=False))
def get_message_history(user, message_id, allow_empty_topic_name):
    """Every version of a message, oldest first, as the organization's policy lets it be seen."""
    message, _flags = access_message(user, message_id)
    return {"message_history": edit_snapshots(message, user.realm, allow_empty_topic_name=allow_empty_topic_name)}
