"""The web client: its page at `/`, sign-in and sign-out, and the files it loads.

The page is a template (templates/index.html), served with the signed-in session's CSRF token
written into it; the files it loads are static/'s, at /static/webclient/, and KaTeX's stylesheet
and fonts (the release the renderer typesets with, markdown/vendor/katex/) at /static/katex/. Everything else the page does goes through the API under /json
(lib.sessions authenticates those requests by cookie).
"""

import functools
import gzip
import hashlib
import html
import json
import mimetypes
import os
from pathlib import Path

from flask import Blueprint, Response, current_app, request, send_file
from werkzeug.security import safe_join

from chat_appliance.actions.account import uploaded_avatar
from chat_appliance.actions.invites import (confirmed_join_email, do_accept_invitation, do_send_join_confirmation,
                                           get_valid_invitation)
from chat_appliance.actions.email_change import do_confirm_email_change
from chat_appliance.markdown.katex import KATEX_DIR
from chat_appliance.actions.password_reset import (check_reset_address, do_request_password_reset, do_reset_password,
                                                   user_for_reset_token)
from chat_appliance.integrations import registry
from chat_appliance.models.realm import instance_realm
from chat_appliance.web.context import avatars_root
from chat_appliance.web.auth import authenticate_by_password, clear_session_cookie, set_session_cookie
from chat_appliance.lib.errors import JsonableError, MissingArgumentError
from chat_appliance.web.context import instance_key, mailer, password_method
from chat_appliance.web.rate_limit import password_reset_allowed
from chat_appliance.web.params import Param, endpoint
from chat_appliance.web.response import json_success
from chat_appliance.web.sessions import (
    SESSION_COOKIE,
    check_csrf,
    create_session,
    delete_other_sessions,
    delete_session,
    find_session,
)

bp = Blueprint("webclient", __name__)

STATIC_DIR = Path(__file__).parent / "static"
TEMPLATE_DIR = Path(__file__).parent / "templates"
CSRF_PLACEHOLDER = "__CSRF_TOKEN__"
EMAIL_PLACEHOLDER = "__EMAIL_CONFIGURED__"
INTEGRATIONS_PLACEHOLDER = "__INTEGRATIONS__"


SCRIPTS_PATH = "/static/webclient/js/"


@functools.lru_cache(maxsize=2)
def page_template(versioned: bool = True):
    """The page, with the list of incoming webhook integrations the bots settings offer
    ([name, display name, documentation URL] each, from the registry) written in. `versioned`:
    its scripts at /static/webclient/v/<scripts_version()>/js/, which browsers keep without
    asking again; the scripts they import by relative paths are then under the same prefix."""
    integrations = [[i.name, i.display_name, i.documentation_url()] for i in registry().values()]
    listing = html.escape(json.dumps(integrations), quote=True)
    page = (TEMPLATE_DIR / "index.html").read_text().replace(INTEGRATIONS_PLACEHOLDER, listing)
    if versioned:
        page = page.replace(f'"{SCRIPTS_PATH}', f'"/static/webclient/v/{scripts_version()}/js/')
    return page


