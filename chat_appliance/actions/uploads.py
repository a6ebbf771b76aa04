"""Uploaded files: store, find with a permission check, list, delete.

Files live under the instance folder, `{INSTANCE_PATH}/uploads/{path_id}`, where path_id is
`{realm_id}/{random}/{safe file name}`: the URL the client gets is `/user_uploads/{path_id}`,
which is also what makes a message that links the file count as having an attachment.

Who may download a file (Zulip's rule): its uploader, and anyone who may read a message that
shares it. A message shares a file when its sender could open the file at the time of sending (or
editing); a URL pasted by someone else shares nothing, so a user who lost access cannot regain it
by sending the URL to themselves. Everybody else gets the same 404 as for a missing file, so that
nobody learns a file exists by guessing its path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mimetypes
import os
import re
import secrets
import shutil
import unicodedata
from urllib.parse import unquote

from itsdangerous import BadSignature

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish_internal
from chat_appliance.lib.access import user_can_access_message
from chat_appliance.lib.errors import JsonableError, ResourceNotFoundError
from chat_appliance.models import Attachment, AttachmentMessage
from chat_appliance.lib.uploads import UploadStore, messages_linking
from chat_appliance.lib.thumbnails import (FORMATS as THUMBNAIL_FORMATS, probe_image, remove_thumbnails, thumbnail_dir,
                                          thumbnail_upload)

# What the thumbnail worker (workers/thumbnails.py) hears after an image's upload commits.
THUMBNAIL_JOB = "thumbnail"

if TYPE_CHECKING:
    import pathlib
    from chat_appliance.config import Limits
    from chat_appliance.models import UserProfile

UPLOAD_URL_PREFIX = "/user_uploads/"
_NOT_IN_FILE_NAMES = re.compile(r"[^A-Za-z0-9_.-]")
# Temporary URLs (GET /api/v1/user_uploads/...) open a file without credentials for this long,
# as in Zulip. They are signed with the instance's key, so they survive a restart.
TEMPORARY_URL_SECONDS = 60


def safe_file_name(name: str) -> str:
    """A file name safe in a URL and on disk; Zulip also keeps only such characters. Accents
    become plain letters ("café" -> "cafe"), other non-ASCII characters go, runs of spaces and
    slashes become one "_", anything but letters, digits, "_", "." and "-" goes, and no name starts
    or ends with "." or "_" (no hidden files, no "..")."""
    ascii_name = unicodedata.normalize("NFKD", name or "").encode("ascii", "ignore").decode("ascii")
    words = ascii_name.replace("/", " ").split()
    return _NOT_IN_FILE_NAMES.sub("", "_".join(words)).strip("._") or "uploaded-file"


def check_upload_size(size: int, limits: Limits) -> None:
    """Within limits.max_file_upload_size_mib (MAX_FILE_UPLOAD_SIZE_MIB)."""
    limit_mib = limits.max_file_upload_size_mib
    if size > limit_mib * 1024 * 1024:
        raise JsonableError(f"File is larger than the maximum upload size ({limit_mib} MiB).")


def do_upload_file(user: UserProfile, store: UploadStore, file_name: str, stream: Any, limits: Limits) -> Attachment:
    """Store one uploaded file (a name and a seekable binary stream) and its Attachment row;
    return the Attachment."""
    stream.seek(0, os.SEEK_END)
    check_upload_size(stream.tell(), limits)
    stream.seek(0)
    name = safe_file_name(file_name)
    path_id = f"{user.realm_id}/{secrets.token_urlsafe(18)}/{name}"
    target = store.path(path_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("wb") as out:
            shutil.copyfileobj(stream, out)
    except BaseException:
        remove_file(store, path_id)  # a full disk leaves no partial file behind
        raise
    size = target.stat().st_size
    try:
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        # Only the header is read here (no pixel decoded): an image we thumbnail, within the
        # pixel budgets, is stored with its size and no thumbnail formats, which is the pending
        # job, and a message linking it renders Zulip's placeholder until the thumbnail worker
        # has made them (as Zulip's upload does). Anything else stays a plain link.
        image = probe_image(target, content_type)
        image_fields = {} if image is None else {
            "image_width": image.width, "image_height": image.height, "image_frames": image.frames}
        with write_transaction():
            attachment = Attachment.create(realm=user.realm_id, owner=user, path_id=path_id, file_name=name,
                                           content_type=content_type, size=size, **image_fields)
            if image is not None:
                publish_internal({"type": THUMBNAIL_JOB, "attachment_id": attachment.id}, [user.id])
            return attachment
    except BaseException:
        remove_file(store, path_id)
        raise


def sweep_orphan_uploads(store: UploadStore, older_than_seconds: float = 0) -> int:
    """Delete the stored files that no Attachment row names (with their thumbnails), last
    changed more than `older_than_seconds` ago; returns how many. A file is written before its
    row commits, so a process killed in between (kill -9, power loss) leaves one behind that
    nothing would ever serve or delete. Only the uploads' own layout, REALM_ID/RANDOM/NAME, is
    looked at; avatars and thumbnails live in folders of other names."""
    import time

    found: dict[str, pathlib.Path] = {}
    for realm_folder in store.root.iterdir() if store.root.is_dir() else ():
        if not realm_folder.name.isdigit() or not realm_folder.is_dir():
            continue
        for file in realm_folder.glob("*/*"):
            if file.is_file() and not file.is_symlink():
                found[file.relative_to(store.root).as_posix()] = file
    if not found:
        return 0
    known: set[str] = set()
    names = list(found)
    for start in range(0, len(names), 500):
        batch = names[start:start + 500]
        known.update(row.path_id for row in Attachment.select(Attachment.path_id)
                     .where(Attachment.path_id.in_(batch)))
    cutoff = time.time() - older_than_seconds
    removed = 0
    for path_id, file in found.items():
        if path_id not in known and file.stat().st_mtime <= cutoff:
            remove_file(store, path_id)
            removed += 1
    return removed


def remove_file(store: UploadStore, path_id: str) -> None:
    """Delete a stored file, its thumbnails and its (now empty) random folder."""
    remove_thumbnails(store.root, path_id)
    target = store.path(path_id)
    target.unlink(missing_ok=True)
    try:
        target.parent.rmdir()
    except OSError:
        pass


def can_access_attachment(user: UserProfile, attachment: Attachment) -> bool:
    """The uploader, or a reader of a message that shares the file."""
    return attachment.owner_id == user.id or any(
        user_can_access_message(user, message) for message in messages_linking(attachment))


def access_upload(user: UserProfile, path_id: str) -> Attachment:
    """The Attachment at path_id if the user may download it, else 404 'File not found'."""
    attachment = Attachment.get_or_none((Attachment.path_id == path_id) & (Attachment.realm == user.realm_id))
    if attachment is None or not can_access_attachment(user, attachment):
        raise ResourceNotFoundError("File not found")
    return attachment


def access_thumbnail(user: UserProfile, store: UploadStore, path_id: str, thumbnail_format: str) -> pathlib.Path:
    """The thumbnail file, under the same rule as the file itself (404 'File not found' alike for
    a file the user may not see, a format that does not exist and one not made)."""
    attachment = access_upload(user, path_id)
    if thumbnail_format not in THUMBNAIL_FORMATS or thumbnail_format not in attachment.thumbnail_formats.split():
        raise ResourceNotFoundError("File not found")
    path = thumbnail_dir(store.root, attachment.path_id) / thumbnail_format
    if not path.is_file():
        raise ResourceNotFoundError("File not found")
    return path


def do_thumbnail_existing_uploads(uploads_root: pathlib.Path, progress: Any = None) -> tuple[int, int]:
    """Make thumbnails for uploads stored before thumbnails existed (image_width NULL) that are
    images; returns (images thumbnailed, uploads looked at). ``progress(done, total)`` is called
    after each."""
    pending = list(Attachment.select(Attachment.id, Attachment.path_id, Attachment.content_type)
                   .where(Attachment.image_width.is_null()).order_by(Attachment.id))
    made = 0
    for done, attachment in enumerate(pending, 1):
        if (uploads_root / attachment.path_id).is_file():
            image = thumbnail_upload(uploads_root, attachment.path_id, attachment.content_type)
            if image is not None:
                with write_transaction():
                    Attachment.update(image_width=image.width, image_height=image.height, image_frames=image.frames,
                                      thumbnail_formats=" ".join(image.formats)).where(
                        Attachment.id == attachment.id).execute()
                made += 1
        if progress is not None:
            progress(done, len(pending))
    return made, len(pending)


_UPLOAD_LINK = re.compile(r"/user_uploads/(\d+/[^?#\s)\]>\"']+)")


def relink_attachments(editor: UserProfile, message_id: int, content: str) -> None:
    """After an edit of the content: the message shares the files it still links, plus new ones
    the editor may open."""
    AttachmentMessage.delete().where(AttachmentMessage.message_id == message_id).execute()
    claim_attachments(editor, message_id, content)


def claim_attachments(sender: UserProfile, message_id: int, content: str) -> None:
    """Record that message `message_id` shares the files its content links (`/user_uploads/...`,
    bare or in Markdown), those the sender may open now. Runs inside the transaction that sends or
    edits the message."""
    if UPLOAD_URL_PREFIX not in content:
        return
    path_ids = {unquote(match.group(1)).rstrip(".,;:!") for match in _UPLOAD_LINK.finditer(content)}
    for attachment in Attachment.select().where((Attachment.realm == sender.realm_id)
                                                & Attachment.path_id.in_(sorted(path_ids))):
        if can_access_attachment(sender, attachment):
            AttachmentMessage.insert(attachment_id=attachment.id, message_id=message_id).on_conflict_ignore().execute()


def do_delete_attachment(store: UploadStore, attachment: Attachment) -> None:
    """Remove the row, then the file (links in messages stop working, as in Zulip)."""
    with write_transaction():
        attachment.delete_instance()
    remove_file(store, attachment.path_id)


def temporary_url(store: UploadStore, attachment: Attachment) -> str:
    """A URL that serves the file without credentials for TEMPORARY_URL_SECONDS."""
    token = store.signer.dumps(attachment.path_id)
    return f"{UPLOAD_URL_PREFIX}temporary/{token}/{attachment.file_name}"


def access_temporary_upload(store: UploadStore, token: str) -> Attachment:
    """The Attachment a still-valid temporary URL names, else 404 'File not found'."""
    try:
        path_id = store.signer.loads(token, max_age=TEMPORARY_URL_SECONDS)
    except BadSignature:
        raise ResourceNotFoundError("File not found") from None
    attachment = Attachment.get_or_none(Attachment.path_id == path_id)
    if attachment is None:
        raise ResourceNotFoundError("File not found")
    return attachment


def user_attachments(user: UserProfile) -> list[Attachment]:
    """The user's uploads, newest first."""
    return list(Attachment.select().where(Attachment.owner == user).order_by(Attachment.id.desc()))


def access_own_attachment(user: UserProfile, attachment_id: int) -> Attachment:
    """One of the user's uploads, or BAD_REQUEST 'Invalid attachment'."""
    attachment = Attachment.get_or_none((Attachment.id == attachment_id) & (Attachment.owner == user))
    if attachment is None:
        raise JsonableError("Invalid attachment")
    return attachment
