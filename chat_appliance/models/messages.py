"""Messages, the per-user message rows that carry personal flags, reactions and topics."""

from typing import Any

from peewee import SQL, BigIntegerField, BooleanField, CharField, CompositeKey, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, database, now
from chat_appliance.models.channels import Recipient, Stream
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile

# Personal flag bits of UserMessage.flags. The names are Zulip's API flag names.
FLAG_BITS = {
    "read": 1 << 0,
    "starred": 1 << 1,
    "collapsed": 1 << 2,
    "mentioned": 1 << 3,
    "stream_wildcard_mentioned": 1 << 4,
    "topic_wildcard_mentioned": 1 << 5,
    "group_mentioned": 1 << 6,
    "has_alert_word": 1 << 7,
    "historical": 1 << 8,
    "is_private": 1 << 9,
    # Internal (never shown): a push notification went out for this message and has not been
    # taken back yet (Zulip's flag of that name); reading the message sends the "remove".
    "active_mobile_push_notification": 1 << 10,
}


class Message(BaseModel):
    realm = ForeignKeyField(Realm)
    # No index of their own: (sender, id) and (recipient, id) below start with them.
    sender = ForeignKeyField(UserProfile, index=False)
    recipient = ForeignKeyField(Recipient, index=False)
    # Denormalised from the recipient for channel messages; null for direct messages.
    stream = ForeignKeyField(Stream, null=True)
    topic = CharField(max_length=60, default="")
    # Case-folded topic: topic narrows ignore case, and this column is indexed.
    topic_key = CharField(max_length=60, default="")
    content = TextField()
    rendered_content = TextField()
    date_sent = IntegerField(default=now)
    sending_client = CharField(max_length=60, default="")
    last_edit_time = IntegerField(null=True)
    last_moved_time = IntegerField(null=True)
    # Earlier versions, most recent first, in the shape of the API's edit_history entries.
    edit_history = JSONField(null=True)
    is_me_message = BooleanField(default=False)
    has_link = BooleanField(default=False)
    has_image = BooleanField(default=False)
    has_attachment = BooleanField(default=False)

    class Meta:
        indexes = (
            (("recipient", "id"), False),
            (("recipient", "topic_key", "id"), False),
            (("sender", "id"), False),
            # A message's conversation read by its id without its body: see CONVERSATION_INDEX.
            (("id", "recipient", "stream", "topic"), False),
        )


# The index of (id, recipient, channel, topic), for reading the conversations of many messages
# by id, as /register does for every unread one. Through the table's key each message lands on
# pages of its own among the bodies; the index holds hundreds of messages a page. SQLite's planner
# always prefers the key for an id, so a query names the index (backend().indexed_by).
CONVERSATION_INDEX = "message_id_recipient_id_stream_id_topic"


class UserMessage(BaseModel):
    """One row per user who received (or was given history of) a message.

    Keyed by (message, user), so that a send's rows are neighbours (migration 116). A user's rows
    are found through the partial index user_message_by_user, which leaves out the rows still
    waiting for the per-user indexes (PENDING_UNREAD_INDEX below): received_conditions() gives
    the conditions that find them all."""

    # No index of its own: user_message_by_user (made by SQL: partial) starts with it.
    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", index=False)
    # No index of its own either: the primary key starts with it.
    message = ForeignKeyField(Message, on_delete="CASCADE", index=False)
    flags = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("message", "user_profile")


# Internal, never shown and not a flag of the API: a row that a send wrote and that has not
# entered the per-user indexes yet. The partial index user_message_by_user holds the rows without
# this bit, and user_message_unread those without it and without `read`. A send to a channel adds
# one row per recipient, and every recipient's rows sit in another leaf of each per-user index, so
# a send that put its rows there at once rewrote two leaves per recipient, each copied whole into
# SQLite's WAL at COMMIT. With the bit set they stay out of both, in the one or two leaves of the
# (message, user) key that the send writes anyway, and the send lists its message in
# pending_unread_message. On SQLite, a group COMMIT at most every tenth of a second
# (db/backends/sqlite.py, UnreadIndexer) first clears the bit on the rows of every listed message
# and empties the list, so each recipient's leaves are written once for all the messages since,
# not once per message (a send's COMMIT wrote a leaf per recipient otherwise). Only rows of listed
# messages carry the bit, so a user's rows are the union of the index's and of those of listed
# messages that carry it, which the key finds by message. On PostgreSQL, which has no group
# COMMIT to do this, no row carries the bit (its database's `defers_unread_index` is unset).
# A row that is read from the start (the sender's own, or a muter's) never carries it.
PENDING_UNREAD_INDEX = 1 << 11
_READ_OR_PENDING = FLAG_BITS["read"] | PENDING_UNREAD_INDEX


def defers_unread_index() -> bool:
    """Whether the current database writes new unread rows with PENDING_UNREAD_INDEX."""
    return getattr(database.obj, "defers_unread_index", False)


