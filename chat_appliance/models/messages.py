"""Messages, the per-user message rows that carry personal flags, reactions and topics."""

from peewee import BooleanField, CharField, CompositeKey, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, now
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
        )


class UserMessage(BaseModel):
    """One row per user who received (or was given history of) a message."""

    # No index of its own: the primary key starts with it.
    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", index=False)
    message = ForeignKeyField(Message, on_delete="CASCADE")
    flags = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("user_profile", "message")
        indexes = ((("message",), False),)


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
