"""Who read a message and who is editing it: GET /messages/{id}/read_receipts and
POST /messages/{id}/typing."""

from flask import Blueprint

from chat_appliance.actions.read_receipts import check_read_receipts_enabled, read_receipt_user_ids
from chat_appliance.actions.typing import do_send_message_edit_typing
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import one_of
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.api.messages import access_message

bp = Blueprint("message_activity", __name__)


@bp.get("/messages/<int:message_id>/read_receipts")
@endpoint()
def get_read_receipts(user, message_id):
    """Ids of the users who read a message the requester may read."""
    check_read_receipts_enabled(user.realm)
    message, _flags = access_message(user, message_id)
    return {"user_ids": read_receipt_user_ids(message, user)}


@bp.post("/messages/<int:message_id>/typing")
@endpoint(op=Param(one_of("start", "stop")))
def set_message_edit_typing(user, message_id, op):
    """Tell the message's audience that the requester started or stopped editing it."""
    message, _flags = access_message(user, message_id)
    stream = message.stream if message.stream_id is not None else None
    setting, kind = (("send_stream_typing_notifications", "channel") if stream is not None
                     else ("send_private_typing_notifications", "direct"))
    if not user_setting(user, setting):
        raise JsonableError(f"User has disabled typing notifications for {kind} messages")
    do_send_message_edit_typing(user, op, message, stream)
