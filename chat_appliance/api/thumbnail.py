"""GET /thumbnail?url=URL&size=thumbnail|full: where a message's image preview points.

Previews of images on other servers carry Zulip's markup, whose `src` is this URL. Without an
image proxy (Zulip's camo) configured, Zulip answers it by redirecting a signed-in user to the
image itself, and so does this server: only http(s) URLs, only for authenticated requests, and
only to this server's own uploads or to an image previewed in a message the requester may read,
so that it is an open redirect for nobody."""

from urllib.parse import urlsplit

from flask import Blueprint, redirect, request

from chat_appliance.lib.access import may_follow_image_url
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import one_of

bp = Blueprint("thumbnail", __name__)


@bp.get("/thumbnail")
@endpoint(url=Param(), size=Param(one_of("thumbnail", "full"), default="full"))
def thumbnail(user, url, size):
    """Redirect to the image (both sizes are the original: nothing is resized here)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise JsonableError("Invalid URL")
    if parts.netloc in (request.host, urlsplit(user.realm.url).netloc) and parts.path.startswith("/user_uploads/"):
        # This server's own file: send the browser to its path, where the file's own access rules apply.
        url = parts.path + (f"?{parts.query}" if parts.query else "")
    elif not may_follow_image_url(user, url):
        raise JsonableError("Invalid URL")
    response = redirect(url, code=302)
    response.headers["Cache-Control"] = "private, max-age=3600"
    return response
