"""DELETE /messages/{message_id}."""

from flask import Blueprint

from chat_appliance.actions.message_delete import do_delete_messages
from chat_appliance.lib.access import access_message
from chat_appliance.lib.message_permissions import check_delete
from chat_appliance.web.params import endpoint

bp = Blueprint("message_delete", __name__)


@bp.delete("/messages/<int:message_id>")
@endpoint()
def delete_message(user, message_id):
    """Delete a message (see lib/message_permissions.py for who may)."""
    message, _flags = access_message(user, message_id)
    check_delete(user, message, message.stream)
    do_delete_messages([message])
