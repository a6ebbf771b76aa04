"""POST /typing."""

from flask import Blueprint

from chat_appliance.actions.typing import do_send_direct_typing, do_send_stream_typing
from chat_appliance.lib.access import access_stream_by_id, access_users_by_ids
from chat_appliance.lib.errors import JsonableError, MissingArgumentError, ParamError
from chat_appliance.models import EMPTY_TOPIC_DISPLAY_NAME
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_int, json_or_string, list_of, one_of
from chat_appliance.lib.user_settings import user_setting

bp = Blueprint("typing", __name__)

# Clients that do not declare empty_topic_name send one of these for the empty topic.
EMPTY_TOPIC_ALIASES = ("(no topic)", EMPTY_TOPIC_DISPLAY_NAME)


def check_typing_to(var_name, value):
    """User ids. Emails were accepted until Zulip feature level 11 and older clients (zulip-js)
    still send them: say so, rather than that the value is not JSON."""
    decoded = json_or_string(var_name, value)
    items = decoded if isinstance(decoded, list) else [decoded]
    if any(isinstance(item, str) and "@" in item for item in items):
        raise ParamError(f"Invalid '{var_name}': user emails are no longer accepted; send user IDs")
    return list_of(check_int)(var_name, value)


@bp.post("/typing")
@endpoint(
    # `private` was removed at feature level 215; `channel` added at 248.
    type=Param(one_of("direct", "stream", "channel"), default="direct"),
    op=Param(one_of("start", "stop")),
    to=Param(check_typing_to, default=None),
    stream_id=Param(check_int, default=None),
    topic=Param(default=None),
)
def set_typing_status(user, type, op, to, stream_id, topic):  # noqa: A002 - the API's name
    """Tell the other participants that the requester started or stopped composing."""
    if type == "direct":
        if to is None:
            raise MissingArgumentError("to")
        if not to:
            raise JsonableError("Empty 'to' list")
        if not user_setting(user, "send_private_typing_notifications"):
            raise JsonableError("User has disabled typing notifications for direct messages")
        recipients = access_users_by_ids(user, to, allow_deactivated=False)
        do_send_direct_typing(user, op, recipients)
        return
    if stream_id is None:
        raise JsonableError("Missing channel ID")
    if topic is None:
        raise MissingArgumentError("topic")
    if not user_setting(user, "send_stream_typing_notifications"):
        raise JsonableError("User has disabled typing notifications for channel messages")
    stream = access_stream_by_id(user, stream_id)
    topic = topic.strip()
    do_send_stream_typing(user, op, stream, "" if topic in EMPTY_TOPIC_ALIASES else topic)
