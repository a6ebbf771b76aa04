"""Versioned schema migrations (`db.migrate` applies every version a database lacks).

Each entry is (version, description, function(database, backend)). Never edit an entry that has
shipped: add a new one. Each migration states its own schema: peewee models frozen as they were at
that version (defined inside the function, bound to the database passed in, with explicit table
names) or SQL that runs on SQLite and PostgreSQL alike; never today's live models, which move on.
Tables made by earlier migrations are named through `_table` stand-ins (an id is all a foreign
key needs). tests/test_migrations.py checks that the migrations make the live models' schema.

Version ranges per area keep helpers' migrations from colliding: 1-9 core, 10-19 organization,
20-29 personal, 40-49 clients, 50-59 database engines.
"""

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    CompositeKey,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

from chat_appliance.migrations.people_and_customization import create_tables
from chat_appliance.migrations.steps_api_a import channel_email_addresses_schema, invitations_schema, scheduled_messages_schema


def _base(db):
    """A model base bound to `db` (a class body cannot read a function's `database` argument)."""

    class Frozen(Model):
        class Meta:
            database = db
            legacy_table_names = False

    return Frozen


def _table(base, name):
    """A stand-in for a table an earlier migration made: foreign keys to it need only its id."""
    return type(name, (base,), {"Meta": type("Meta", (), {"table_name": name})})


