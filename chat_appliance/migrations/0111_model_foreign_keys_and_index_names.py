"""Migration 111: the foreign keys and index names the models state, where older migrations made
something else (found by tests/ops/test_migration_schema.py, which compares the two schemas).

- channel_email_address (migration 81) and scheduled_message (migration 82) were made with plain
  integer columns where the models have foreign keys, deleted with the realm, channel or user
  they belong to (a channel email address's creator is set to NULL instead), and the indexes that
  come with them. SQLite cannot add a foreign key to a table, so both tables are made again, rows
  and ids kept. A row whose realm, channel or user no longer exists is left out, as the
  foreign key would have deleted it.
- Migrations 60, 70, 81, 82 and 100 named their indexes after their frozen class
  (websession70_user_id, frozenbotservice_bot_id, ...) where the models name them after the
  table (web_session_user_id, ...). A later migration that drops or replaces an index by the
  name the model gives must find it: those indexes are made again under the model's names.
"""

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "foreign keys and index names as the models state them"

# (table, old name, new name, unique, columns) of the indexes only renamed.
RENAMED_INDEXES = [
    ("attachment_message", "attachmentmessage_attachment_id_message_id", "attachment_message_attachment_id_message_id",
     True, ("attachment_id", "message_id")),
    ("attachment_message", "attachmentmessage_message_id", "attachment_message_message_id", False, ("message_id",)),
    ("web_session", "websession70_token_hash", "web_session_token_hash", True, ("token_hash",)),
    ("web_session", "websession70_user_id", "web_session_user_id", False, ("user_id",)),
    ("bot_service", "frozenbotservice_bot_id", "bot_service_bot_id", True, ("bot_id",)),
]


def apply(database, backend):
    frozen = Frozen(database)
    Realm, Stream, UserProfile = frozen.tables("realm", "stream", "user_profile")

    class ChannelEmailAddress(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        stream = ForeignKeyField(Stream, on_delete="CASCADE")
        sender = ForeignKeyField(UserProfile, on_delete="CASCADE")
        creator = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
        email_token = CharField(max_length=32, unique=True)
        date_created = IntegerField()

        class Meta:
            table_name = "channel_email_address"
            indexes = ((("stream", "sender"), True),)

    class ScheduledMessage(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        sender = ForeignKeyField(UserProfile, on_delete="CASCADE")
        delivery_type = IntegerField()
        type = CharField(max_length=10)
        to = TextField()
        topic = TextField()
        content = TextField()
        rendered_content = TextField()
        scheduled_timestamp = BigIntegerField(index=True)
        read_by_sender = BooleanField(null=True)
        sending_client = CharField(max_length=60)
        delivered = BooleanField()
        delivered_message_id = IntegerField(null=True)
        failed = BooleanField()
        failure_message = TextField(null=True)
        reminder_target_message_id = IntegerField(null=True)
        date_created = IntegerField()

        class Meta:
            table_name = "scheduled_message"
            indexes = ((("sender", "delivery_type", "delivered"), False),)

    _rebuild(database, backend, frozen, ChannelEmailAddress)
    _rebuild(database, backend, frozen, ScheduledMessage)
    for table, old, new, unique, columns in RENAMED_INDEXES:
        # DROP and CREATE rather than a rename, which SQLite does not have for indexes.
        database.execute_sql(f'DROP INDEX "{old}"')
        listed = ", ".join(f'"{column}"' for column in columns)
        database.execute_sql(f'CREATE {"UNIQUE " if unique else ""}INDEX "{new}" ON "{table}" ({listed})')


def _rebuild(database, backend, frozen, model):
    """Make `model`'s table again as the frozen model states it, keeping its rows, their ids and
    where its ids have got to; rows that a foreign key would have deleted are left out, and
    references that it would have set to NULL are NULL."""
    table = model._meta.table_name
    old = f"{table}_before_111"
    kept, select, where = [], [], []
    for field in model._meta.sorted_fields:
        column = f'"{field.column_name}"'
        kept.append(column)
        if not isinstance(field, ForeignKeyField):
            select.append(column)
            continue
        target = field.rel_model._meta.table_name
        exists = f'EXISTS (SELECT 1 FROM "{target}" WHERE "{target}".id = {old}.{column})'
        if field.null and field.on_delete == "SET NULL":
            select.append(f"CASE WHEN {exists} THEN {column} END")
        else:
            select.append(column)
            where.append(exists)
    last_id = _id_sequence_position(database, backend, table)
    database.execute_sql(f'CREATE TABLE {old} AS SELECT * FROM "{table}"')
    database.execute_sql(f'DROP TABLE "{table}"')
    frozen.create(model)
    database.execute_sql(f'INSERT INTO "{table}" ({", ".join(kept)}) SELECT {", ".join(select)} FROM {old}'
                         + (f" WHERE {' AND '.join(where)}" if where else ""))
    database.execute_sql(f"DROP TABLE {old}")
    if last_id:
        # The new table's sequence starts again at 1: it goes on from where the old one was, so
        # that an id given out before (to a row since deleted) is not given out again.
        database.execute_sql(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), {int(last_id)})")


def _id_sequence_position(database, backend, table):
    """The last id PostgreSQL's sequence of `table` gave out (None if none yet); None on SQLite,
    where a rebuilt table's next id is its largest id + 1, as it was before."""
    if backend.NAME != "postgres":
        return None
    (sequence,) = database.execute_sql(f"SELECT pg_get_serial_sequence('\"{table}\"', 'id')").fetchone()
    last_value, is_called = database.execute_sql(f"SELECT last_value, is_called FROM {sequence}").fetchone()
    return last_value if is_called else None
