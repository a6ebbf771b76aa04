"""Messages: send, fetch, render, flags, mark-as-read, topic visibility."""

from datetime import datetime, timezone

from flask import Blueprint, current_app, request

from ..actions.flags import do_update_message_flags, unsubscribed_stream_ids
from ..actions.messages import (
    check_content,
    check_send_message,
    client_name_from_user_agent,
    normalize_topic,
    set_topic_visibility,
    user_topic_event,
)
from ..db import write_transaction
from ..events.bus import publish
from ..lib.access import access_stream_by_id
from ..lib.errors import JsonableError
from ..lib.messages import display_topic, load_messages, message_dicts
from ..lib.narrow import (
    LARGER_THAN_MAX_MESSAGE_ID,
    Narrow,
    RangeQuery,
    highlight,
    parse_narrow,
    user_can_access_message,
)
from ..lib.params import (
    Param,
    ParamError,
    check_bool,
    check_int,
    endpoint,
    int_range,
    json_or_string,
    list_of,
    one_of,
)
from ..models import FLAG_BITS, Message, UserMessage, UserTopic, now
from ..rendering import render_message

bp = Blueprint("messages", __name__)

MAX_MESSAGES_PER_FETCH = 5000
# flags/narrow may lower the counts so one request stays one reasonable transaction.
MAX_MESSAGES_PER_FLAG_UPDATE = 5000


def limits():
    """The message limits /register reports, from configuration."""
    return {"max_message_length": current_app.config["MAX_MESSAGE_LENGTH"],
            "max_topic_length": current_app.config["MAX_TOPIC_LENGTH"]}


@bp.post("/messages")
@endpoint(
    type=Param(one_of("direct", "private", "stream", "channel")),
    to=Param(json_or_string),
    content=Param(),
    topic=Param(default=None, aliases=("subject",)),
    queue_id=Param(default=None),
    local_id=Param(default=None),
    read_by_sender=Param(check_bool, default=None),
)
def send_message(user, type, to, content, topic, queue_id, local_id, read_by_sender):
    """Send a channel or direct message."""
    if (queue_id is None) != (local_id is None):
        missing = "local_id" if local_id is None else "queue_id"
        raise JsonableError(f"Missing '{missing}' argument", code="REQUEST_VARIABLE_MISSING", var_name=missing)
    client_name = client_name_from_user_agent(request.headers.get("User-Agent"))
    message_id, policy = check_send_message(
        user, message_type=type, to=to, topic=topic, content=content, client_name=client_name, limits=limits(),
        queue_id=queue_id, local_id=local_id, read_by_sender=read_by_sender)
    result = {"id": message_id}
    if policy is not None:
        result["automatic_new_visibility_policy"] = policy
    return result


def parse_anchor(var_name, value):
    """newest, oldest, first_unread, date, or a message id."""
    if value in ("newest", "oldest", "first_unread", "date"):
        return value
    try:
        anchor = int(value)
    except (TypeError, ValueError):
        raise ParamError("Invalid anchor") from None
    if anchor < 0:
        raise ParamError("Invalid anchor")
    return anchor


