"""POST /submessage: a change to a message's widget (a poll's vote or option, a todo's task)."""

from flask import Blueprint

from chat_appliance.actions.submessages import check_submessage, do_add_submessage
from chat_appliance.lib.access import access_message
from chat_appliance.lib.validators import check_int
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("submessages", __name__)


@bp.post("/submessage")
@endpoint(message_id=Param(check_int), msg_type=Param(), content=Param())
def add_submessage(user, message_id, msg_type, content):
    """Add a submessage to a message the requester can read."""
    message, _flags = access_message(user, message_id)
    check_submessage(user, message, msg_type, content)
    do_add_submessage(user, message, msg_type, content)
