"""Messages waiting to be sent: scheduled messages ("send later") and reminders, which the
scheduler (chat_appliance/server/scheduler.py) delivers when their time comes."""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, now
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile

# delivery_type: a message the sender scheduled, or a reminder Notification Bot sends them.
SEND_LATER, REMINDER = 1, 2


class ScheduledMessage(BaseModel):
    realm = ForeignKeyField(Realm, on_delete="CASCADE")
    sender = ForeignKeyField(UserProfile, on_delete="CASCADE")
    delivery_type = IntegerField(default=SEND_LATER)
    # "stream" or "private", as the API lists them.
    type = CharField(max_length=10)
    # A channel id for channel messages; user ids for direct messages and reminders.
    to = JSONField()
    # Text rather than a 60-character column: MAX_TOPIC_LENGTH is configurable.
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
    date_created = IntegerField(default=now)

    class Meta:
        table_name = "scheduled_message"
        indexes = ((("sender", "delivery_type", "delivered"), False),)
