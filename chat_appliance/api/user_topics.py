"""Topic visibility: POST /user_topics, GET /user_topics, and the legacy
PATCH /users/me/subscriptions/muted_topics."""

from flask import Blueprint

from chat_appliance.actions.messages import normalize_topic
from chat_appliance.actions.user_topics import do_set_user_topic
from chat_appliance.lib.user_topics import user_topic_rows
from chat_appliance.lib.access import access_stream_by_id, access_stream_by_name
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_int, one_of
from chat_appliance.lib.serializers import user_topic_dict
from chat_appliance.models import TOPIC_INHERIT, TOPIC_MUTED
from chat_appliance.web.context import limits

bp = Blueprint("user_topics", __name__)


@bp.post("/user_topics")
@endpoint(stream_id=Param(check_int), topic=Param(), visibility_policy=Param(one_of(0, 1, 2, 3, parser=check_int)))
def update_user_topic(user, stream_id, topic, visibility_policy):
    """Mute, unmute, follow, or reset a topic."""
    stream = access_stream_by_id(user, stream_id)
    do_set_user_topic(user, stream, normalize_topic(topic, limits().max_topic_length), visibility_policy)


@bp.get("/user_topics")
@endpoint()
def get_user_topics(user):
    """The requester's topic visibility policies."""
    return {"user_topics": [user_topic_dict(row) for row in user_topic_rows(user)]}


@bp.patch("/users/me/subscriptions/muted_topics")
@endpoint(op=Param(one_of("add", "remove")), topic=Param(), stream=Param(default=None),
          stream_id=Param(check_int, default=None))
def mute_topic(user, op, topic, stream, stream_id):
    """Legacy muting (the zulip library's mute_topic)."""
    if (stream is None) == (stream_id is None):
        raise JsonableError("Please supply 'stream' or 'stream_id'.")
    target = access_stream_by_id(user, stream_id) if stream_id is not None else access_stream_by_name(user, stream)
    do_set_user_topic(user, target, normalize_topic(topic, limits().max_topic_length),
                      TOPIC_MUTED if op == "add" else TOPIC_INHERIT)