def parse_anchor_date(var_name, value):
    """ISO 8601 date (midnight UTC) or datetime (UTC when no zone is given) -> UNIX seconds."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ParamError(f"Invalid {var_name}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp())


def resolve_anchor(query, anchor, anchor_date):
    """A numeric anchor from the anchor parameter."""
    if anchor == "newest":
        return LARGER_THAN_MAX_MESSAGE_ID
    if anchor == "oldest":
        return 0
    if anchor == "first_unread":
        return query.first_unread_id() or LARGER_THAN_MAX_MESSAGE_ID
    if anchor == "date":
        if anchor_date is None:
            raise JsonableError("Missing 'anchor_date' argument", code="REQUEST_VARIABLE_MISSING",
                                var_name="anchor_date")
        return query.first_on_or_after(anchor_date) or LARGER_THAN_MAX_MESSAGE_ID
    return anchor


def build_message_list(user, rows, narrow, *, apply_markdown, client_gravatar, allow_empty_topic_name):
    """Message objects for (id, flags) rows, with search highlights when the narrow searched."""
    flags = dict(rows)
    records = load_messages([mid for mid, _ in rows])
    messages = message_dicts(records, user, flags, apply_markdown=apply_markdown,
                             client_gravatar=client_gravatar, allow_empty_topic_name=allow_empty_topic_name)
    if narrow.search_terms:
        stored = {m.id: m for m in records}
        for data in messages:
            data["match_content"] = highlight(stored[data["id"]].rendered_content, narrow.search_terms)
            data["match_subject"] = highlight(
                display_topic(stored[data["id"]].topic, allow_empty_topic_name), narrow.search_terms)
    return messages


@bp.get("/messages")
@endpoint(
    anchor=Param(parse_anchor, default=None),
    anchor_date=Param(parse_anchor_date, default=None),
    include_anchor=Param(check_bool, default=None),
    num_before=Param(int_range(low=0), default=None),
    num_after=Param(int_range(low=0), default=None),
    narrow=Param(parse_narrow, default=()),
    client_gravatar=Param(check_bool, default=True),
    apply_markdown=Param(check_bool, default=True),
    use_first_unread_anchor=Param(check_bool, default=None),
    message_ids=Param(list_of(check_int), default=None),
    allow_empty_topic_name=Param(check_bool, default=False),
)
def get_messages(user, anchor, anchor_date, include_anchor, num_before, num_after, narrow, client_gravatar,
                 apply_markdown, use_first_unread_anchor, message_ids, allow_empty_topic_name):
    """Messages around an anchor, or by id, matching a narrow."""
    narrow = Narrow(user, list(narrow))
    query = RangeQuery(user, narrow)
    shape = dict(apply_markdown=apply_markdown, client_gravatar=client_gravatar,
                 allow_empty_topic_name=allow_empty_topic_name)
    if message_ids is not None:
        given = [name for name, value in (("anchor", anchor), ("include_anchor", include_anchor),
                                          ("use_first_unread_anchor", use_first_unread_anchor),
                                          ("num_before", num_before), ("num_after", num_after))
                 if value is not None]
        if given:
            names = ", ".join(["message_ids", *given])
            raise JsonableError(f"Unsupported parameter combination: {names}", parameters=names)
        rows = query.with_ids(message_ids)
        return {"messages": build_message_list(user, rows, narrow, **shape), "found_anchor": False,
                "found_oldest": False, "found_newest": False, "history_limited": False}
    if num_before is None:
        raise JsonableError("Missing 'num_before' argument", code="REQUEST_VARIABLE_MISSING", var_name="num_before")
    if num_after is None:
        raise JsonableError("Missing 'num_after' argument", code="REQUEST_VARIABLE_MISSING", var_name="num_after")
    if num_before + num_after > MAX_MESSAGES_PER_FETCH:
        raise JsonableError(f"Too many messages requested (maximum {MAX_MESSAGES_PER_FETCH}).")
    if use_first_unread_anchor:
        # Deprecated form; zulip-terminal sends it together with anchor=0 and expects it to win.
        anchor = "first_unread"
    if anchor is None:
        raise JsonableError("Missing 'anchor' argument", code="REQUEST_VARIABLE_MISSING", var_name="anchor")
    numeric_anchor = resolve_anchor(query, anchor, anchor_date)
    include = True if include_anchor is None else include_anchor
    rows, (found_anchor, found_oldest, found_newest) = query.fetch(numeric_anchor, num_before, num_after, include)
    return {
        "anchor": numeric_anchor,
        "found_newest": found_newest,
        "found_oldest": found_oldest,
        "found_anchor": found_anchor,
        "history_limited": False,
        "messages": build_message_list(user, rows, narrow, **shape),
    }


def access_message(user, message_id):
    """A message the user may read, with their flag bits, or BAD_REQUEST 'Invalid message(s)'."""
    message = Message.get_or_none(Message.id == message_id)
    if message is None or message.realm_id != user.realm_id or not user_can_access_message(user, message):
        raise JsonableError("Invalid message(s)")
    row = UserMessage.get_or_none((UserMessage.user_profile == user) & (UserMessage.message == message_id))
    return message, (row.flags if row else None)


@bp.get("/messages/<int:message_id>")
@endpoint(apply_markdown=Param(check_bool, default=True), allow_empty_topic_name=Param(check_bool, default=False))
def get_message(user, message_id, apply_markdown, allow_empty_topic_name):
    """One message, and its raw Markdown."""
    message, flags = access_message(user, message_id)
    data = message_dicts(load_messages([message.id]), user, {message.id: flags}, apply_markdown=apply_markdown,
                         allow_empty_topic_name=allow_empty_topic_name)[0]
    return {"raw_content": message.content, "message": data}


@bp.get("/messages/matches_narrow")
@endpoint(msg_ids=Param(list_of(check_int)), narrow=Param(parse_narrow))
def messages_match_narrow(user, msg_ids, narrow):
    """Which of these messages match the narrow, with search highlights."""
    narrow = Narrow(user, list(narrow))
    rows = RangeQuery(user, narrow).with_ids(msg_ids)
    stored = {m.id: m for m in load_messages([mid for mid, _ in rows])}
    return {"messages": {str(mid): {"match_content": highlight(stored[mid].rendered_content, narrow.search_terms),
                                    "match_subject": highlight(display_topic(stored[mid].topic, False),
                                                               narrow.search_terms)}
                         for mid, _ in rows}}


@bp.post("/messages/render")
@endpoint(content=Param())
def render(user, content):
    """Render Markdown as a message would be, without sending it."""
    content = check_content(content, current_app.config["MAX_MESSAGE_LENGTH"])
    return {"rendered": render_message(content, realm=user.realm, sender=user).html}


@bp.post("/messages/flags")
@endpoint(messages=Param(list_of(check_int)), op=Param(one_of("add", "remove")), flag=Param())
def update_message_flags(user, messages, op, flag):
    """Set or clear a personal flag on messages by id."""
    from ..actions.flags import check_flag

    check_flag(flag)
    owned = {row.message_id for row in UserMessage.select(UserMessage.message).where(
        (UserMessage.user_profile == user) & UserMessage.message.in_(messages))}
    for message_id in set(messages) - owned:
        message = Message.get_or_none(Message.id == message_id)
        if message is None or not user_can_access_message(user, message):
            raise JsonableError("Invalid message(s)")
        if flag == "starred" and op == "add":
            # Starring a channel message from before the user joined keeps a historical copy.
            with write_transaction():
                UserMessage.insert(user_profile=user, message=message_id,
                                   flags=FLAG_BITS["read"] | FLAG_BITS["historical"]).on_conflict_ignore().execute()
    do_update_message_flags(user, op, flag, messages)
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
    from ..actions.flags import check_flag

    check_flag(flag)
    num_before = min(num_before, MAX_MESSAGES_PER_FLAG_UPDATE)
    num_after = min(num_after, MAX_MESSAGES_PER_FLAG_UPDATE - num_before)
    narrow = Narrow(user, list(narrow))
    # Flags live on personal rows, so the range is the user's own messages; except that removing
    # `read` ranges over the channel history a narrow reaches, so that messages of channels the user
    # is not subscribed to are found, skipped and reported (chat-api.md's rule).
    narrow.shared_history = narrow.shared_history and flag == "read" and op == "remove"
    query = RangeQuery(user, narrow)
    numeric_anchor = resolve_anchor(query, anchor, None)
    rows, (_found_anchor, found_oldest, found_newest) = query.fetch(numeric_anchor, num_before, num_after,
                                                                    include_anchor)
    ids = [mid for mid, _ in rows]
    result = {"processed_count": len(ids), "first_processed_id": ids[0] if ids else None,
              "last_processed_id": ids[-1] if ids else None, "found_oldest": found_oldest,
              "found_newest": found_newest}
    target_ids = ids
    if flag == "read" and op == "remove":
        skipped_streams = unsubscribed_stream_ids(user, ids)
        if skipped_streams:
            skipped = {m.id for m in Message.select(Message.id).where(
                Message.id.in_(ids) & Message.stream.in_(skipped_streams))}
            target_ids = [mid for mid in ids if mid not in skipped]
        result["ignored_because_not_subscribed_channels"] = skipped_streams
    result["updated_count"] = len(do_update_message_flags(user, op, flag, target_ids))
    return result


def mark_read_where(user, condition):
    """Mark the user's unread messages matching a condition as read."""
    unread = [row.message_id for row in
              UserMessage.select(UserMessage.message).join(Message, on=(UserMessage.message == Message.id))
              .where((UserMessage.user_profile == user) & (UserMessage.flags.bin_and(FLAG_BITS["read"]) == 0)
                     & condition)]
    do_update_message_flags(user, "add", "read", unread)


