"""Message objects: the one place that shapes a message for GET /messages, GET /messages/{id}
and message events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json

import orjson
from peewee import fn

from chat_appliance.db import runtime
from chat_appliance.models import EMPTY_TOPIC_DISPLAY_NAME
from chat_appliance.models import (FLAG_BITS, DirectMessageGroup, DirectMessageGroupMember, Message, Stream, UserMessage,
                      UserProfile, received_condition_sql)
from chat_appliance.models.base import query_rows, raw_select
from chat_appliance.lib.rendering import topic_links_context
from chat_appliance.lib.access import can_read_stream_history, can_see_real_email, visible_email_settings
from chat_appliance.lib.raw_json import RawJSON
from chat_appliance.lib.serializers import avatar_url
from chat_appliance.lib.subscriptions import subscriber_ids
from chat_appliance.lib.widgets import submessages_by_message

if TYPE_CHECKING:
    from chat_appliance.db.runtime import GenerationCache
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm

# Read as the empty topic when sent (Zulip feature level 370).
EMPTY_TOPIC_ALIASES = ("(no topic)", EMPTY_TOPIC_DISPLAY_NAME)

# Flags the API never shows.
HIDDEN_FLAGS = {"is_private", "group_mentioned", "active_mobile_push_notification"}
HISTORICAL_FLAGS = ["read", "historical"]


def flags_to_names(bits: int | None) -> list[str]:
    """API flag names for a flag bitfield; None (no personal row) means a historical message."""
    if bits is None:
        return list(HISTORICAL_FLAGS)
    names = _FLAG_NAMES.get(bits)
    if names is None:
        names = [name for name, bit in FLAG_BITS.items() if bits & bit and name not in HIDDEN_FLAGS]
        if bits & (FLAG_BITS["stream_wildcard_mentioned"] | FLAG_BITS["topic_wildcard_mentioned"]):
            names.append("wildcard_mentioned")  # deprecated alias clients still read
        names = _FLAG_NAMES[bits] = tuple(names)
    return list(names)


# Flag names by bitfield: a send names the flags of every recipient, a fetch of every message,
# and only a few combinations occur.
_FLAG_NAMES: dict = {}


def display_topic(topic: str, allow_empty_topic_name: bool) -> str:
    """The empty topic shows as the display name unless the client can show it itself."""
    return topic if topic or allow_empty_topic_name else EMPTY_TOPIC_DISPLAY_NAME


def user_brief(user: UserProfile) -> JSONDict:
    """The small user object of display_recipient and of the legacy reaction `user`."""
    return {"id": user.id, "email": user.email, "full_name": user.full_name, "is_mirror_dummy": False}


def direct_recipients(recipient_ids: set[int]) -> dict[int, Any]:
    """{recipient_id: [user briefs sorted by id]} for direct-message recipients."""
    if not recipient_ids:
        return {}
    rows = (
        DirectMessageGroupMember.select(DirectMessageGroupMember, DirectMessageGroup, UserProfile)
        .join(DirectMessageGroup)
        .switch(DirectMessageGroupMember)
        .join(UserProfile)
        .where(DirectMessageGroup.recipient.in_(list(recipient_ids)))
    )
    result: dict[int, list[JSONDict]] = {}
    for row in rows:
        result.setdefault(row.group.recipient_id, []).append(user_brief(row.user_profile))
    for users in result.values():
        users.sort(key=lambda u: u["id"])
    return result


def reactions_by_message(message_ids: list[int]) -> dict[int, Any]:
    """{message_id: [reaction objects, oldest first]}."""
    result: dict[int, list[JSONDict]] = {mid: [] for mid in message_ids}
    if not message_ids:
        return result
    rows = query_rows(
        'SELECT r."message_id", r."emoji_name", r."emoji_code", r."reaction_type", u."id", u."email", u."full_name"'
        ' FROM "reaction" r JOIN "user_profile" u ON u."id" = r."user_profile_id"'
        ' WHERE r."message_id" IN {ids} ORDER BY r."id"', ids=list(message_ids))
    for message_id, emoji_name, emoji_code, reaction_type, user_id, email, full_name in rows:
        result[message_id].append({
            "emoji_name": emoji_name,
            "emoji_code": emoji_code,
            "reaction_type": reaction_type,
            "user_id": user_id,
            # Deprecated, but zulip-terminal 0.7.0 reads it.
            "user": {"id": user_id, "email": email, "full_name": full_name, "is_mirror_dummy": False},
        })
    return result


def visible_edit_history(message: Any, realm: Realm, allow_empty_topic_name: bool) -> list[JSONDict] | None:
    """edit_history as the organization's policy lets it be seen, or None."""
    history = message.edit_history
    if not history:
        return None
    policy = realm.edit_history_policy_name()
    if policy == "none":
        return None
    entries = []
    for entry in history:
        entry = dict(entry)
        if policy == "moves":
            for key in ("prev_content", "prev_rendered_content", "prev_rendered_content_version"):
                entry.pop(key, None)
            if "prev_topic" not in entry and "prev_stream" not in entry:
                continue
        for key in ("prev_topic", "topic"):
            if key in entry:
                entry[key] = display_topic(entry[key], allow_empty_topic_name)
        entries.append(entry)
    return entries or None


