"""Migration 82: scheduled messages ("send later") and reminders, waiting for the scheduler.

Its realm_id and sender_id were made plain integer columns here, where the model has foreign
keys; migration 111 rebuilds the table as the model states it. Shipped as it is: never edit it.
"""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "scheduled messages and reminders"


def apply(database, backend):
    frozen = Frozen(database)

    class ScheduledMessage(frozen.Model):
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
            legacy_table_names = True  # index names from the class name, as shipped (111 renames them)
            indexes = ((("sender_id", "delivery_type", "delivered"), False),)

    frozen.create(ScheduledMessage)
