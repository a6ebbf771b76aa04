"""Topics of a channel: GET /users/me/{stream_id}/topics, POST /streams/{stream_id}/delete_topic."""

from flask import Blueprint, current_app

from ..actions.message_delete import do_delete_topic
from ..actions.messages import normalize_topic
from ..lib.access import access_stream_by_id, require_realm_admin
from ..lib.messages import display_topic, stream_topics
from ..lib.params import Param, check_bool, endpoint
from .context import limits

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
    stream = access_stream_by_id(user, stream_id)
    topic = normalize_topic(topic_name, limits().max_topic_length)
    complete = do_delete_topic(stream, topic.casefold(),
                               time_budget_seconds=current_app.config["DELETE_TOPIC_TIME_BUDGET_SECONDS"])
    return {"complete": complete}
