"""A person's own account from the web client: password and avatar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from chat_appliance.db.connection import write_transaction
from chat_appliance.lib.errors import JsonableError, WrongPasswordError
from chat_appliance.lib.passwords import check_password, hash_password, password_too_weak
from chat_appliance.lib.serializers import gravatar_url, uploaded_avatar_url
from chat_appliance.models import UserProfile
from chat_appliance.actions.users import notify_user_updated

if TYPE_CHECKING:
    import pathlib

# Zulip's MAX_AVATAR_FILE_SIZE_MIB.
MAX_AVATAR_FILE_SIZE_MIB = 5
# Image types by their first bytes: an avatar is served with the type its bytes say, never the
# type the uploader claimed.
IMAGE_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
                    (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


def do_change_password(user: UserProfile, old_password: str | None, new_password: str, *, password_method: str) -> None:
    """Zulip's rules and texts: the old password must match; the new one must not be weak. The new
    one is hashed with `password_method` (PASSWORD_HASH_METHOD). (The view throttles wrong old
    passwords as failed logins and ends the other browser sessions.)"""
    if not old_password:
        raise JsonableError("Please fill out all fields.")
    if not check_password(user.password, old_password):
        raise WrongPasswordError("Wrong password!")
    do_set_password(user, new_password, password_method=password_method)


def do_set_password(user: UserProfile, new_password: str, *, password_method: str) -> None:
    """Store a new password that passes the one password policy, hashed with `password_method`."""
    if password_too_weak(new_password):
        raise JsonableError("New password is too weak!")
    hashed = hash_password(new_password, password_method)
    with write_transaction():
        UserProfile.update(password=hashed).where(UserProfile.id == user.id).execute()
    user.password = hashed


def image_type(data: bytes) -> str | None:
    for signature, mimetype in IMAGE_SIGNATURES:
        if data.startswith(signature):
            return mimetype
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def avatar_path(root: pathlib.Path, user_id: int) -> pathlib.Path:
    """Where a user's uploaded avatar lives under the avatars folder `root`."""
    return Path(root) / str(user_id)


def uploaded_avatar(root: pathlib.Path, realm_id: int, user_id: int) -> tuple[pathlib.Path, str] | None:
    """(path, image type) of the avatar a user of this realm uploaded, or None."""
    user = UserProfile.get_or_none((UserProfile.id == user_id) & (UserProfile.realm == realm_id))
    path = avatar_path(root, user_id)
    if user is None or user.avatar_source != "U" or not path.exists():
        return None
    return path, image_type(path.read_bytes()) or "application/octet-stream"


def do_set_avatar(user: UserProfile, data: bytes, root: pathlib.Path) -> str:
    """Store an uploaded picture as the user's avatar; everyone sees the new URL."""
    if len(data) > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024:
        raise JsonableError(f"Uploaded file is larger than the allowed limit of {MAX_AVATAR_FILE_SIZE_MIB} MiB")
    if image_type(data) is None:
        raise JsonableError("Invalid image format")
    Path(root).mkdir(parents=True, exist_ok=True)
    staged = avatar_path(root, user.id).with_suffix(".new")
    staged.write_bytes(data)
    with write_transaction():
        UserProfile.update(avatar_source="U", avatar_version=UserProfile.avatar_version + 1).where(
            UserProfile.id == user.id).execute()
        staged.replace(avatar_path(root, user.id))
    user = UserProfile.get_by_id(user.id)
    url = uploaded_avatar_url(user)
    notify_user_updated(user, avatar_source="U", avatar_url=url, avatar_url_medium=url,
                        avatar_version=user.avatar_version)
    return url


def do_reset_avatar(user: UserProfile, root: pathlib.Path) -> None:
    """Back to the computed (gravatar) avatar."""
    with write_transaction():
        UserProfile.update(avatar_source="G", avatar_version=UserProfile.avatar_version + 1).where(
            UserProfile.id == user.id).execute()
    avatar_path(root, user.id).unlink(missing_ok=True)
    user = UserProfile.get_by_id(user.id)
    url = gravatar_url(user.delivery_email, user.avatar_version)
    notify_user_updated(user, avatar_source="G", avatar_url=url, avatar_url_medium=url,
                        avatar_version=user.avatar_version)
