"""POST /user_uploads, GET /user_uploads/{realm_id}/{path} (a temporary URL), GET /attachments,
DELETE /attachments/{id}; and, outside /api/v1, the downloads: GET /user_uploads/{realm_id}/{path}
(the URL the upload returns) and GET /user_uploads/temporary/{token}/{name}."""

from flask import Blueprint, request, send_file

from chat_appliance.actions.uploads import (
    access_own_attachment,
    access_thumbnail,
    access_temporary_upload,
    access_upload,
    do_delete_attachment,
    do_upload_file,
    temporary_url,
    UPLOAD_URL_PREFIX,
    user_attachments,
)
from chat_appliance.lib.uploads import messages_linking
from chat_appliance.lib.errors import JsonableError, ResourceNotFoundError
from chat_appliance.web.params import endpoint
from chat_appliance.lib.serializers import attachment_dict
from chat_appliance.web.context import app_state, limits

bp = Blueprint("uploads", __name__)
downloads_bp = Blueprint("downloads", __name__)


def the_uploaded_file():
    """The one file of a multipart upload, whatever its field name: the zulip library names the
    field after the file's path."""
    files = list(request.files.values())
    if not files:
        raise JsonableError("You must specify a file to upload")
    if len(files) > 1:
        raise JsonableError("You may only upload one file at a time")
    return files[0]


@bp.post("/user_uploads")
@endpoint()
def upload_file(user):
    """Store the file; return its URL (`uri` is the name before Zulip 9.0, still read by the
    zulip library's examples) and the stored file name."""
    uploaded = the_uploaded_file()
    attachment = do_upload_file(user, app_state().uploads, uploaded.filename, uploaded.stream, limits())
    url = UPLOAD_URL_PREFIX + attachment.path_id
    return {"uri": url, "url": url, "filename": attachment.file_name}


@bp.get("/user_uploads/<int:realm_id>/<path:filename>")
@endpoint()
def get_temporary_url(user, realm_id, filename):
    """A URL that serves the file without credentials for a minute, for clients that hand the
    link to something that cannot authenticate (a browser, an image viewer)."""
    return {"url": temporary_url(app_state().uploads, access_upload(user, f"{realm_id}/{filename}"))}


@bp.get("/attachments")
@endpoint()
def get_attachments(user):
    """The requester's uploads, newest first, and the space they use."""
    attachments = user_attachments(user)
    return {"attachments": [attachment_dict(a, messages_linking(a)) for a in attachments],
            "upload_space_used": sum(a.size for a in attachments)}


@bp.delete("/attachments/<int:attachment_id>")
@endpoint()
def remove_attachment(user, attachment_id):
    """Delete one of the requester's uploads."""
    do_delete_attachment(app_state().uploads, access_own_attachment(user, attachment_id))


@downloads_bp.get("/user_uploads/<int:realm_id>/<path:rest>")
@endpoint()
def download_file(user, realm_id, rest):
    """The file, to its uploader and to those who may read a message linking it (HTTP Basic, as
    zulip-terminal sends)."""
    return send_attachment(access_upload(user, f"{realm_id}/{rest}"))


@downloads_bp.get("/user_uploads/thumbnail/<path:rest>")
@endpoint()
def download_thumbnail(user, rest):
    """A thumbnail (/user_uploads/thumbnail/{path_id}/{format}), to whoever may download the file."""
    path_id, _, thumbnail_format = rest.rpartition("/")
    response = send_file(access_thumbnail(user, app_state().uploads, path_id, thumbnail_format),
                         mimetype="image/webp", max_age=0)
    response.headers["Cache-Control"] = "private, max-age=86400"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "sandbox"
    return response


@downloads_bp.get("/user_uploads/temporary/<token>/<name>")
@endpoint(auth=False)
def download_temporary(token, name):
    """The file a temporary URL names, without credentials, while the URL is valid."""
    return send_attachment(access_temporary_upload(app_state().uploads, token))


# Shown in the page (previews, the lightbox): raster images only. Everything else, SVG included
# (it runs scripts in the server's origin), is a download.
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})


def send_attachment(attachment):
    """The file's bytes; a download unless its type is on INLINE_TYPES, so that an uploaded HTML
    page, script or SVG never runs in the server's origin. A download is typed
    application/octet-stream whatever was uploaded: a `.js` served as text/javascript from this
    origin would be a script the page's `script-src 'self'` trusts, from a <script src> of any
    page here. `sandbox` keeps even a file opened directly from running with the origin's
    rights."""
    path = app_state().uploads.path(attachment.path_id)
    if not path.is_file():
        raise ResourceNotFoundError("File not found")
    inline = attachment.content_type.split(";")[0].strip().lower() in INLINE_TYPES
    response = send_file(path, mimetype=attachment.content_type if inline else "application/octet-stream",
                         as_attachment=not inline,
                         download_name=attachment.file_name, max_age=0)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "sandbox"
    return response
