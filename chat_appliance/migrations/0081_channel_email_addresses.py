"""Migration 81: the token of each channel's email address, one per channel and sender
(GET /streams/{id}/email_address).

Its four references were made plain integer columns here, where the model has foreign keys;
migration 111 rebuilds the table as the model states it. Shipped as it is: never edit it.
"""

from peewee import CharField, IntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "channel email addresses"


def apply(database, backend):
    frozen = Frozen(database)

    class ChannelEmailAddress(frozen.Model):
        realm_id = IntegerField()
        stream_id = IntegerField()
        sender_id = IntegerField()
        creator_id = IntegerField(null=True)
        email_token = CharField(max_length=32, unique=True)
        date_created = IntegerField()

        class Meta:
            table_name = "channel_email_address"
            legacy_table_names = True  # index names from the class name, as shipped (111 renames them)
            indexes = ((("stream_id", "sender_id"), True),)

    frozen.create(ChannelEmailAddress)
