"""Migration 20: drafts kept on the server (synced between a user's clients) and saved snippets.
"""

from peewee import CharField, ForeignKeyField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "drafts and saved snippets"


def apply(database, backend):
    frozen = Frozen(database)
    UserProfile = frozen.table("user_profile")

    class Draft(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        type = CharField(max_length=10)
        to = TextField()
        topic = TextField()
        content = TextField()
        last_edit_time = IntegerField()

        class Meta:
            table_name = "draft"
            indexes = ((('user_profile', 'last_edit_time'), False),)

    class SavedSnippet(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        title = TextField()
        content = TextField()
        date_created = IntegerField()

        class Meta:
            table_name = "saved_snippet"

    frozen.create(Draft, SavedSnippet)