def message_dicts(messages: list[Any], viewer: UserProfile, flags_by_id: dict[int, int], *, apply_markdown: bool = True,
                  client_gravatar: bool = True, allow_empty_topic_name: bool = False,
                  fresh: bool = False) -> list[JSONDict]:
    """Message objects for `viewer`, in the order given. `flags_by_id` maps message id to the
    viewer's flag bits (None for a message outside their personal history). `fresh` marks
    messages created in this request."""
    built = _shared_dicts(messages, viewer, apply_markdown=apply_markdown, client_gravatar=client_gravatar,
                          allow_empty_topic_name=allow_empty_topic_name, fresh=fresh)
    for _message, _email_visible, data in built:
        data["flags"] = flags_to_names(flags_by_id.get(data["id"]))
    return [data for _message, _email_visible, data in built]


def _shared_dicts(messages, viewer, *, apply_markdown, client_gravatar, allow_empty_topic_name, fresh=False):
    """[(message, email_visible, message object without flags)]: all of a message object but
    the viewer's flags depends on the message, the shape asked for and whether the viewer may
    see the sender's real email address (email_visible)."""

    realm = viewer.realm
    from chat_appliance.markdown.engine import topic_links  # the engine loads at first use

    links_context = topic_links_context(realm)
    dm_recipients = direct_recipients({m.recipient_id for m in messages if m.stream_id is None})
    # A message just sent has no reactions yet: skip the query on the send path.
    reactions = {m.id: [] for m in messages} if fresh else reactions_by_message([m.id for m in messages])
    # A message just sent carries only the widget its send created (set on the row by the send).
    submessages = ({m.id: getattr(m, "fresh_submessages", []) for m in messages} if fresh
                   else submessages_by_message([m.id for m in messages]))
    topic_links_cache = {}
    result = []
    for message in messages:
        sender = message.sender
        email_visible = can_see_real_email(viewer, sender)
        data = {
            "id": message.id,
            "sender_id": sender.id,
            "sender_full_name": sender.full_name,
            "sender_email": sender.email,
            "sender_realm_str": realm.host.split(".")[0],
            "avatar_url": avatar_url(sender, client_gravatar=client_gravatar, email_visible=email_visible),
            "client": message.sending_client,
            "content": message.rendered_content if apply_markdown else message.content,
            "content_type": "text/html" if apply_markdown else "text/x-markdown",
            "recipient_id": message.recipient_id,
            "timestamp": message.date_sent,
            "is_me_message": message.is_me_message,
            "reactions": reactions[message.id],
            "submessages": submessages[message.id],
        }
        if message.stream_id is not None:
            data["type"] = "stream"
            data["display_recipient"] = message.stream.name
            data["stream_id"] = message.stream_id
            data["subject"] = display_topic(message.topic, allow_empty_topic_name)
            if message.topic not in topic_links_cache:
                topic_links_cache[message.topic] = topic_links(message.topic, links_context) if message.topic else []
            data["topic_links"] = topic_links_cache[message.topic]
        else:
            data["type"] = "private"
            data["display_recipient"] = dm_recipients.get(message.recipient_id, [])
            data["subject"] = ""
            data["topic_links"] = []
        history = visible_edit_history(message, realm, allow_empty_topic_name)
        if history is not None:
            data["edit_history"] = history
        if message.last_edit_time is not None:
            data["last_edit_timestamp"] = message.last_edit_time
        if message.last_moved_time is not None:
            data["last_moved_timestamp"] = message.last_moved_time
        result.append((message, email_visible, data))
    return result


