"""Personal message flags: POST /messages/flags, POST /messages/flags/narrow, and
POST /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read."""

from flask import Blueprint

from chat_appliance.actions.message_flags import do_mark_read, do_update_flags_by_id, do_update_flags_in_range
from chat_appliance.actions.messages import normalize_topic
from chat_appliance.lib.access import access_stream_by_id
from chat_appliance.lib.narrow import narrow_query, parse_narrow, resolve_anchor
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import MAX_MESSAGE_ID_LIST_LENGTH, check_bool, check_int, int_range, list_of, one_of, parse_anchor
from chat_appliance.web.context import limits

bp = Blueprint("message_flags", __name__)

# flags/narrow may lower the counts so one request stays one reasonable transaction.
MAX_MESSAGES_PER_FLAG_UPDATE = 5000


@bp.post("/messages/flags")
@endpoint(messages=Param(list_of(check_int, MAX_MESSAGE_ID_LIST_LENGTH)), op=Param(one_of("add", "remove")), flag=Param())
def update_message_flags(user, messages, op, flag):
    """Set or clear a personal flag on messages by id."""
    do_update_flags_by_id(user, op, flag, messages)
    return {"messages": messages}


@bp.post("/messages/flags/narrow")
@endpoint(
    anchor=Param(parse_anchor),
    include_anchor=Param(check_bool, default=True),
    num_before=Param(int_range(low=0)),
    num_after=Param(int_range(low=0)),
    narrow=Param(parse_narrow, default=()),
    op=Param(one_of("add", "remove")),
    flag=Param(),
)
def update_flags_for_narrow(user, anchor, include_anchor, num_before, num_after, narrow, op, flag):
    """Set or clear a flag over a range of the user's messages matching a narrow."""
    num_before = min(num_before, MAX_MESSAGES_PER_FLAG_UPDATE)
    num_after = min(num_after, MAX_MESSAGES_PER_FLAG_UPDATE - num_before)
    def own_rows(narrow):
        # Flags live on personal rows, so the range is the user's own messages; except that
        # removing `read` ranges over the channel history a narrow reaches, so that messages of
        # channels the user is not subscribed to are found, skipped and reported (chat-api.md's
        # rule).
        narrow.shared_history = narrow.shared_history and flag == "read" and op == "remove"

    query = narrow_query(user, list(narrow), own_rows)
    numeric_anchor = resolve_anchor(query, anchor, None)
    rows, (_found_anchor, found_oldest, found_newest) = query.fetch(numeric_anchor, num_before, num_after,
                                                                    include_anchor)
    ids = [mid for mid, _ in rows]
    changed, skipped_streams = do_update_flags_in_range(user, op, flag, ids)
    result = {"processed_count": len(ids), "first_processed_id": ids[0] if ids else None,
              "last_processed_id": ids[-1] if ids else None, "found_oldest": found_oldest,
              "found_newest": found_newest}
    if skipped_streams is not None:
        result["ignored_because_not_subscribed_channels"] = skipped_streams
    result["updated_count"] = len(changed)
    return result


@bp.post("/mark_all_as_read")
@endpoint()
def mark_all_as_read(user):
    """Mark every message read."""
    do_mark_read(user)
    return {"complete": True}


@bp.post("/mark_stream_as_read")
@endpoint(stream_id=Param(check_int))
def mark_stream_as_read(user, stream_id):
    """Mark a channel's messages read."""
    do_mark_read(user, stream=access_stream_by_id(user, stream_id))


@bp.post("/mark_topic_as_read")
@endpoint(stream_id=Param(check_int), topic_name=Param())
def mark_topic_as_read(user, stream_id, topic_name):
    """Mark a topic's messages read."""
    stream = access_stream_by_id(user, stream_id)
    do_mark_read(user, stream=stream, topic=normalize_topic(topic_name, limits().max_topic_length))
