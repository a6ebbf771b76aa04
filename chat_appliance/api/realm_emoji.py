"""Custom emoji: GET /realm/emoji, POST|DELETE /realm/emoji/{emoji_name}; and, outside /api/v1,
their images at /user_avatars/{realm_id}/emoji/images/{file_name}."""

from flask import Blueprint, current_app, request, send_file

from chat_appliance.actions.realm_emoji import (
    access_emoji_for_removal,
    check_add_emoji,
    check_emoji_image,
    do_add_realm_emoji,
    do_deactivate_realm_emoji,
    emoji_by_file_name,
    emoji_image_path,
)
from chat_appliance.lib.custom_emoji import realm_emoji_state
from chat_appliance.lib.errors import JsonableError, ResourceNotFoundError
from chat_appliance.web.params import endpoint

bp = Blueprint("realm_emoji", __name__)
images_bp = Blueprint("emoji_images", __name__)

MIMETYPES = {"png": "image/png", "gif": "image/gif", "jpg": "image/jpeg", "webp": "image/webp"}


@bp.get("/realm/emoji")
@endpoint()
def list_emoji(user):
    """Every custom emoji of the organization, deactivated ones included (the list is public to members)."""
    return {"emoji": realm_emoji_state(user.realm_id)}


@bp.post("/realm/emoji/<emoji_name>")
@endpoint()
def upload_emoji(user, emoji_name):
    """Add a custom emoji from exactly one uploaded image."""
    name = emoji_name.strip().replace(" ", "_")
    check_add_emoji(user, name)
    files = list(request.files.values())
    if len(files) != 1:
        raise JsonableError("You must upload exactly one file.")
    data = files[0].read()
    extension = check_emoji_image(data, current_app.config["MAX_EMOJI_FILE_SIZE_MIB"])
    do_add_realm_emoji(current_app.config["INSTANCE_PATH"], user, name, data, extension)


@bp.delete("/realm/emoji/<emoji_name>")
@endpoint()
def delete_emoji(user, emoji_name):
    """Deactivate a custom emoji: administrators any, others the ones they added."""
    do_deactivate_realm_emoji(access_emoji_for_removal(user, emoji_name))


@images_bp.get("/user_avatars/<int:realm_id>/emoji/images/<file_name>")
def emoji_image(realm_id, file_name):
    """A custom emoji's image. Public, like Zulip's user_avatars: emoji names and images are not secret,
    and <img> tags in rendered messages load them without credentials."""
    emoji = emoji_by_file_name(realm_id, file_name)
    path = emoji_image_path(current_app.config["INSTANCE_PATH"], realm_id, file_name) if emoji is not None else None
    if path is None or not path.is_file():
        raise ResourceNotFoundError("File not found")
    extension = file_name.rsplit(".", 1)[-1]
    response = send_file(path, mimetype=MIMETYPES.get(extension, "application/octet-stream"), max_age=86400)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "sandbox"
    return response