def fetched_messages(message_ids: list[int], viewer: UserProfile, flags_by_id: dict[int, int], *,
                     apply_markdown: bool, client_gravatar: bool, allow_empty_topic_name: bool,
                     additions: dict[int, JSONDict] | None = None) -> list[RawJSON]:
    """The message objects of message_dicts for these ids (those that exist, in the order
    given), encoded. Each is built and encoded once per message and shape and kept in the
    message cache, without its closing brace: a fetch then only appends the viewer's flags, and
    `additions[id]` (search highlights). Zulip caches message dictionaries the same way."""
    cache = message_cache()
    shape = (apply_markdown, client_gravatar, allow_empty_topic_name)
    generation = cache.generation
    found = {key[0]: entry for key, entry in cache.get_many([(mid, shape) for mid in message_ids]).items()}
    ready: dict[int, bytes] = {}
    # can_see_real_email, with the viewer's part asked once for the page.
    viewer_id, settings_seen = viewer.id, visible_email_settings(viewer)
    for mid, entry in found.items():
        encoded = entry.forms.get(entry.sender_id == viewer_id or entry.sender_is_bot
                                  or entry.sender_email_setting in settings_seen)
        if encoded is not None:
            ready[mid] = encoded
    missing = [mid for mid in message_ids if mid not in ready]
    if missing:
        built = [(message, email_visible, _encoded(data)[:-1]) for message, email_visible, data in _shared_dicts(
            load_messages(missing), viewer, apply_markdown=apply_markdown, client_gravatar=client_gravatar,
            allow_empty_topic_name=allow_empty_topic_name)]
        # A message cached in the other form keeps it: the entry is replaced by one with both.
        cache.put_many([((message.id, shape), _CachedMessage(message.sender, {
            **(found[message.id].forms if message.id in found else {}), email_visible: encoded}))
            for message, email_visible, encoded in built], generation)
        ready.update((message.id, encoded) for message, _email_visible, encoded in built)
    result = []
    for mid in message_ids:
        encoded = ready.get(mid)
        if encoded is not None:
            added = b"}" if additions is None else b"," + _encoded(additions[mid])[1:]
            result.append(RawJSON(b"".join((encoded, _flags_member(flags_by_id.get(mid)), added))))
    return result


