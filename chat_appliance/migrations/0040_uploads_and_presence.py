"""Migration 40: uploaded files (attachment) and the presence each user last reported.
"""

from peewee import CharField, ForeignKeyField, IntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "uploads and presence"


def apply(database, backend):
    frozen = Frozen(database)
    Realm, UserProfile = frozen.tables("realm", "user_profile")

    class Attachment(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        owner = ForeignKeyField(UserProfile, on_delete="CASCADE")
        path_id = CharField(max_length=300, unique=True)
        file_name = CharField()
        content_type = CharField()
        size = IntegerField()
        create_time = IntegerField()

        class Meta:
            table_name = "attachment"

    class UserPresence(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", unique=True)
        last_connected_time = IntegerField()
        last_active_time = IntegerField(null=True)
        last_update_id = IntegerField(index=True)

        class Meta:
            table_name = "user_presence"

    frozen.create(Attachment, UserPresence)
