"""Migration 113: submessages, the state changes of a message's widget (a poll's votes and
options, a todo list's tasks), as Zulip keeps them; deleted with their message or sender.
"""

from peewee import CharField, ForeignKeyField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "submessages (poll and todo widgets)"


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
