"""Migration 100: the service behind each outgoing webhook or embedded bot (its URL or bot
name, interface and token); one per bot, deleted with it.
"""

from peewee import CharField, ForeignKeyField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "bot services"


def apply(database, backend):
    frozen = Frozen(database)
    UserProfile = frozen.table("user_profile")

    class FrozenBotService(frozen.Model):
        bot = ForeignKeyField(UserProfile, on_delete="CASCADE", unique=True, column_name="bot_id")
        name = CharField(max_length=100)
        base_url = TextField(default="")
        interface = IntegerField(default=1)
        token = CharField(max_length=64)
        config_data = TextField(default="{}")

        class Meta:
            table_name = "bot_service"
            legacy_table_names = True  # index names from the class name, as shipped (111 renames them)

    frozen.create(FrozenBotService)
