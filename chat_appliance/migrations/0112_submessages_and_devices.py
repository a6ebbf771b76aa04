"""Migration 112: submessages, the state changes of a message's widget (a poll's votes and
options, a todo list's tasks), as Zulip keeps them; deleted with their message or sender. And
client devices (Zulip's register_client_device): one row per installed app of a user, which
its push registration later refers to; deleted with the user.
"""

from peewee import CharField, ForeignKeyField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "submessages (poll and todo widgets), client devices"


def apply(database, backend):
    frozen = Frozen(database)
    Message = frozen.table("message")
    UserProfile = frozen.table("user_profile")

    class FrozenSubMessage(frozen.Model):
        message = ForeignKeyField(Message, on_delete="CASCADE", column_name="message_id")
        sender = ForeignKeyField(UserProfile, on_delete="CASCADE", column_name="sender_id")
        msg_type = CharField(max_length=30)
        content = TextField()

        class Meta:
            table_name = "sub_message"

    frozen.create(FrozenSubMessage)

    class FrozenClientDevice(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", column_name="user_profile_id")
        push_key_id = IntegerField(null=True)
        push_token_id = CharField(max_length=100, null=True)
        pending_push_token_id = CharField(max_length=100, null=True)
        push_token_last_updated_timestamp = IntegerField(null=True)
        push_registration_error_code = CharField(max_length=100, null=True)
        date_created = IntegerField()

        class Meta:
            table_name = "client_device"

    frozen.create(FrozenClientDevice)
