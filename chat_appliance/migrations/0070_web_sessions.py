"""Migration 70: the signed-in sessions of the web client (a hashed cookie token, its CSRF token
and its lifetime), deleted with their user.
"""

from peewee import CharField, ForeignKeyField, IntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "web client sessions"


def apply(database, backend):
    frozen = Frozen(database)
    UserProfile = frozen.table("user_profile")

    class WebSession70(frozen.Model):
        token_hash = CharField(max_length=64, unique=True)
        user = ForeignKeyField(UserProfile, on_delete="CASCADE")
        csrf_token = CharField(max_length=64)
        created = IntegerField()
        expires = IntegerField()

        class Meta:
            table_name = "web_session"
            legacy_table_names = True  # index names from the class name, as shipped (111 renames them)
            indexes = ((("user",), False),)

    frozen.create(WebSession70)
