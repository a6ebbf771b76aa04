"""Where uploaded files live, and reads of them (actions/uploads.py stores and deletes them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from itsdangerous import URLSafeTimedSerializer

from chat_appliance import models  # its message models load on first use (models/__init__.py)

if TYPE_CHECKING:
    from chat_appliance.models import Attachment
    import peewee


class UploadStore:
    """Where an instance keeps its files, and the key that signs their temporary URLs. One per
    app, made by create_app (the key is generated once per instance and kept in it). Here, not
    in actions/uploads.py, so that the app makes it without loading the upload actions."""

    def __init__(self, root, signing_key):
        self.root = Path(root)
        self.signer = URLSafeTimedSerializer(signing_key, salt="user_uploads")

    def path(self, path_id: str) -> Path:
        """The file's place on disk."""
        return self.root / path_id


def messages_linking(attachment: Attachment) -> peewee.ModelSelect:
    """Messages that share the file, oldest first."""
    message, link = models.Message, models.AttachmentMessage
    return (message.select()
            .join(link, on=(link.message_id == message.id))
            .where(link.attachment_id == attachment.id)
            .order_by(message.id))
