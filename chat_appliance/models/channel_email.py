"""The email address of a channel (GET /streams/{id}/email_address): one token per channel and
sender. This server receives no email; the address is shown as Zulip shows it."""

from peewee import CharField, IntegerField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.channels import Stream
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile


class ChannelEmailAddress(BaseModel):
    realm = ForeignKeyField(Realm, on_delete="CASCADE")
    stream = ForeignKeyField(Stream, on_delete="CASCADE")
    sender = ForeignKeyField(UserProfile, on_delete="CASCADE")
    creator = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL", backref="+")
    email_token = CharField(max_length=32, unique=True)
    date_created = IntegerField(default=now)

    class Meta:
        table_name = "channel_email_address"
        indexes = ((("stream", "sender"), True),)
