"""Topics of a channel: GET /users/me/{stream_id}/topics, POST /streams/{stream_id}/delete_topic."""

from flask import Blueprint, current_app

from chat_appliance.actions.message_delete import do_delete_topic
from chat_appliance.actions.messages import normalize_topic
from chat_appliance.lib.access import access_stream_by_id, access_stream_for_topic_deletion, require_realm_admin
from chat_appliance.lib.messages import display_topic, stream_topics
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool
from chat_appliance.web.context import limits

bp = Blueprint("topics", __name__)


@bp.get("/users/me/<int:stream_id>/topics")
@endpoint(allow_empty_topic_name=Param(check_bool, default=False))
def get_stream_topics(user, stream_id, allow_empty_topic_name):
    """The channel's topics with their newest message id, newest first. Where the user may not
    read the channel's history (private channel with protected history, or a guest), only the
    topics of messages they received."""
    stream = access_stream_by_id(user, stream_id)
    return {"topics": [{"name": display_topic(name, allow_empty_topic_name), "max_id": max_id}
                       for name, max_id in stream_topics(user, stream)]}


@bp.post("/streams/<int:stream_id>/delete_topic")
@endpoint(topic_name=Param())
def delete_topic(user, stream_id, topic_name):
    """Delete every message of a topic, in batches within a time budget (administrators only)."""
    require_realm_admin(user)
    # Finding 9 (docs/security.md): no topic deletion in a private channel the administrator
    # cannot read; only their own received messages where history is protected.
    stream, received_by = access_stream_for_topic_deletion(user, stream_id)
    topic = normalize_topic(topic_name, limits().max_topic_length)
    complete = do_delete_topic(stream, topic.casefold(), received_by=received_by,
                               time_budget_seconds=current_app.config["DELETE_TOPIC_TIME_BUDGET_SECONDS"])
    return {"complete": complete}
