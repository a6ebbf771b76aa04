"""Topics of a channel: GET /users/me/{stream_id}/topics, POST /streams/{stream_id}/delete_topic."""

from flask import Blueprint, current_app
from peewee import fn

from ..actions.message_delete import do_delete_topic
from ..actions.messages import normalize_topic
from ..lib.access import access_stream_by_id, can_read_stream_history, is_subscribed, require_realm_admin
from ..lib.errors import JsonableError
from ..lib.messages import display_topic
from ..lib.params import Param, check_bool, endpoint
from ..models import Message, UserMessage

bp = Blueprint("topics", __name__)


@bp.get("/users/me/<int:stream_id>/topics")
@endpoint(allow_empty_topic_name=Param(check_bool, default=False))
def get_stream_topics(user, stream_id, allow_empty_topic_name):
    """The channel's topics with their newest message id, newest first. Where the user may not
    read the channel's history (private channel with protected history, or a guest), only the
    topics of messages they received."""
    stream = access_stream_by_id(user, stream_id)
    query = Message.select(fn.MAX(Message.id).alias("max_id")).where(Message.recipient == stream.recipient_id)
    if not can_read_stream_history(user, stream):
        query = query.join(UserMessage, on=(UserMessage.message == Message.id)).where(
            UserMessage.user_profile == user.id)
    rows = query.group_by(Message.topic_key).order_by(fn.MAX(Message.id).desc()).dicts()
    # The name is that of the topic's newest message (topics differing only in case are one).
    names = {m.id: m.topic for m in Message.select(Message.id, Message.topic).where(
        Message.id.in_([row["max_id"] for row in rows]))}
    return {"topics": [{"name": display_topic(names[row["max_id"]], allow_empty_topic_name),
                        "max_id": row["max_id"]} for row in rows]}


@bp.post("/streams/<int:stream_id>/delete_topic")
@endpoint(topic_name=Param())
def delete_topic(user, stream_id, topic_name):
    """Delete every message of a topic, in batches within a time budget (administrators only)."""
    require_realm_admin(user)
    stream = access_stream_by_id(user, stream_id)
    # Administrators see private channels exist, but only subscribers reach their content (Zulip's
    # access_stream_by_id without allow_realm_admin); where history is protected, only the
    # messages the administrator received are theirs to delete.
    if stream.invite_only and not is_subscribed(user, stream):
        raise JsonableError("Invalid channel ID")
    topic = normalize_topic(topic_name, current_app.config["MAX_TOPIC_LENGTH"])
    received_by = None if can_read_stream_history(user, stream) else user.id
    complete = do_delete_topic(stream, topic.casefold(), received_by=received_by,
                               time_budget_seconds=current_app.config["DELETE_TOPIC_TIME_BUDGET_SECONDS"])
    return {"complete": complete}