@bp.post("/mark_all_as_read")
@endpoint()
def mark_all_as_read(user):
    """Mark every message read."""
    mark_read_where(user, Message.id > 0)
    return {"complete": True}


@bp.post("/mark_stream_as_read")
@endpoint(stream_id=Param(check_int))
def mark_stream_as_read(user, stream_id):
    """Mark a channel's messages read."""
    stream = access_stream_by_id(user, stream_id)
    mark_read_where(user, Message.stream == stream.id)


@bp.post("/mark_topic_as_read")
@endpoint(stream_id=Param(check_int), topic_name=Param())
def mark_topic_as_read(user, stream_id, topic_name):
    """Mark a topic's messages read."""
    stream = access_stream_by_id(user, stream_id)
    topic = normalize_topic(topic_name, current_app.config["MAX_TOPIC_LENGTH"])
    mark_read_where(user, (Message.stream == stream.id) & (Message.topic_key == topic.casefold()))


# --- topic visibility (user_topics) ---


def user_topic_dicts(user):
    """The user's topic visibility policies, as /register's user_topics."""
    from ..lib.serializers import user_topic_dict

    return [user_topic_dict(row) for row in
            UserTopic.select().where((UserTopic.user_profile == user) & (UserTopic.visibility_policy != 0))]


def do_set_user_topic(user, stream, topic, policy):
    """Store a topic visibility policy and tell the user's clients."""
    with write_transaction():
        if policy == 0:
            UserTopic.delete().where((UserTopic.user_profile == user) & (UserTopic.stream == stream)
                                     & (UserTopic.topic_key == topic.casefold())).execute()
        else:
            set_topic_visibility(user, stream, topic, policy)
    publish(user_topic_event(stream.id, topic, policy, now()), [user.id])


