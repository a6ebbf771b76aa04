"""Migrations 80-89 (issue 19, part A): invitations, scheduled messages and reminders.

Each step states its own schema with frozen model classes (the fields as they are at that
version), independent of the live models in chat_appliance/models/.
"""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, Model, TextField


def invitations_schema(database, backend):
    """Email invitations and reusable invitation links (one table)."""

    class Invitation(Model):
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
            indexes = ((("realm_id", "status"), False),)

    Invitation._meta.set_database(database)
    database.create_tables([Invitation])


def channel_email_addresses_schema(database, backend):
    """The token of each channel's email address, per sender."""

    class ChannelEmailAddress(Model):
        realm_id = IntegerField()
        stream_id = IntegerField()
        sender_id = IntegerField()
        creator_id = IntegerField(null=True)
        email_token = CharField(max_length=32, unique=True)
        date_created = IntegerField()

        class Meta:
            table_name = "channel_email_address"
            indexes = ((("stream_id", "sender_id"), True),)

    ChannelEmailAddress._meta.set_database(database)
    database.create_tables([ChannelEmailAddress])


def scheduled_messages_schema(database, backend):
    """Scheduled messages and reminders, waiting for the scheduler."""

    class ScheduledMessage(Model):
        realm_id = IntegerField()
        sender_id = IntegerField()
        delivery_type = IntegerField(default=1)
        type = CharField(max_length=10)
        to = TextField()
        topic = TextField(default="")
        content = TextField()
        rendered_content = TextField()
        scheduled_timestamp = BigIntegerField(index=True)
        read_by_sender = BooleanField(null=True)
        sending_client = CharField(max_length=60, default="")
        delivered = BooleanField(default=False)
        delivered_message_id = IntegerField(null=True)
        failed = BooleanField(default=False)
        failure_message = TextField(null=True)
        reminder_target_message_id = IntegerField(null=True)
        date_created = IntegerField()

        class Meta:
            table_name = "scheduled_message"
            indexes = ((("sender_id", "delivery_type", "delivered"), False),)

    ScheduledMessage._meta.set_database(database)
    database.create_tables([ScheduledMessage])
