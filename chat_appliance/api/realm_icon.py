"""The organization's icon: POST /realm/icon and DELETE /realm/icon (administrators), and the
uploaded icon's file, public like Zulip's user_avatars (the sign-in page shows it)."""

from flask import Blueprint, request, send_file

from chat_appliance.actions.account import image_type
from chat_appliance.actions.realm_icon import do_reset_realm_icon, do_set_realm_icon
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.lib.errors import JsonableError, ResourceNotFoundError
from chat_appliance.lib.realm_icon import uploaded_realm_icon
from chat_appliance.web.context import avatars_root
from chat_appliance.web.params import endpoint

bp = Blueprint("realm_icon", __name__)
files_bp = Blueprint("realm_icon_files", __name__)


@bp.post("/realm/icon")
@endpoint()
def upload_icon(user):
    """One image file, in any multipart field, becomes the organization's icon."""
    require_realm_admin(user)
    files = list(request.files.values())
    if len(files) != 1:
        raise JsonableError("You must upload exactly one icon.")
    url = do_set_realm_icon(user.realm, files[0].read(), avatars_root(), request.host_url.rstrip("/"))
    return {"icon_url": url}


@bp.delete("/realm/icon")
@endpoint()
def delete_icon(user):
    """Back to the default icon."""
    require_realm_admin(user)
    do_reset_realm_icon(user.realm, avatars_root(), request.host_url.rstrip("/"))


@files_bp.get("/user_avatars/<int:realm_id>/realm/icon.png")
def icon_file(realm_id):
    path = uploaded_realm_icon(avatars_root(), realm_id)
    if path is None:
        raise ResourceNotFoundError("File not found")
    data = path.read_bytes()
    response = send_file(path, mimetype=image_type(data) or "application/octet-stream", max_age=86400)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "sandbox"
    return response
