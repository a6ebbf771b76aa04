"""Migration 119: outgoing_email, the mail queue. Mail was kept in memory by one thread, so a
server restarted or stopped with mail queued lost it, and an SMTP server down for longer than
the few in-memory attempts lost it too; mail now stays in this table until the SMTP server
confirms it (clients/send_email.py)."""

from peewee import BlobField, CharField, DoubleField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "the outgoing mail queue"


def apply(database, backend):
    frozen = Frozen(database)

    class FrozenOutgoingEmail(frozen.Model):
        recipient = CharField(max_length=320)
        subject = TextField()
        message = BlobField()
        queued_at = DoubleField()
        due_at = DoubleField(index=True)
        attempts = IntegerField(default=0)
        last_error = TextField(null=True)

        class Meta:
            table_name = "outgoing_email"

    frozen.create(FrozenOutgoingEmail)
