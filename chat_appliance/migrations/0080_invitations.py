"""Migration 80: email invitations and reusable invitation links, in one table.

Its realm_id and referred_by_id were made plain integer columns here, where the model has foreign
keys; migration 83 rebuilds the table as the model states it. Shipped as it is: never edit it.
"""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "invitations"


def apply(database, backend):
    frozen = Frozen(database)

    class Invitation(frozen.Model):
        realm_id = IntegerField()
        referred_by_id = IntegerField(null=True)
        is_multiuse = BooleanField(default=False)
        email = CharField(max_length=254, null=True)
        key = CharField(max_length=40, unique=True)
        invited_as = IntegerField(default=400)
        stream_ids = TextField(default="[]")
        group_ids = TextField(default="[]")
        include_realm_default_subscriptions = BooleanField(default=False)
        notify_referrer_on_join = BooleanField(default=True)
        welcome_message_custom_text = TextField(null=True)
        invited = IntegerField()
        expiry_date = BigIntegerField(null=True)
        status = IntegerField(default=0)

        class Meta:
            table_name = "invitation"
            legacy_table_names = True  # index names from the class name, as shipped (83 rebuilds the table)
            indexes = ((("realm_id", "status"), False),)

    frozen.create(Invitation)
