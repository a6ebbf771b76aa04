"""Migration 1: the first schema. The organization (realm), its users and groups, channels and
their subscriptions, direct message groups, messages with a row per recipient for personal
flags, reactions, followed/muted topics and bot storage.

Besides the tables: three partial indexes on user_message for the unread, starred and mentioned
views, which no model can declare (the model has no WHERE clause for an index).
"""

from peewee import (
    BooleanField,
    CharField,
    CompositeKey,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "initial schema"


def apply(database, backend):
    frozen = Frozen(database)

    class Realm(frozen.Model):
        name = CharField(max_length=40)
        host = CharField()
        url = CharField()
        date_created = IntegerField()
        description = CharField(max_length=1000)
        moderation_request_channel_id = IntegerField(null=True)
        message_edit_history_visibility_policy = IntegerField()
        can_mention_many_users_group_id = IntegerField(null=True)
        allow_message_editing = BooleanField()
        message_content_edit_limit_seconds = IntegerField()
        settings = TextField()

        class Meta:
            table_name = "realm"

    class UserProfile(frozen.Model):
        realm = ForeignKeyField(Realm)
        email = CharField(max_length=254, index=True)
        delivery_email = CharField(max_length=254, index=True)
        full_name = CharField(max_length=100)
        role = IntegerField()
        is_active = BooleanField()
        is_bot = BooleanField()
        bot_type = IntegerField(null=True)
        bot_owner = ForeignKeyField("self", on_delete="SET NULL", null=True)
        is_system_bot = BooleanField()
        api_key = CharField(max_length=32, unique=True)
        password = CharField(null=True)
        date_joined = IntegerField()
        timezone = CharField(max_length=64)
        email_address_visibility = IntegerField()
        avatar_version = IntegerField()
        settings = TextField()

        class Meta:
            table_name = "user_profile"

    class UserGroup(frozen.Model):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=100)
        description = TextField()
        is_system_group = BooleanField()
        deactivated = BooleanField()
        date_created = IntegerField()
        creator = ForeignKeyField(UserProfile, on_delete="SET NULL", null=True)
        settings = TextField()

        class Meta:
            table_name = "user_group"
            indexes = ((('realm', 'name'), True),)

    class UserGroupMembership(frozen.Model):
        user_group = ForeignKeyField(UserGroup, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")

        class Meta:
            table_name = "user_group_membership"
            indexes = ((('user_group', 'user_profile'), True), (('user_profile',), False))

    class GroupGroupMembership(frozen.Model):
        supergroup = ForeignKeyField(UserGroup, on_delete="CASCADE")
        subgroup = ForeignKeyField(UserGroup, on_delete="CASCADE")

        class Meta:
            table_name = "group_group_membership"
            indexes = ((('supergroup', 'subgroup'), True),)

    class Recipient(frozen.Model):
        type = IntegerField()

        class Meta:
            table_name = "recipient"

    class Stream(frozen.Model):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=60)
        name_key = CharField(max_length=60)
        description = CharField(max_length=1024)
        rendered_description = TextField()
        invite_only = BooleanField()
        history_public_to_subscribers = BooleanField()
        is_web_public = BooleanField()
        date_created = IntegerField()
        creator = ForeignKeyField(UserProfile, on_delete="SET NULL", null=True)
        recipient = ForeignKeyField(Recipient, unique=True)
        first_message_id = IntegerField(null=True)
        message_retention_days = IntegerField(null=True)
        folder_id = IntegerField(null=True)
        deactivated = BooleanField()
        settings = TextField()

        class Meta:
            table_name = "stream"
            indexes = ((('realm', 'name_key'), True),)

    class Subscription(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        stream = ForeignKeyField(Stream, on_delete="CASCADE")
        active = BooleanField()
        color = CharField(max_length=10)
        is_muted = BooleanField()
        pin_to_top = BooleanField()
        desktop_notifications = BooleanField(null=True)
        audible_notifications = BooleanField(null=True)
        push_notifications = BooleanField(null=True)
        email_notifications = BooleanField(null=True)
        wildcard_mentions_notify = BooleanField(null=True)

        class Meta:
            table_name = "subscription"
            indexes = ((('user_profile', 'stream'), True), (('stream', 'active'), False))

    class DirectMessageGroup(frozen.Model):
        member_key = CharField(max_length=2000, unique=True)
        recipient = ForeignKeyField(Recipient, unique=True)
        group_size = IntegerField()

        class Meta:
            table_name = "direct_message_group"

    class DirectMessageGroupMember(frozen.Model):
        group = ForeignKeyField(DirectMessageGroup, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")

        class Meta:
            table_name = "direct_message_group_member"
            indexes = ((('group', 'user_profile'), True), (('user_profile',), False))

    class Message(frozen.Model):
        realm = ForeignKeyField(Realm)
        sender = ForeignKeyField(UserProfile)
        recipient = ForeignKeyField(Recipient)
        stream = ForeignKeyField(Stream, null=True)
        topic = CharField(max_length=60)
        topic_key = CharField(max_length=60)
        content = TextField()
        rendered_content = TextField()
        date_sent = IntegerField()
        sending_client = CharField(max_length=60)
        last_edit_time = IntegerField(null=True)
        last_moved_time = IntegerField(null=True)
        edit_history = TextField(null=True)
        is_me_message = BooleanField()
        has_link = BooleanField()
        has_image = BooleanField()
        has_attachment = BooleanField()

        class Meta:
            table_name = "message"
            indexes = ((('recipient', 'id'), False), (('recipient', 'topic_key', 'id'), False),
                       (('sender', 'id'), False))

    class UserMessage(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        message = ForeignKeyField(Message, on_delete="CASCADE")
        flags = IntegerField()

        class Meta:
            table_name = "user_message"
            primary_key = CompositeKey('user_profile', 'message')
            indexes = ((('message',), False),)

    class Reaction(frozen.Model):
        message = ForeignKeyField(Message, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        emoji_name = CharField(max_length=100)
        emoji_code = CharField(max_length=100)
        reaction_type = CharField(max_length=30)
        date_created = IntegerField()

        class Meta:
            table_name = "reaction"
            indexes = ((('message', 'user_profile', 'emoji_code', 'reaction_type'), True),)

    class UserTopic(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        stream = ForeignKeyField(Stream, on_delete="CASCADE")
        topic = CharField(max_length=60)
        topic_key = CharField(max_length=60)
        visibility_policy = IntegerField()
        last_updated = IntegerField()

        class Meta:
            table_name = "user_topic"
            indexes = ((('user_profile', 'stream', 'topic_key'), True),)

    class BotStorageData(frozen.Model):
        bot_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        key = CharField(max_length=200)
        value = TextField()

        class Meta:
            table_name = "bot_storage_data"
            indexes = ((('bot_profile', 'key'), True),)

    frozen.create(
        Realm, UserProfile, UserGroup, UserGroupMembership, GroupGroupMembership, Recipient, Stream,
        Subscription, DirectMessageGroup, DirectMessageGroupMember, Message, UserMessage, Reaction, UserTopic,
        BotStorageData,
    )
    # Partial indexes serve "my unread / starred / mentioned messages, newest first" without
    # scanning a user's whole history. The same SQL works on SQLite and PostgreSQL.
    for name, condition in (
        ("unread", "(flags & 1) = 0"),
        ("starred", "(flags & 2) != 0"),
        ("mentioned", "(flags & 120) != 0"),  # mentioned | stream/topic wildcard | group
    ):
        database.execute_sql(
            f"CREATE INDEX user_message_{name} ON user_message (user_profile_id, message_id) WHERE {condition}"
        )
