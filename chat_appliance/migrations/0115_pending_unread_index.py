"""Migration 115: a send's unread rows can wait to enter the unread index (models/messages.py,
PENDING_UNREAD_INDEX). The partial index now leaves out rows carrying that bit, and the table
pending_unread_message lists the messages whose rows may carry it. Rows written before this
migration carry no such bit, so the index keeps the same rows.
"""

from peewee import BigIntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "unread rows of new messages enter the unread index in batches"

PENDING_UNREAD_INDEX = 1 << 11  # the value of models.messages.PENDING_UNREAD_INDEX when written


def apply(database, backend):
    database.execute_sql("DROP INDEX IF EXISTS user_message_unread")
    database.execute_sql(
        "CREATE INDEX user_message_unread ON user_message (user_profile_id, message_id)"
        f" WHERE (flags & {1 | PENDING_UNREAD_INDEX}) = 0"
    )
    frozen = Frozen(database)

    class FrozenPendingUnreadMessage(frozen.Model):
        message_id = BigIntegerField(primary_key=True)

        class Meta:
            table_name = "pending_unread_message"

    frozen.create(FrozenPendingUnreadMessage)
