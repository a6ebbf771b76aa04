"""What makes a service bot act: an outgoing webhook's URL and token, or an embedded bot's name
and configuration (Zulip's Service and BotConfigData, folded into one row per bot)."""

from peewee import CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField
from chat_appliance.models.users import UserProfile

# Outgoing webhook interfaces, as Zulip numbers them.
INTERFACE_GENERIC = 1
INTERFACE_SLACK = 2


class BotService(BaseModel):
    bot = ForeignKeyField(UserProfile, backref="services", on_delete="CASCADE", unique=True)
    # Outgoing webhooks: where to POST and in which format. Embedded bots: the zulip_bots name.
    name = CharField(max_length=100)
    base_url = TextField(default="")
    interface = IntegerField(default=INTERFACE_GENERIC)
    # Sent with every outgoing webhook request so that the receiver can tell it comes from us.
    token = CharField(max_length=64)
    # An embedded bot's configuration (string keys and values).
    config_data = JSONField(default=dict)

    class Meta:
        table_name = "bot_service"
