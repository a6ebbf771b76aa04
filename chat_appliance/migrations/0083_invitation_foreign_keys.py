"""Migration 83: migration 80 made the invitation table with plain integer columns where the
model has foreign keys (to the realm and the inviting user, deleted with them) and their indexes.
The table is made again as the model states it, rows and ids kept: SQLite cannot add a foreign
key to an existing table. (The difference was found by comparing the migrated schema with the
models', as tests/ops/test_migration_schema.py does.)
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

DESCRIPTION = "invitation foreign keys"


def apply(database, backend):
    frozen = Frozen(database)
    Realm, UserProfile = frozen.tables("realm", "user_profile")

    class Invitation(frozen.Model):
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
            indexes = ((("realm", "status"), False),)

    columns = ", ".join(f'"{field.column_name}"' for field in Invitation._meta.sorted_fields)
    database.execute_sql('CREATE TABLE invitation_before_51 AS SELECT * FROM "invitation"')
    database.execute_sql('DROP TABLE "invitation"')
    frozen.create(Invitation)
    database.execute_sql(f'INSERT INTO "invitation" ({columns}) SELECT {columns} FROM invitation_before_51')
    database.execute_sql("DROP TABLE invitation_before_51")
    backend.advance_sequences(database, {})
