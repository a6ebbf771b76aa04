"""Uploaded files (POST /user_uploads) and the messages that share them."""

from peewee import CharField, IntegerField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile


class Attachment(BaseModel):
    """One uploaded file. `path_id` is `{realm_id}/{random}/{safe file name}`: the part of the
    URL after /user_uploads/, and the file's place under the instance's uploads folder."""

    realm = ForeignKeyField(Realm, backref="attachments", on_delete="CASCADE")
    owner = ForeignKeyField(UserProfile, backref="attachments", on_delete="CASCADE")
    path_id = CharField(max_length=300, unique=True)
    file_name = CharField(max_length=255)
    content_type = CharField(max_length=255, default="application/octet-stream")
    size = IntegerField()
    create_time = IntegerField(default=now)
    # An image that could be thumbnailed (lib/thumbnails.py): its size as displayed and frames;
    # NULL for other files and for images uploaded before thumbnails existed.
    image_width = IntegerField(null=True)
    image_height = IntegerField(null=True)
    image_frames = IntegerField(null=True)
    # The thumbnail formats made, space-separated ("840x560.webp"); "" none.
    thumbnail_formats = CharField(max_length=200, default="")


class AttachmentMessage(BaseModel):
    """A message that links a file and thereby shares it with its readers. Made when the message is
    sent or edited, and only if the sender could then open the file: knowing a file's URL is not
    access (Zulip links an attachment to a message under the same condition). Plain integer
    columns: the rows go with their message in the one deletion path."""

    attachment_id = IntegerField()
    message_id = IntegerField(index=True)

    class Meta:
        table_name = "attachment_message"
        indexes = ((("attachment_id", "message_id"), True),)
