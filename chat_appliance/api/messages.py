"""Messages: POST /messages, GET /messages, GET /messages/{id}, GET /messages/matches_narrow,
POST /messages/render. Flags are in message_flags.py, topic visibility in user_topics.py."""

from flask import Blueprint, request

from chat_appliance.actions.messages import check_content, check_send_message, client_name_from_user_agent
from chat_appliance.lib.access import access_message
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.messages import fetched_messages, load_messages, message_dicts
from chat_appliance.lib.narrow import narrow_query, parse_narrow, resolve_anchor, search_matches
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import MAX_MESSAGE_ID_LIST_LENGTH, check_bool, check_int, int_range, json_or_string, list_of, one_of, parse_anchor, parse_anchor_date
from chat_appliance.lib.rendering import render_message
from chat_appliance.web.context import limits

bp = Blueprint("messages", __name__)

MAX_MESSAGES_PER_FETCH = 5000


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
    # As Zulip: a browser on a session (/json/) is the client "website", whatever it calls itself,
    # so what a person typed there starts read for them; Zulip's own apps keep their names.
    if request.path.startswith("/json/") and not client_name.startswith("Zulip"):
        client_name = "website"
    message_id, policy = check_send_message(
        user, message_type=type, to=to, topic=topic, content=content, client_name=client_name, limits=limits(),
        queue_id=queue_id, local_id=local_id, read_by_sender=read_by_sender, defer_commit=True)
    result = {"id": message_id}
    if policy is not None:
        result["automatic_new_visibility_policy"] = policy
    return result


def build_message_list(user, rows, narrow, *, apply_markdown, client_gravatar, allow_empty_topic_name):
    """Message objects for (id, flags) rows, with search highlights when the narrow searched."""
    ids, additions = [mid for mid, _ in rows], None
    if narrow.search_terms:
        matches = search_matches(ids, narrow.search_terms, allow_empty_topic_name)
        # A message deleted since the rows were read is left out.
        ids = [mid for mid in ids if mid in matches]
        additions = {mid: {"match_content": content, "match_subject": subject}
                     for mid, (content, subject) in matches.items()}
    return fetched_messages(ids, user, dict(rows), apply_markdown=apply_markdown, client_gravatar=client_gravatar,
                            allow_empty_topic_name=allow_empty_topic_name, additions=additions)


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
    message_ids=Param(list_of(check_int, MAX_MESSAGE_ID_LIST_LENGTH), default=None),
    allow_empty_topic_name=Param(check_bool, default=False),
)
def get_messages(user, anchor, anchor_date, include_anchor, num_before, num_after, narrow, client_gravatar,
                 apply_markdown, use_first_unread_anchor, message_ids, allow_empty_topic_name):
    """Messages around an anchor, or by id, matching a narrow."""
    # "Newest" with messages before it asks the whole narrow: a whole-word search that finds
    # nothing there is widened to prefixes after the fetch, not probed before it.
    whole = anchor == "newest" and bool(num_before) and message_ids is None and not use_first_unread_anchor
    query = narrow_query(user, list(narrow), probe=not whole)
    narrow = query.narrow
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
    widened = query.widened() if whole and not rows else query
    if widened is not query:
        narrow = widened.narrow
        rows, (found_anchor, found_oldest, found_newest) = widened.fetch(numeric_anchor, num_before, num_after,
                                                                          include)
    return {
        "anchor": numeric_anchor,
        "found_newest": found_newest,
        "found_oldest": found_oldest,
        "found_anchor": found_anchor,
        "history_limited": False,
        "messages": build_message_list(user, rows, narrow, **shape),
    }


@bp.get("/messages/<int:message_id>")
@endpoint(apply_markdown=Param(check_bool, default=True), allow_empty_topic_name=Param(check_bool, default=False))
def get_message(user, message_id, apply_markdown, allow_empty_topic_name):
    """One message, and its raw Markdown."""
    message, flags = access_message(user, message_id)
    data = message_dicts(load_messages([message.id]), user, {message.id: flags}, apply_markdown=apply_markdown,
                         allow_empty_topic_name=allow_empty_topic_name)[0]
    return {"raw_content": message.content, "message": data}


@bp.get("/messages/matches_narrow")
@endpoint(msg_ids=Param(list_of(check_int, MAX_MESSAGE_ID_LIST_LENGTH)), narrow=Param(parse_narrow))
def messages_match_narrow(user, msg_ids, narrow):
    """Which of these messages match the narrow, with search highlights."""
    query = narrow_query(user, list(narrow))
    narrow = query.narrow
    matches = search_matches([mid for mid, _ in query.with_ids(msg_ids)], narrow.search_terms, False)
    # Not one deleted meanwhile.
    return {"messages": {str(mid): {"match_content": content, "match_subject": subject}
                         for mid, (content, subject) in matches.items()}}


@bp.post("/messages/render")
@endpoint(content=Param())
def render(user, content):
    """Render Markdown as a message would be, without sending it. Empty (or blank) content is
    not an error here, unlike in a send: Zulip renders it to an empty string."""
    if not content.strip():
        return {"rendered": ""}
    content = check_content(content, limits().max_message_length)
    return {"rendered": render_message(content, realm=user.realm, sender=user).html}


# --- topic visibility (user_topics) ---
