"""Reads of uploaded files (actions/uploads.py stores and deletes them)."""

from chat_appliance.models import AttachmentMessage, Message


def messages_linking(attachment):
    """Messages that share the file, oldest first."""
    return (Message.select()
            .join(AttachmentMessage, on=(AttachmentMessage.message_id == Message.id))
            .where(AttachmentMessage.attachment_id == attachment.id)
            .order_by(Message.id))