def _initial_schema(database, backend):
    """Realm, users, groups, channels, messages with their per-user flag rows."""
    base = _base(database)

    class Realm(base):
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

    class UserProfile(base):
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

    class UserGroup(base):
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
            indexes = [(('realm', 'name'), True)]

    class UserGroupMembership(base):
        user_group = ForeignKeyField(UserGroup, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")

        class Meta:
            table_name = "user_group_membership"
            indexes = [(('user_group', 'user_profile'), True), (('user_profile',), False)]

    class GroupGroupMembership(base):
        supergroup = ForeignKeyField(UserGroup, on_delete="CASCADE")
        subgroup = ForeignKeyField(UserGroup, on_delete="CASCADE")

        class Meta:
            table_name = "group_group_membership"
            indexes = [(('supergroup', 'subgroup'), True)]

    class Recipient(base):
        type = IntegerField()

        class Meta:
            table_name = "recipient"

    class Stream(base):
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
            indexes = [(('realm', 'name_key'), True)]

    class Subscription(base):
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
            indexes = [(('user_profile', 'stream'), True), (('stream', 'active'), False)]

    class DirectMessageGroup(base):
        member_key = CharField(max_length=2000, unique=True)
        recipient = ForeignKeyField(Recipient, unique=True)
        group_size = IntegerField()

        class Meta:
            table_name = "direct_message_group"

    class DirectMessageGroupMember(base):
        group = ForeignKeyField(DirectMessageGroup, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")

        class Meta:
            table_name = "direct_message_group_member"
            indexes = [(('group', 'user_profile'), True), (('user_profile',), False)]

    class Message(base):
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
            indexes = [(('recipient', 'id'), False), (('recipient', 'topic_key', 'id'), False),
                       (('sender', 'id'), False)]

    class UserMessage(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        message = ForeignKeyField(Message, on_delete="CASCADE")
        flags = IntegerField()

        class Meta:
            table_name = "user_message"
            primary_key = CompositeKey('user_profile', 'message')
            indexes = [(('message',), False)]

    class Reaction(base):
        message = ForeignKeyField(Message, on_delete="CASCADE")
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        emoji_name = CharField(max_length=100)
        emoji_code = CharField(max_length=100)
        reaction_type = CharField(max_length=30)
        date_created = IntegerField()

        class Meta:
            table_name = "reaction"
            indexes = [(('message', 'user_profile', 'emoji_code', 'reaction_type'), True)]

    class UserTopic(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        stream = ForeignKeyField(Stream, on_delete="CASCADE")
        topic = CharField(max_length=60)
        topic_key = CharField(max_length=60)
        visibility_policy = IntegerField()
        last_updated = IntegerField()

        class Meta:
            table_name = "user_topic"
            indexes = [(('user_profile', 'stream', 'topic_key'), True)]

    class BotStorageData(base):
        bot_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        key = CharField(max_length=200)
        value = TextField()

        class Meta:
            table_name = "bot_storage_data"
            indexes = [(('bot_profile', 'key'), True)]

    database.create_tables([
        Realm, UserProfile, UserGroup, UserGroupMembership, GroupGroupMembership, Recipient, Stream,
        Subscription, DirectMessageGroup, DirectMessageGroupMember, Message, UserMessage, Reaction, UserTopic,
        BotStorageData,
    ])
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


def _message_search(database, backend):
    """Full-text search of messages (the engine's own: FTS5 or tsvector), and an index for the
    `date` anchor."""
    backend.create_search_index(database)
    database.execute_sql("CREATE INDEX message_date_sent ON message (date_sent)")


def _organization_structure(database, backend):
    """Channel folders, navigation views, linkifiers, custom profile fields, special
    permissions and push registrations (issue 8)."""
    base = _base(database)
    Realm, UserProfile = _table(base, "realm"), _table(base, "user_profile")

    class ChannelFolder(base):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=60)
        description = CharField(max_length=1024)
        rendered_description = TextField()
        date_created = IntegerField()
        creator = ForeignKeyField(UserProfile, on_delete="SET NULL", null=True)
        order = IntegerField()
        is_archived = BooleanField()

        class Meta:
            table_name = "channel_folder"

    class NavigationView(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        fragment = CharField(max_length=200)
        is_pinned = BooleanField()
        name = CharField(max_length=200, null=True)

        class Meta:
            table_name = "navigation_view"
            indexes = [(('user_profile', 'fragment'), True)]

    class Linkifier(base):
        realm = ForeignKeyField(Realm)
        pattern = TextField()
        url_template = TextField()
        order = IntegerField()

        class Meta:
            table_name = "linkifier"

    class CustomProfileField(base):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=40)
        hint = CharField(max_length=80)
        field_type = IntegerField()
        field_data = TextField()
        order = IntegerField()
        display_in_profile_summary = BooleanField()
        required = BooleanField()
        editable_by_user = BooleanField()

        class Meta:
            table_name = "custom_profile_field"

    class CustomProfileFieldValue(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        field = ForeignKeyField(CustomProfileField, on_delete="CASCADE")
        value = TextField()
        rendered_value = TextField(null=True)

        class Meta:
            table_name = "custom_profile_field_value"
            indexes = [(('user_profile', 'field'), True)]

    class UserPermission(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        permission = CharField(max_length=60)

        class Meta:
            table_name = "user_permission"
            indexes = [(('user_profile', 'permission'), True)]

    class PushDevice(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        push_account_id = BigIntegerField()
        token_kind = CharField(max_length=10)
        push_public_key = TextField()
        bouncer_public_key = TextField()
        encrypted_push_registration = TextField()
        date_updated = IntegerField()

        class Meta:
            table_name = "push_device"
            indexes = [(('user_profile', 'push_account_id'), True)]

    database.create_tables([
        ChannelFolder, NavigationView, Linkifier, CustomProfileField, CustomProfileFieldValue, UserPermission,
        PushDevice,
    ])


def _drafts_and_snippets(database, backend):
    """Server-side drafts and saved snippets (issue 7)."""
    base = _base(database)
    UserProfile = _table(base, "user_profile")

    class Draft(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        type = CharField(max_length=10)
        to = TextField()
        topic = TextField()
        content = TextField()
        last_edit_time = IntegerField()

        class Meta:
            table_name = "draft"
            indexes = [(('user_profile', 'last_edit_time'), False)]

    class SavedSnippet(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        title = TextField()
        content = TextField()
        date_created = IntegerField()

        class Meta:
            table_name = "saved_snippet"

    database.create_tables([Draft, SavedSnippet])


def _uploads_and_presence(database, backend):
    """Uploaded files and reported presence (issue 9: real clients)."""
    base = _base(database)
    Realm, UserProfile = _table(base, "realm"), _table(base, "user_profile")

    class Attachment(base):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        owner = ForeignKeyField(UserProfile, on_delete="CASCADE")
        path_id = CharField(max_length=300, unique=True)
        file_name = CharField()
        content_type = CharField()
        size = IntegerField()
        create_time = IntegerField()

        class Meta:
            table_name = "attachment"

    class UserPresence(base):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", unique=True)
        last_connected_time = IntegerField()
        last_active_time = IntegerField(null=True)
        last_update_id = IntegerField(index=True)

        class Meta:
            table_name = "user_presence"

    database.create_tables([Attachment, UserPresence])


def _message_ids_never_reused(database, backend):
    """A deleted newest message's id never comes back (issue 17): SQLite AUTOINCREMENT; on
    PostgreSQL the id sequence already never goes back."""
    backend.never_reuse_ids(database, "message")


def _web_sessions(database, backend):
    """Signed-in browser sessions of the web client (issue 18). Frozen schema of version 70."""
    from peewee import CharField, ForeignKeyField, IntegerField, Model

    class UserProfileRef(Model):
        class Meta:
            table_name = "user_profile"

    class WebSession70(Model):
        token_hash = CharField(max_length=64, unique=True)
        user = ForeignKeyField(UserProfileRef, on_delete="CASCADE")
        csrf_token = CharField(max_length=64)
        created = IntegerField()
        expires = IntegerField()

        class Meta:
            table_name = "web_session"
            indexes = ((("user",), False),)

    UserProfileRef.bind(database)
    WebSession70.bind(database)
    database.create_tables([WebSession70])


def _avatar_source(database, backend):
    """Uploaded avatars (issue 18): where a user's picture comes from. Plain SQL for both engines.
    Migration 1 creates user_profile from the live model, which already has the column on a new
    database; only older databases need it added."""
    if any(column.name == "avatar_source" for column in database.get_columns("user_profile")):
        return
    database.execute_sql("ALTER TABLE user_profile ADD COLUMN avatar_source VARCHAR(1) NOT NULL DEFAULT 'G'")
def _attachment_messages(database, backend):
    """Files are shared by the messages they were linked from by someone who could open them
    (issue 17, finding 3), recorded in attachment_message. Existing links are carried over when
    the sender uploaded the file or had received an earlier linking message; a link sent by
    anyone else was never access, and is not carried over."""
    from peewee import IntegerField, Model

    class AttachmentMessage(Model):
        attachment_id = IntegerField()
        message_id = IntegerField(index=True)

        class Meta:
            table_name = "attachment_message"
            indexes = ((("attachment_id", "message_id"), True),)

    AttachmentMessage._meta.set_database(database)
    database.create_tables([AttachmentMessage])
    attachments = database.execute_sql("SELECT id, path_id, owner_id, realm_id FROM attachment").fetchall()
    for attachment_id, path_id, owner_id, realm_id in attachments:
        rows = database.execute_sql(
            f"SELECT id, sender_id FROM message WHERE realm_id = {database.param} AND content LIKE {database.param} "
            "ORDER BY id", (realm_id, f"%/user_uploads/{path_id}%")).fetchall()
        linked = []
        for message_id, sender_id in rows:
            allowed = sender_id == owner_id or (linked and database.execute_sql(
                f"SELECT 1 FROM user_message WHERE user_profile_id = {database.param} AND message_id IN "
                f"({', '.join([database.param] * len(linked))})", (sender_id, *linked)).fetchone())
            if allowed:
                AttachmentMessage.insert(attachment_id=attachment_id, message_id=message_id).execute()
                linked.append(message_id)


def _people_and_customization(database, backend):
    """Statuses, muted users, alert words, legacy push tokens, custom emoji, playgrounds and
    exports (issue 19, part B)."""

    create_tables(database)


def _bot_services(database, backend):
    """Outgoing webhook and embedded bot services (issue 20). The table is stated here as it is
    at this version, independent of the live model."""
    from peewee import CharField, ForeignKeyField, IntegerField, Model, TextField

    class FrozenUserProfile(Model):
        class Meta:
            table_name = "user_profile"

    class FrozenBotService(Model):
        bot = ForeignKeyField(FrozenUserProfile, on_delete="CASCADE", unique=True, column_name="bot_id")
        name = CharField(max_length=100)
        base_url = TextField(default="")
        interface = IntegerField(default=1)
        token = CharField(max_length=64)
        config_data = TextField(default="{}")

        class Meta:
            table_name = "bot_service"

    with database.bind_ctx([FrozenUserProfile, FrozenBotService]):
        database.create_tables([FrozenBotService])


def _redundant_indexes(database, backend):
    """Drop the single-column indexes that a wider index already starts with: user_message's
    user_profile_id (its primary key leads with it), message's recipient_id and sender_id
    ((recipient_id, id) and (sender_id, id) lead with them). Every send wrote a row to each for
    every recipient; without them a send's COMMIT writes 30% fewer pages (BENCHMARKS.md)."""
    for table, column in (("user_message", "user_profile_id"), ("message", "recipient_id"),
                          ("message", "sender_id")):
        for index in database.get_indexes(table):
            if list(index.columns) == [column] and not index.unique:
                database.execute_sql(f'DROP INDEX "{index.name}"')


def _invitation_foreign_keys(database, backend):
    """Migration 80 made the invitation table with plain integer columns where the model has
    foreign keys (to the realm and the inviting user, deleted with them) and their indexes: the
    table is made again as the model states it, rows and ids kept (tests/test_migrations.py
    found the difference)."""
    base = _base(database)
    Realm, UserProfile = _table(base, "realm"), _table(base, "user_profile")

    class Invitation(base):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        referred_by = ForeignKeyField(UserProfile, on_delete="CASCADE", null=True)
        is_multiuse = BooleanField()
        email = CharField(max_length=254, null=True)
        key = CharField(max_length=40, unique=True)
        invited_as = IntegerField()
        stream_ids = TextField()
        group_ids = TextField()
        include_realm_default_subscriptions = BooleanField()
        notify_referrer_on_join = BooleanField()
        welcome_message_custom_text = TextField(null=True)
        invited = IntegerField()
        expiry_date = BigIntegerField(null=True)
        status = IntegerField()

        class Meta:
            table_name = "invitation"
            indexes = [(("realm", "status"), False)]

    columns = ", ".join(f'"{field.column_name}"' for field in Invitation._meta.sorted_fields)
    database.execute_sql('CREATE TABLE invitation_before_51 AS SELECT * FROM "invitation"')
    database.execute_sql('DROP TABLE "invitation"')
    database.create_tables([Invitation])
    database.execute_sql(f'INSERT INTO "invitation" ({columns}) SELECT {columns} FROM invitation_before_51')
    database.execute_sql("DROP TABLE invitation_before_51")
    backend.advance_sequences(database, {})


MIGRATIONS = [
    (1, "initial schema", _initial_schema),
    (2, "message search index", _message_search),
    (10, "organization structure", _organization_structure),
    (20, "drafts and saved snippets", _drafts_and_snippets),
    (40, "uploads and presence", _uploads_and_presence),
    (50, "message ids never reused", _message_ids_never_reused),
    (60, "files shared by the messages that link them", _attachment_messages),
    (70, "web client sessions", _web_sessions),
    (71, "uploaded avatars", _avatar_source),
    (80, "invitations", invitations_schema),
    (81, "channel email addresses", channel_email_addresses_schema),
    (82, "scheduled messages and reminders", scheduled_messages_schema),
    (83, "invitation foreign keys", _invitation_foreign_keys),
    (90, "people and organization customization", _people_and_customization),
    (100, "bot services", _bot_services),
    (110, "no index another index already starts with", _redundant_indexes),
]