@bp.post("/user_topics")
@endpoint(stream_id=Param(check_int), topic=Param(), visibility_policy=Param(one_of(0, 1, 2, 3, parser=check_int)))
def update_user_topic(user, stream_id, topic, visibility_policy):
    """Mute, unmute, follow, or reset a topic."""
    stream = access_stream_by_id(user, stream_id)
    do_set_user_topic(user, stream, normalize_topic(topic, current_app.config["MAX_TOPIC_LENGTH"]), visibility_policy)


@bp.get("/user_topics")
@endpoint()
def get_user_topics(user):
    """The requester's topic visibility policies."""
    return {"user_topics": user_topic_dicts(user)}


@bp.patch("/users/me/subscriptions/muted_topics")
@endpoint(op=Param(one_of("add", "remove")), topic=Param(), stream=Param(default=None),
          stream_id=Param(check_int, default=None))
def mute_topic(user, op, topic, stream, stream_id):
    """Legacy muting (the zulip library's mute_topic)."""
    from ..lib.access import access_stream_by_name

    if (stream is None) == (stream_id is None):
        raise JsonableError("Please supply 'stream' or 'stream_id'.")
    target = access_stream_by_id(user, stream_id) if stream_id is not None else access_stream_by_name(user, stream)
    do_set_user_topic(user, target, normalize_topic(topic, current_app.config["MAX_TOPIC_LENGTH"]),
                      1 if op == "add" else 0)

