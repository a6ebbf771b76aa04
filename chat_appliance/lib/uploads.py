"""Reads of uploaded files (actions/uploads.py stores and deletes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import AttachmentMessage, Message

if TYPE_CHECKING:
    from chat_appliance.models import Attachment
    import peewee


def messages_linking(attachment: Attachment) -> peewee.ModelSelect:
    """Messages that share the file, oldest first."""
    return (Message.select()
            .join(AttachmentMessage, on=(AttachmentMessage.message_id == Message.id))
            .where(AttachmentMessage.attachment_id == attachment.id)
            .order_by(Message.id))