def _encoded(data: JSONDict) -> bytes:
    """A message object as compact JSON (orjson's, or the standard encoder's for what it refuses,
    as web/response.py encodes responses)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def _flags_member(bits: int | None) -> bytes:
    """`,"flags":[...]` of a message object, encoded once per bitfield."""
    member = _FLAGS_MEMBERS.get(bits)
    if member is None:
        member = _FLAGS_MEMBERS[bits] = b',"flags":' + orjson.dumps(flags_to_names(bits))
    return member


_FLAGS_MEMBERS: dict[int | None, bytes] = {}


# --- the message cache ----------------------------------------------------------------------------
# Emptied by lib/cache_events.invalidate_messages_on_event, a listener on the app's event bus.


class _CachedMessage:
    """A message's forms for one shape: {email_visible: the message object without flags, as
    JSON without its closing brace}."""

    __slots__ = ("sender", "sender_id", "sender_is_bot", "sender_email_setting", "forms")

    def __init__(self, sender, forms):
        self.sender = sender
        # What can_see_real_email reads of the sender, as plain values: a page reads them per message.
        self.sender_id, self.sender_is_bot = sender.id, sender.is_bot
        self.sender_email_setting = sender.email_address_visibility
        self.forms = forms


def message_cache() -> GenerationCache:
    """The message cache of the app in use (db.runtime.GenerationCache: (message id, shape) ->
    _CachedMessage, least recently used dropped first; each app's, each test's, its own)."""
    return runtime.current().messages


class MessageRecord:
    """A message row for serialization: plain attributes, with `sender` (a UserProfile) and
    `stream` (a Stream, or None) attached. Building full Peewee models with joins costs more
    than the query itself, and fetching is the hot path."""

    __slots__ = ("id", "sender_id", "recipient_id", "stream_id", "topic", "topic_key", "content",
                 "rendered_content", "date_sent", "sending_client", "last_edit_time", "last_moved_time",
                 "edit_history", "is_me_message", "realm_id", "sender", "stream")
    # For mypy: set from the row by setattr() in __init__, then decoded there.
    edit_history: Any
    is_me_message: Any

    def __init__(self, row, sender, stream):
        for name, value in zip(_RECORD_FIELDS, row):
            setattr(self, name, value)
        # The row is raw SQL: decode what peewee's fields would have.
        self.edit_history = None if self.edit_history is None else json.loads(self.edit_history)
        self.is_me_message = bool(self.is_me_message)
        self.sender = sender
        self.stream = stream


_RECORD_FIELDS = MessageRecord.__slots__[:-2]
# Field names to column names: the foreign keys' attributes (sender_id ...) are their columns.
_RECORD_SELECT = ("SELECT " + ", ".join(f'"{name}"' for name in _RECORD_FIELDS)
                  + ' FROM "message" WHERE "id" IN {ids}')


def load_messages(message_ids: list[int]) -> list[MessageRecord]:
    """Message records with their sender and channel, in the order of the ids given."""
    if not message_ids:
        return []
    rows = query_rows(_RECORD_SELECT, ids=list(message_ids))
    senders = {u.id: u for u in raw_select(UserProfile, '"id" IN {ids}', ids=sorted({r[1] for r in rows}))}
    stream_ids = sorted({r[3] for r in rows if r[3] is not None})
    streams = {s.id: s for s in raw_select(Stream, '"id" IN {ids}', ids=stream_ids)} if stream_ids else {}
    by_id = {row[0]: MessageRecord(row, senders[row[1]], streams.get(row[3])) for row in rows}
    return [by_id[mid] for mid in message_ids if mid in by_id]


def message_audience_ids(message_ids: list[int], stream: Stream | None = None) -> set[int]:
    """Who hears of changes to these messages: the users with a personal row for one of them and,
    in a channel whose history is shared with subscribers, its subscribers (who may have read the
    messages from history without a row)."""

    audience = {row.user_profile_id for row in UserMessage.select(UserMessage.user_profile)
                .where(UserMessage.message.in_(list(message_ids))).distinct()}
    if stream is not None and stream.history_public_to_subscribers:
        audience |= subscriber_ids(stream)
    return audience


def stream_topics(user: UserProfile, stream: Stream) -> list[tuple[str, int]]:
    """[(topic name, newest message id)] of a channel, newest first: every topic where the user
    may read the channel's history, else those of messages they received. The name is that of
    the topic's newest message (topics differing only in case are one)."""
    newest = Message.select(fn.MAX(Message.id).alias("max_id")).where(Message.recipient == stream.recipient_id)
    if not can_read_stream_history(user, stream):
        newest = newest.join(UserMessage, on=(UserMessage.message == Message.id)).where(
            UserMessage.user_profile == user.id)
    newest = newest.group_by(Message.topic_key).alias("newest")
    # One statement, so one snapshot: asked apart, a topic's newest message could be deleted
    # (a resolve notice taken back) between the ids and their names.
    named = Message.alias()
    query = (named.select(named.topic, named.id).join(newest, on=(named.id == newest.c.max_id))
             .order_by(named.id.desc()))
    return [(topic, message_id) for topic, message_id in query.tuples()]


def max_message_id(user: UserProfile) -> int:
    """The newest message id in the user's history; -1 when there is none (Zulip).

    Hand-written: /register and GET /users/me ask it, and peewee took 0.2 ms to build its two
    small queries, ten times what running them costs. The newest row first, not MAX(): with the
    index's condition written out, SQLite read every row of the user's history for a MAX()
    (1,363 steps for 1,700 messages), and one row for this."""
    found = [rows[0][0] for condition in received_condition_sql("um") if (rows := query_rows(
        'SELECT um."message_id" FROM "user_message" um WHERE um."user_profile_id" = {p} AND '
        + condition + ' ORDER BY um."message_id" DESC LIMIT 1', user.id))]
    return max(found, default=-1)
