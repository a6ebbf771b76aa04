"""Custom emoji: upload, list, deactivate. Each change sends the whole set to the organization
(Zulip's realm_emoji update event)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import re
from pathlib import Path

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.custom_emoji import active_realm_emoji, realm_emoji_state
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import is_user_in_group, system_group
from chat_appliance.lib import event_catalogue
from chat_appliance.models import RealmEmoji

if TYPE_CHECKING:
    import pathlib
    from chat_appliance.models import UserProfile

EMOJI_NAME_MAX_LENGTH = 60

# Image formats by their first bytes: an emoji must be a real image (Zulip's "Invalid image format").
IMAGE_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "png"), (b"GIF87a", "gif"), (b"GIF89a", "gif"), (b"\xff\xd8\xff", "jpg"))


def emoji_image_path(instance_path: str, realm_id: int, file_name: str) -> pathlib.Path:
    """The stored image of a custom emoji: under the instance's avatars folder, as Zulip's user_avatars."""
    return Path(instance_path) / "avatars" / str(realm_id) / "emoji" / "images" / file_name


def check_emoji_name(name: str) -> str:
    """Lower-case letters, digits, underscores and hyphens, ending with a letter or digit (Zulip's texts)."""
    if not name:
        raise JsonableError("Emoji name is missing")
    if len(name) > EMOJI_NAME_MAX_LENGTH:
        raise JsonableError(f"emoji_name is too long (limit: {EMOJI_NAME_MAX_LENGTH} characters)")
    if not re.fullmatch(r"[0-9a-z_-]+", name):
        raise JsonableError("Emoji names must contain only lowercase alphanumeric characters, underscores, "
                            "and hyphens.")
    if name[-1] in "_-":
        raise JsonableError("Emoji names must end with either a letter or digit.")
    return name


def image_extension(data: bytes) -> str:
    """The image format's extension, or 'Invalid image format'."""
    for signature, extension in IMAGE_SIGNATURES:
        if data.startswith(signature):
            return extension
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    raise JsonableError("Invalid image format")


def can_add_custom_emoji(user: UserProfile) -> bool:
    """Members of can_add_custom_emoji_group (an organization setting; Zulip's default: members)."""
    if user.is_guest:
        return False
    group_id = (user.realm.settings or {}).get("can_add_custom_emoji_group")
    if group_id is None:
        group_id = system_group(user.realm_id, "role:members").id
    return is_user_in_group(user, group_id)


def check_add_emoji(user: UserProfile, name: str) -> None:
    """The refusals of an upload that concern its name and the uploader, in Zulip's order."""
    check_emoji_name(name)
    if not can_add_custom_emoji(user):
        raise JsonableError("Insufficient permission")
    if active_realm_emoji(user.realm_id, name) is not None:
        raise JsonableError("A custom emoji with this name already exists.")
    from chat_appliance.markdown.emoji import NAME_TO_CODE  # the emoji table loads at first use

    if name in NAME_TO_CODE and not user.is_realm_admin:
        raise JsonableError("Only administrators can override built-in emoji.")


def check_emoji_image(data: bytes, limit: int) -> str:
    """Size (within `limit` MiB, MAX_EMOJI_FILE_SIZE_MIB), then format; returns the image's extension."""
    if len(data) > limit * 1024 * 1024:
        raise JsonableError(f"Uploaded file is larger than the allowed limit of {limit} MiB")
    return image_extension(data)


def store_emoji(instance_path: str, realm_id: int, name: str, author_id: int, data: bytes, extension: str, *,
                deactivated: bool = False) -> RealmEmoji:
    """Insert the row and write the image named after its id; the caller holds the transaction."""
    emoji = RealmEmoji.create(realm=realm_id, name=name, author=author_id, deactivated=deactivated)
    emoji.file_name = f"{emoji.id}.{extension}"
    emoji.save()
    path = emoji_image_path(instance_path, realm_id, emoji.file_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return emoji


def notify_realm_emoji(realm_id: int) -> None:
    """The whole set, to everyone."""
    publish(event_catalogue.realm_emoji_update(realm_emoji_state(realm_id)), active_user_ids(realm_id))


def do_add_realm_emoji(instance_path: str, user: UserProfile, name: str, data: bytes, extension: str) -> RealmEmoji:
    """Store a checked upload in the instance folder and announce it."""
    with write_transaction():
        emoji = store_emoji(instance_path, user.realm_id, name, user.id, data, extension)
    notify_realm_emoji(user.realm_id)
    return emoji


def access_emoji_for_removal(user: UserProfile, name: str) -> RealmEmoji:
    """The active emoji by name, if the user may deactivate it: administrators any, others their own."""
    emoji = active_realm_emoji(user.realm_id, name)
    if emoji is None:
        raise JsonableError(f"Emoji '{name}' does not exist", http_status=404)
    if not user.is_realm_admin and emoji.author_id != user.id:
        raise JsonableError("Must be an organization administrator or emoji author")
    return emoji


def do_deactivate_realm_emoji(emoji: RealmEmoji) -> None:
    """Deactivate: no longer offered or rendered in new messages; old ones keep the image."""
    with write_transaction():
        RealmEmoji.update(deactivated=True).where(RealmEmoji.id == emoji.id).execute()
    notify_realm_emoji(emoji.realm_id)


def emoji_by_file_name(realm_id: int, file_name: str) -> RealmEmoji | None:
    """The custom emoji (active or not) stored under this file name, or None."""
    return RealmEmoji.get_or_none((RealmEmoji.realm == realm_id) & (RealmEmoji.file_name == file_name))