@functools.lru_cache(maxsize=1)
def scripts_version() -> str:
    """A hash of the web client's scripts (static/js/), read once per process: the files change
    only with the installed package, and a new version of any of them makes a new prefix."""
    digest = hashlib.sha256()
    for path in sorted((STATIC_DIR / "js").rglob("*.js")):
        digest.update(path.relative_to(STATIC_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def render_page():
    """The single page, carrying the CSRF token of the signed-in session (empty when signed out:
    the page then shows the sign-in form). Never cached: it holds a per-session secret."""
    session = find_session(request.cookies.get(SESSION_COOKIE))
    csrf = session.csrf_token if session is not None and session.user.is_active else ""
    # `chat-appliance dev`: the scripts at their plain paths, revalidated on every load, so that
    # an edited script is the one a reload runs.
    versioned = not current_app.config.get("DEV_MODE")
    body = page_template(versioned).replace(CSRF_PLACEHOLDER, html.escape(csrf, quote=True))
    # Whether this server sends email: the invitation screen offers invitations by email only then.
    body = body.replace(EMAIL_PLACEHOLDER, "1" if mailer().configured else "0")
    response = Response(body, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    # The page runs only its own scripts: a message's HTML could never load or run one. Images may
    # come from elsewhere: a link to an image gets a preview (/thumbnail redirects to it), as on Zulip.
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https: http:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


@bp.get("/")
def index():
    return render_page()


@bp.get("/join/<key>")
def join_page(key):
    """The invitation page: the same single page, which shows the sign-up form on this path."""
    return render_page()


def require_same_origin_form():
    """Sign-in has no session yet, so no CSRF token: a header that no cross-site form can send
    (and that a cross-site script cannot send without a CORS preflight we never grant) stands in."""
    if request.headers.get("X-Requested-With") != "XMLHttpRequest":
        raise JsonableError("CSRF error: missing X-Requested-With header.", code="CSRF_FAILED", http_status=403)


def signed_in_response(user):
    lifetime = current_app.config["WEB_SESSION_SECONDS"]
    token, csrf = create_session(user, lifetime)
    response = json_success({"user_id": user.id, "email": user.email, "csrf_token": csrf})
    set_session_cookie(response, token, lifetime)
    return response


@bp.post("/accounts/login")
@endpoint(auth=False, username=Param(), password=Param())
def login(username, password):
    """Email and password for a session cookie; the same answers as POST /fetch_api_key, and
    failures count toward the same per-account login throttle (lib.auth.authenticate_by_password)."""
    require_same_origin_form()
    # The same check, answers and per-account throttle of failed attempts as POST /fetch_api_key.
    return signed_in_response(authenticate_by_password(username, password))


@bp.get("/accounts/join/<key>")
@endpoint(auth=False, confirm=Param(default=None))
def invitation_info(key, confirm):
    """What the sign-up page shows: the organization and, for an email invitation (or a reusable
    link's confirmed address), the address; `needs_confirmation` when a reusable link's sign-up
    first mails the address a link to confirm it."""
    invite = get_valid_invitation(key)
    email = None if invite.is_multiuse else invite.email
    if invite.is_multiuse and confirm:
        email = confirmed_join_email(instance_key(), invite, confirm)
    return {"realm_name": invite.realm.name, "email": email, "is_multiuse": invite.is_multiuse,
            "needs_confirmation": invite.is_multiuse and mailer().configured and not confirm}


@bp.post("/accounts/join/<key>")
@endpoint(auth=False, full_name=Param(default=None), password=Param(default=None), email=Param(default=None),
          confirm=Param(default=None))
def join(key, full_name, password, email, confirm):
    """Create the account an invitation offers (actions.invites decides validity) and sign in.
    A reusable link, with email configured, first mails the address a confirmation link and
    creates nothing (Zulip's way): the account is made by the POST that carries `confirm`, the
    token of that link, for the address it confirms."""
    require_same_origin_form()
    invite = get_valid_invitation(key)
    if invite.is_multiuse and mailer().configured:
        if not confirm:
            sent_to = do_send_join_confirmation(key, email, secret=instance_key(), mailer=mailer())
            return {"msg": f"We have sent a confirmation link to {sent_to}: follow it to create your account.",
                    "confirmation_sent": True}
        confirmed = confirmed_join_email(instance_key(), invite, confirm)
        if email and email.strip().lower() != confirmed.lower():
            raise JsonableError("This confirmation link is for another email address.")
        email = confirmed
    for name, value in (("full_name", full_name), ("password", password)):
        if value is None:
            raise MissingArgumentError(name)
    user = do_accept_invitation(key, full_name, password, email=email, password_method=password_method())
    return signed_in_response(user)


@bp.get("/accounts/password/reset")
@bp.get("/accounts/password/reset/<token>")
def password_reset_page(token=None):
    """The reset forms: the same single page, which shows them on these paths."""
    return render_page()


@bp.post("/accounts/password/reset")
@endpoint(auth=False, email=Param())
def request_password_reset(email):
    """Mail a reset link; the answer is the same whether or not the address has an account."""
    require_same_origin_form()
    email = check_reset_address(email)
    realm = instance_realm()
    if realm is not None:
        do_request_password_reset(realm, email, secret=instance_key(), mailer=mailer(),
                                  allowed=password_reset_allowed(email))
    return {"msg": "If an account exists for this address, we have sent it an email with a reset link."}


@bp.get("/accounts/password/reset/<token>/check")
@endpoint(auth=False)
def password_reset_info(token):
    """Whether a reset link can still be used, and for which address (the form shows it)."""
    user = user_for_reset_token(instance_key(), token)
    return {"email": user.delivery_email}


@bp.post("/accounts/password/reset/<token>")
@endpoint(auth=False, new_password=Param())
def reset_password(token, new_password):
    """Set the new password; every browser session of the account ends (sign in again)."""
    require_same_origin_form()
    user = do_reset_password(instance_key(), token, new_password, password_method=password_method())
    delete_other_sessions(user.id)
    return {"email": user.delivery_email}


@bp.get("/accounts/confirm_new_email/<token>")
def confirm_email_page(token):
    """The email-change link's page: the single page, which confirms with a POST (a mail scanner
    that fetches the link changes nothing)."""
    return render_page()


@bp.post("/accounts/confirm_new_email/<token>")
@endpoint(auth=False)
def confirm_email(token):
    """Apply the address change the link stands for."""
    require_same_origin_form()
    user = do_confirm_email_change(instance_key(), token, mailer=mailer() if mailer().configured else None)
    return {"email": user.delivery_email}


@bp.post("/accounts/logout")
@endpoint(auth=False)
def logout():
    """End this browser's session (the CSRF token guards it like any other change)."""
    token = request.cookies.get(SESSION_COOKIE)
    session = find_session(token)
    if session is not None:
        check_csrf(request.method, session.csrf_token, request.headers.get("X-CSRFToken"))
        delete_session(token)
    response = json_success()
    clear_session_cookie(response)
    return response


@bp.get("/user_avatars/<int:realm_id>/<int:user_id>")
def user_avatar(realm_id, user_id):
    """An uploaded avatar, with the type its bytes say (never HTML: nosniff, no inline script)."""
    found = uploaded_avatar(avatars_root(), realm_id, user_id)
    if found is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    path, mimetype = found
    response = send_file(path, mimetype=mimetype, max_age=86400)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


@functools.lru_cache(maxsize=1)
def emoji_table_json():
    """Every emoji name the renderer and reactions accept, with its code: the same table."""
    from chat_appliance.markdown.emoji import NAME_TO_CODE, ZULIP_EXTRA_EMOJI  # the emoji table loads at first use

    table = dict(sorted(NAME_TO_CODE.items()))
    table.update({name: "zulip" for name in ZULIP_EXTRA_EMOJI})
    return json.dumps(table, separators=(",", ":"))


@functools.lru_cache(maxsize=1)
def emoji_api_json():
    """The server's Unicode emoji as Zulip's emoji_api.json has them: {"code_to_names": {code:
    [canonical name, aliases...]}}, codes without the U+FE0F variation selector."""
    from chat_appliance.markdown.emoji import EMOJI_NAME_MAPS  # the emoji table loads at first use

    table = {code: [info["canonical_name"], *info["aliases"]] for code, info in sorted(EMOJI_NAME_MAPS.items())}
    return json.dumps({"code_to_names": table}, separators=(",", ":"))


@bp.get("/static/generated/emoji/emoji_api.json")
def emoji_api():
    """The emoji data /register's server_emoji_data_url names; no credentials (the mobile app
    fetches it without them)."""
    response = Response(emoji_api_json(), mimetype="application/json")
    response.headers["Cache-Control"] = "public, max-age=86400"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


@bp.get("/webclient/emoji.json")
def emoji_names():
    response = Response(emoji_table_json(), mimetype="application/json")
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response


# --- the client's static files: compressed, with validators ------------------------------------

COMPRESSIBLE = {".js", ".css", ".html", ".json", ".svg", ".txt"}
# Fonts by their registered types: the platform's table (mimetypes) may not know them, and
# application/octet-stream says nothing of what the file is.
FONT_TYPES = {".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".otf": "font/otf"}
# static/fonts/ holds fonts in folders named by their version (scripts/fetch_emoji_font.py): a
# file there never changes under its URL, so browsers keep it for a year without asking again.
IMMUTABLE_PREFIX = "fonts/"
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"


@functools.lru_cache(maxsize=128)
def static_entry(path: str, mtime_ns: int, size: int) -> tuple[bytes, bytes | None, str, str]:
    """A static file's bytes, its gzip form (text types only) and its strong validator (a hash of
    the content), read once per version of the file (the cache key includes its mtime and size)."""
    data = Path(path).read_bytes()
    compressed = None
    if Path(path).suffix in COMPRESSIBLE and len(data) > 256:
        compressed = gzip.compress(data, compresslevel=9, mtime=0)
    etag = hashlib.sha256(data).hexdigest()[:32]
    mimetype = FONT_TYPES.get(Path(path).suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    if mimetype in ("application/javascript", "text/javascript"):
        mimetype = "text/javascript"
    return data, compressed, etag, mimetype


@bp.get("/static/webclient/<path:filename>")
def static_file(filename: str) -> Response:
    """The web client's own files. Each answer carries an ETag (a hash of the content) and asks the
    browser to revalidate (`no-cache`): a returning visit gets 304 Not Modified, no body, for every
    unchanged file, and a new version of a file is seen at once. Text files go gzip-compressed to
    browsers that accept it (a variant with its own ETag, and Vary: Accept-Encoding). The fonts
    (fonts/, versioned folders) are kept a year instead: the emoji font is megabytes, and a page
    would otherwise ask again for each of its parts on every load."""
    return send_static(STATIC_DIR, filename, immutable=filename.startswith(IMMUTABLE_PREFIX))


@bp.get("/static/webclient/v/<version>/js/<path:filename>")
def versioned_script(version: str, filename: str) -> Response:
    """A script under its version's prefix (page_template): kept a year, as its URL names its
    content. A page from before an upgrade, asking for the old version, gets today's file to
    revalidate, not to keep, as at its plain path."""
    return send_static(STATIC_DIR / "js", filename, immutable=version == scripts_version())


@bp.get("/static/images/loading/<path:filename>")
def loading_image(filename: str) -> Response:
    """Zulip's spinner URL, which the placeholder of an uploaded image still being thumbnailed
    names as its src (markdown/upload_previews.py): clients that show a message's HTML as it is
    load it from the server, as from Zulip."""
    return send_static(STATIC_DIR / "images" / "loading", filename)


@bp.get("/static/katex/<path:filename>")
def katex_file(filename: str) -> Response:
    """KaTeX's stylesheet and fonts, from the very release the renderer typesets with (the
    markup it stores needs that stylesheet), served as the client's own files are."""
    return send_static(KATEX_DIR, filename)


def send_static(folder: Path, filename: str, immutable: bool = False) -> Response:
    path = safe_join(str(folder), filename)
    if path is None or not os.path.isfile(path):
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    stat = os.stat(path)
    data, compressed, etag, mimetype = static_entry(path, stat.st_mtime_ns, stat.st_size)
    use_gzip = compressed is not None and "gzip" in (request.accept_encodings.best_match(["gzip"]) or "")
    tag = f"{etag}-gz" if use_gzip else etag
    headers = {"ETag": f'"{tag}"', "Cache-Control": IMMUTABLE_CACHE if immutable else "no-cache",
               "X-Content-Type-Options": "nosniff"}
    if compressed is not None:
        headers["Vary"] = "Accept-Encoding"
    if request.if_none_match.contains(tag):
        return Response(status=304, headers=headers)
    body = compressed if use_gzip and compressed is not None else data
    if use_gzip:
        headers["Content-Encoding"] = "gzip"
    return Response(body if request.method != "HEAD" else b"", mimetype=mimetype, headers={**headers, "Content-Length": str(len(body))})
