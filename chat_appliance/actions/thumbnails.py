"""Thumbnails of uploaded images, made off the request path (the thumbnail worker,
workers/thumbnails.py, calls these).

The upload request reads only the image's header (lib/thumbnails.probe_image) and stores its
size and frames with the Attachment, no thumbnail formats: that row *is* the pending job. It
survives a restart with the database (and travels with backups and moves between engines), and
the renderer reads the same state to show Zulip's placeholder meanwhile. The worker hears of a
new one after the upload commits and finds those left by a previous process at start
(pending_thumbnail_ids).

do_make_thumbnails decodes the image (outside any transaction), then in one transaction records
the formats made (or, for an image that cannot be decoded after all, that it is no image: a
plain link from then on, as Zulip drops its ImageAttachment row), rewrites the placeholders of
every message sharing the file (markdown/upload_previews.py) and tells their recipients with a
rendering-only update_message, as Zulip's worker does, sent after the commit.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from chat_appliance.db.connection import backend, write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib import event_catalogue
from chat_appliance.lib.messages import flags_to_names
from chat_appliance.lib.rendering import upload_image
from chat_appliance.lib.thumbnails import remove_thumbnails, thumbnail_upload
from chat_appliance.markdown.upload_previews import rewrite_upload_preview
from chat_appliance.models import Attachment, AttachmentMessage, Message, UserMessage

if TYPE_CHECKING:
    import pathlib

log = logging.getLogger(__name__)


def _pending(attachment: Attachment | None) -> bool:
    """An image (its header read at upload) without thumbnails yet."""
    return attachment is not None and attachment.image_width is not None and not attachment.thumbnail_formats


def pending_thumbnail_ids(from_id: int, limit: int) -> list[int]:
    """Ids of the attachments waiting for their thumbnails, from `from_id` on, oldest first."""
    return [row.id for row in Attachment.select(Attachment.id)
            .where((Attachment.id >= from_id) & Attachment.image_width.is_null(False)
                   & (Attachment.thumbnail_formats == ""))
            .order_by(Attachment.id).limit(limit)]


def do_make_thumbnails(uploads_root: pathlib.Path, attachment_id: int) -> bool:
    """Make the thumbnails of one pending upload and update the messages that show its
    placeholder; False when there was nothing to do (deleted, or done already)."""
    attachment = Attachment.get_or_none(Attachment.id == attachment_id)
    if not _pending(attachment):
        return False
    assert attachment is not None
    path_id = attachment.path_id
    try:
        image = thumbnail_upload(uploads_root, path_id, attachment.content_type)
    except Exception:
        # Pillow raises more than its documented errors on some malformed files (and a file
        # that exhausts memory raises MemoryError): such an image is given up, not retried at
        # every start.
        log.exception("Thumbnails of upload %s failed", path_id)
        remove_thumbnails(uploads_root, path_id)
        image = None
    changed: list[tuple[Message, dict[int, int]]] = []
    with write_transaction():
        row = Attachment.get_or_none(Attachment.id == attachment_id)
        if row is None:
            # Deleted while its image was being decoded: what was just written goes too.
            remove_thumbnails(uploads_root, path_id)
            return False
        if not _pending(row):
            return False  # another process finished it meanwhile (the same files)
        if image is None:
            Attachment.update(image_width=None, image_height=None, image_frames=None, thumbnail_formats="").where(
                Attachment.id == attachment_id).execute()
        else:
            Attachment.update(image_width=image.width, image_height=image.height, image_frames=image.frames,
                              thumbnail_formats=" ".join(image.formats)).where(Attachment.id == attachment_id).execute()
        preview = upload_image(row.realm_id, path_id)
        linking = AttachmentMessage.select(AttachmentMessage.message_id).where(
            AttachmentMessage.attachment_id == attachment_id)
        for message in Message.select().where(Message.id.in_(linking)).order_by(Message.id):
            rendered = rewrite_upload_preview(message.rendered_content, path_id, preview)
            if rendered == message.rendered_content:
                continue
            message.rendered_content = rendered
            Message.update(rendered_content=rendered).where(Message.id == message.id).execute()
            flags = {row.user_profile_id: row.flags for row in
                     UserMessage.select(UserMessage.user_profile_id, UserMessage.flags)
                     .where(UserMessage.message == message.id)}
            changed.append((message, flags))
        if changed:
            # The text changes only when a failed preview gives its link back; cheap either way.
            backend().index_messages(Message._meta.database,
                                     [(message.id, message.topic, message.rendered_content) for message, _ in changed])
        for message, flags in changed:
            publish(event_catalogue.update_message_rendering(
                message.last_edit_time or message.date_sent, message.id, message.content, message.rendered_content,
                message.is_me_message, {uid: flags_to_names(bits) for uid, bits in flags.items()}), sorted(flags))
    log.info("Thumbnails of upload %s: %s; %d message(s) updated", path_id,
             "made" if image is not None else "none (not a decodable image)", len(changed))
    return True
