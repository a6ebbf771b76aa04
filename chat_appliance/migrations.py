"""Versioned schema migrations, applied in order on start (`db.migrate`).

Each entry is (version, description, function(database, backend)). Never edit an entry
that has shipped: add a new one.
"""

from . import models as m
from .migration_people_and_customization import create_tables
from .migration_steps_api_a import channel_email_addresses_schema, invitations_schema, scheduled_messages_schema


def _initial_schema(database, backend):
    """Realm, users, groups, channels, messages with their per-user flag rows."""
    database.create_tables(
        [
            m.Realm, m.UserProfile, m.UserGroup, m.UserGroupMembership, m.GroupGroupMembership,
            m.Recipient, m.Stream, m.Subscription, m.DirectMessageGroup, m.DirectMessageGroupMember,
            m.Message, m.UserMessage, m.Reaction, m.UserTopic, m.BotStorageData,
        ]
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


def _message_search(database, backend):
    """Full-text search of messages, and an index for the `date` anchor."""
    backend.create_search_index(database)
    database.execute_sql("CREATE INDEX message_date_sent ON message (date_sent)")


def _organization_structure(database, backend):
    """Channel folders, navigation views, linkifiers, custom profile fields, special
    permissions and push registrations (issue 8)."""
    database.create_tables(
        [
            m.ChannelFolder, m.NavigationView, m.Linkifier, m.CustomProfileField, m.CustomProfileFieldValue,
            m.UserPermission, m.PushDevice,
        ]
    )


def _drafts_and_snippets(database, backend):
    """Server-side drafts and saved snippets (issue 7)."""
    database.create_tables([m.Draft, m.SavedSnippet])


def _uploads_and_presence(database, backend):
    """Uploaded files and reported presence (issue 9: real clients)."""
    database.create_tables([m.Attachment, m.UserPresence])


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


MIGRATIONS = [
    (1, "initial schema", _initial_schema),
    (2, "message search index", _message_search),
    (10, "organization structure", _organization_structure),
    (20, "drafts and saved snippets", _drafts_and_snippets),
    (40, "uploads and presence", _uploads_and_presence),
    (60, "files shared by the messages that link them", _attachment_messages),
    (70, "web client sessions", _web_sessions),
    (71, "uploaded avatars", _avatar_source),
    (80, "invitations", invitations_schema),
    (81, "channel email addresses", channel_email_addresses_schema),
    (82, "scheduled messages and reminders", scheduled_messages_schema),
    (90, "people and organization customization", _people_and_customization),
    (100, "bot services", _bot_services),
]