def _split_by_pending(indexed_bits: int, pending_value: int, message_id_column: Any) -> list[Any]:
    indexed = UserMessage.flags.bin_and(indexed_bits) == 0
    # With no message listed, the listed rows' query would find nothing, yet it can cost as much
    # as the other (a search narrow runs its full-text match for each).
    if not defers_unread_index() or not _any_listed():
        return [indexed]
    column = UserMessage.message if message_id_column is None else message_id_column
    pending = ((UserMessage.flags.bin_and(indexed_bits) == pending_value)
               & column.in_(SQL("(SELECT message_id FROM pending_unread_message)")))
    # The listed rows first. Outside a transaction each query reads its own snapshot, and the
    # unread pass may move rows from the list into the indexes between the two: asked in this
    # order, such a row is found twice (callers drop the repeat), never not at all.
    return [pending, indexed]


def _any_listed() -> bool:
    return database.execute_sql("SELECT 1 FROM pending_unread_message LIMIT 1").fetchone() is not None


def received_conditions(message_id_column: Any = None) -> list[Any]:
    """Conditions on UserMessage (joined to Message where `message_id_column` is Message.id) whose
    union is every row, each of which an index serves for one user's rows: on a database that
    defers it and while any message is listed, the key's rows of the listed messages, then the
    per-user index (user_message_by_user). A query for a user's rows that names neither uses no
    index of the user: query each, in this order, and join the results, dropping repeats."""
    return _split_by_pending(PENDING_UNREAD_INDEX, PENDING_UNREAD_INDEX, message_id_column)


def unread_conditions(message_id_column: Any = None) -> list[Any]:
    """As received_conditions(), for the unread rows: the unread index, and on a database that
    defers it, the key's unread rows of the listed messages. SQLite's planner serves an OR of the
    two with neither."""
    return _split_by_pending(_READ_OR_PENDING, PENDING_UNREAD_INDEX, message_id_column)


def unread_condition_sql(row: str) -> list[str]:
    """unread_conditions() as SQL text, for a hand-written query whose per-user table is named
    `row`: the same conditions in the same order, each served by an index."""
    return _split_by_pending_sql(row, _READ_OR_PENDING, PENDING_UNREAD_INDEX)


def received_condition_sql(row: str) -> list[str]:
    """received_conditions() as SQL text, as unread_condition_sql()."""
    return _split_by_pending_sql(row, PENDING_UNREAD_INDEX, PENDING_UNREAD_INDEX)


def _split_by_pending_sql(row: str, indexed_bits: int, pending_value: int) -> list[str]:
    indexed = f'({row}."flags" & {indexed_bits}) = 0'
    if not defers_unread_index() or not _any_listed():
        return [indexed]
    pending = (f'({row}."flags" & {indexed_bits}) = {pending_value}'
               f' AND {row}."message_id" IN (SELECT "message_id" FROM "pending_unread_message")')
    return [pending, indexed]


def new_user_message_rows(message_id: int, flags_by_user: dict[int, int]) -> tuple[list[tuple[int, int, int]], bool]:
    """The (user, message, flags) rows a send inserts, and whether any of them waits for the
    per-user indexes: the unread ones do where the database defers them (asked once per send)."""
    pending = PENDING_UNREAD_INDEX if defers_unread_index() else 0
    read = FLAG_BITS["read"]
    rows = [(uid, message_id, bits if bits & read else bits | pending) for uid, bits in flags_by_user.items()]
    return rows, bool(pending) and any(not bits & read for bits in flags_by_user.values())


class PendingUnreadMessage(BaseModel):
    """A message whose recipients' rows may carry PENDING_UNREAD_INDEX (written by its send)."""

    message_id = BigIntegerField(primary_key=True)

    class Meta:
        table_name = "pending_unread_message"


class Reaction(BaseModel):
    message = ForeignKeyField(Message, backref="reactions", on_delete="CASCADE")
    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    emoji_name = CharField(max_length=100)
    emoji_code = CharField(max_length=100)
    reaction_type = CharField(max_length=30, default="unicode_emoji")
    date_created = IntegerField(default=now)

    class Meta:
        indexes = ((("message", "user_profile", "emoji_code", "reaction_type"), True),)


# Zulip's default realm_empty_topic_display_name: the empty topic's name in clients that have
# not declared the empty_topic_name capability (or allow_empty_topic_name=false).
EMPTY_TOPIC_DISPLAY_NAME = "general chat"

# Zulip's visibility_policy values for user_topics.
TOPIC_INHERIT, TOPIC_MUTED, TOPIC_UNMUTED, TOPIC_FOLLOWED = 0, 1, 2, 3


class UserTopic(BaseModel):
    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    stream = ForeignKeyField(Stream, on_delete="CASCADE")
    topic = CharField(max_length=60)
    topic_key = CharField(max_length=60)
    visibility_policy = IntegerField(default=TOPIC_INHERIT)
    last_updated = IntegerField(default=now)

    class Meta:
        indexes = ((("user_profile", "stream", "topic_key"), True),)


class BotStorageData(BaseModel):
    """String values stored per bot (PUT/GET /bot_storage)."""

    bot_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    key = CharField(max_length=200)
    value = TextField()

    class Meta:
        indexes = ((("bot_profile", "key"), True),)


class SubMessage(BaseModel):
    """A widget's state change attached to a message (Zulip's submessages): the widget itself
    (a /poll or /todo message's first one, by its sender), then votes, options, tasks."""
    message = ForeignKeyField(Message, backref="submessages", on_delete="CASCADE")
    sender = ForeignKeyField(UserProfile, on_delete="CASCADE")
    msg_type = CharField(max_length=30)
    content = TextField()
