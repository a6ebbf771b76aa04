"""Outgoing mail not yet confirmed by the SMTP server (clients/send_email.py)."""

from peewee import BlobField, CharField, DoubleField, IntegerField, TextField

from chat_appliance.models.base import BaseModel


class OutgoingEmail(BaseModel):
    """One mail, kept from the moment it is queued until the SMTP server confirms it (250 after
    DATA), or refuses it for good, or its retries run out: a server down for a while, a restart or
    SIGTERM loses nothing. `message` is the whole mail as built, its Message-ID included, so that
    every attempt sends the same mail and a receiver that got an unconfirmed attempt drops the
    next as a duplicate. `due_at` is when it may be tried next; an attempt in progress moves it
    past the attempt's longest length, so that another process (or this one after a crash)
    takes it up again only if the attempt never ended."""

    recipient = CharField(max_length=320)
    subject = TextField()
    message = BlobField()
    queued_at = DoubleField()
    due_at = DoubleField(index=True)
    attempts = IntegerField(default=0)
    last_error = TextField(null=True)

    class Meta:
        table_name = "outgoing_email"
