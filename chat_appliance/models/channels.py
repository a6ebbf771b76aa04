"""Channels (Zulip's streams), recipients, subscriptions and direct-message groups."""

from peewee import BooleanField, CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, now
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile

# Recipient types, as Zulip numbers them. Every direct-message conversation, one-to-one
# and self included, has a DIRECT_MESSAGE_GROUP recipient (Zulip feature level 482 moved
# one-to-one conversations to such recipients, keeping recipient_id's meaning).
RECIPIENT_STREAM = 2
RECIPIENT_DIRECT_MESSAGE_GROUP = 3


class Recipient(BaseModel):
    type = IntegerField()


class Stream(BaseModel):
    realm = ForeignKeyField(Realm, backref="streams")
    name = CharField(max_length=60)
    # Lower-cased name: channel names are unique without regard to case.
    name_key = CharField(max_length=60)
    description = CharField(default="", max_length=1024)
    rendered_description = TextField(default="")
    invite_only = BooleanField(default=False)
    history_public_to_subscribers = BooleanField(default=True)
    is_web_public = BooleanField(default=False)
    date_created = IntegerField(default=now)
    creator = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
    recipient = ForeignKeyField(Recipient, unique=True)
    first_message_id = IntegerField(null=True)
    message_retention_days = IntegerField(null=True)
    folder_id = IntegerField(null=True)
    deactivated = BooleanField(default=False)
    # Group-valued permission settings (can_send_message_group, ...): group ids.
    settings = JSONField(default=dict)

    class Meta:
        indexes = ((("realm", "name_key"), True),)


class Subscription(BaseModel):
    user_profile = ForeignKeyField(UserProfile, backref="subscriptions", on_delete="CASCADE")
    stream = ForeignKeyField(Stream, backref="subscriptions", on_delete="CASCADE")
    active = BooleanField(default=True)
    color = CharField(max_length=10, default="#c2c2c2")
    is_muted = BooleanField(default=False)
    pin_to_top = BooleanField(default=False)
    desktop_notifications = BooleanField(null=True)
    audible_notifications = BooleanField(null=True)
    push_notifications = BooleanField(null=True)
    email_notifications = BooleanField(null=True)
    wildcard_mentions_notify = BooleanField(null=True)

    class Meta:
        indexes = ((("user_profile", "stream"), True), (("stream", "active"), False))


class DirectMessageGroup(BaseModel):
    """A set of users who share one direct-message conversation."""

    # Sorted member ids joined by commas: one conversation per set of users.
    member_key = CharField(max_length=2000, unique=True)
    recipient = ForeignKeyField(Recipient, unique=True)
    group_size = IntegerField()


class DirectMessageGroupMember(BaseModel):
    group = ForeignKeyField(DirectMessageGroup, backref="members", on_delete="CASCADE")
    user_profile = ForeignKeyField(UserProfile, backref="dm_groups", on_delete="CASCADE")

    class Meta:
        indexes = ((("group", "user_profile"), True), (("user_profile",), False))
