"""Sign-in through an OpenID Connect provider: the login URL that sends the browser there, the
callback that comes back, and the three ways a successful sign-in ends (Zulip's
login_or_register_remote_user): a browser session, the mobile app's zulip:// redirect with its
API key encrypted by the app's one-time pad, or the desktop app's token.

The flow's secrets (state, nonce, PKCE verifier) travel in a cookie signed with the instance's
key, scoped to the callback's path and ten minutes: the state is bound to the browser that
started the flow, and any `serve` process sharing the instance can finish it. Each state, and
each desktop token, is taken at most once by this process; the provider itself redeems a code
only once, which covers a replay through another process.
"""

import hmac
import html
import secrets
import threading
from urllib.parse import urlencode

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Blueprint, Response, current_app, redirect, request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from chat_appliance import models  # the account models load on first use (models/__init__.py)
from chat_appliance.models.realm import instance_realm
from chat_appliance.lib.auth_backends import OIDC_COMPLETE_PATH, OIDC_LOGIN_URL, OIDC_SIGNUP_URL
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.auth import set_session_cookie
from chat_appliance.web.context import app_state, auth_settings, instance_key, password_method
from chat_appliance.web.sessions import create_session

bp = Blueprint("social_auth", __name__)

FLOW_COOKIE = "oidc_flow"
FLOW_SECONDS = 600
# Zulip's ExternalAuthResult.LOGIN_KEY_EXPIRATION_SECONDS: the desktop app redeems its token at once.
DESKTOP_TOKEN_SECONDS = 20
# Under the flow cookie's path: the confirmation must come from the browser that did the flow
# (else another site could post its own confirmation and sign a visitor into its account).
CONFIRM_PATH = OIDC_COMPLETE_PATH + "confirm"
DESKTOP_LOGIN_PATH = "/accounts/login/subdomain/"
# Zulip's API_KEY_LENGTH: the one-time pads of the mobile and desktop apps are twice that in hex.
OTP_HEX_LENGTH = 64

_claim_lock = threading.Lock()


def serializer(purpose):
    return URLSafeTimedSerializer(instance_key(), salt=f"chat-appliance {purpose}")


def claim_once(key, seconds):
    """True the first time `key` is claimed in this process within `seconds`, False after."""
    used = app_state().used_sign_in_tokens
    with _claim_lock:
        if used.get(key) is not None:
            return False
        used.put(key, True, seconds)
        return True


def valid_otp(otp):
    """Zulip's is_valid_otp: 64 hex digits."""
    return len(otp) == OTP_HEX_LENGTH and all(c in "0123456789abcdefABCDEF" for c in otp)


def otp_encrypt_api_key(api_key, otp):
    """The API key for the mobile app, as Zulip's otp_encrypt_api_key makes it: the key's ASCII
    in hex, XORed hex digit by hex digit with the one-time pad the app chose."""
    hex_key = api_key.encode("ascii").hex()
    if len(hex_key) != len(otp):
        raise ValueError("the API key and the one-time pad differ in length")
    return "".join(f"{int(a, 16) ^ int(b, 16):x}" for a, b in zip(hex_key, otp))


def page(title, *paragraphs, status=200, extra=""):
    """A small page of its own (not the single-page app): the flow ends in a full navigation."""
    body = "".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    document = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
                '<link rel="icon" href="data:,"><link rel="stylesheet" href="/static/webclient/app.css"></head>'
                f'<body><main class="auth-card"><h1>{html.escape(title)}</h1>{body}{extra}'
                f'<p class="auth-links"><a href="/">Back to log in</a></p></main></body></html>')
    response = Response(document, status=status, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = ("default-src 'self'; img-src 'self' data:; script-src 'none'; "
                                                   "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
                                                   "form-action 'self'")
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def failed(reason):
    """Every refusal of the flow: not signed in, a 4xx, and no detail for an attacker."""
    current_app.logger.info("OpenID Connect sign-in refused: %s", reason)
    response = page("Authentication failed", "We could not sign you in with your identity provider. "
                    "Please try again.", status=400)
    response.delete_cookie(FLOW_COOKIE, path=OIDC_COMPLETE_PATH)
    return response


def enabled_idp():
    idp = auth_settings().oidc
    if idp is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    return idp


def realm_and_redirect_uri():
    realm = instance_realm()
    if realm is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    return realm, realm.url.rstrip("/") + OIDC_COMPLETE_PATH


@bp.get(OIDC_LOGIN_URL)
@bp.get(OIDC_SIGNUP_URL)
def start():
    """Send the browser to the provider's authorization endpoint. mobile_flow_otp and
    desktop_flow_otp (64 hex digits each, else 400 "Invalid OTP", as on Zulip) say how the flow
    ends for the apps."""
    from chat_appliance.clients.oidc import OidcError, start_flow  # Authlib loads with the first sign-in

    idp = enabled_idp()
    otps = {}
    for name in ("mobile_flow_otp", "desktop_flow_otp"):
        value = request.args.get(name)
        if value is not None:
            if not valid_otp(value):
                raise JsonableError("Invalid OTP")
            otps[name] = value
    if len(otps) > 1:
        raise JsonableError("Can't use both mobile_flow_otp and desktop_flow_otp together.")
    _realm, redirect_uri = realm_and_redirect_uri()
    try:
        flow = start_flow(idp, redirect_uri)
    except OidcError as error:
        return failed(str(error))
    cookie = serializer("oidc flow").dumps({"state": flow.state, "nonce": flow.nonce,
                                             "verifier": flow.code_verifier, **otps})
    response = redirect(flow.url, code=302)
    response.set_cookie(FLOW_COOKIE, cookie, max_age=FLOW_SECONDS, httponly=True, samesite="Lax",
                        secure=request.is_secure, path=OIDC_COMPLETE_PATH)
    return response


@bp.get(OIDC_COMPLETE_PATH)
def complete():
    """The provider's redirect back: the state must be the one this browser's cookie holds, not
    yet used; then the code is redeemed and the person signed in (or refused)."""
    from chat_appliance.clients.oidc import OidcError, finish_flow  # Authlib loads with the first sign-in

    idp = enabled_idp()
    try:
        flow = serializer("oidc flow").loads(request.cookies.get(FLOW_COOKIE, ""), max_age=FLOW_SECONDS)
    except BadSignature:
        return failed("no flow started by this browser, or an expired or forged one")
    state = request.args.get("state", "")
    if not isinstance(flow, dict) or not hmac.compare_digest(state.encode(), str(flow.get("state")).encode()):
        return failed("the state does not match this browser's flow")
    if not claim_once(("oidc state", state), FLOW_SECONDS):
        return failed("the state was already used")
    if "error" in request.args:
        return failed(f"the provider answered {request.args.get('error')!r}")
    code = request.args.get("code")
    if not code:
        return failed("no code")
    _realm, redirect_uri = realm_and_redirect_uri()
    try:
        identity = finish_flow(idp, redirect_uri, code, flow["nonce"], flow["verifier"])
    except OidcError as error:
        return failed(str(error))
    response = login_or_register(idp, identity.email, identity.full_name, flow)
    if not getattr(response, "keeps_flow", False):
        response.delete_cookie(FLOW_COOKIE, path=OIDC_COMPLETE_PATH)
    return response


def login_or_register(idp, email, full_name, flow):
    """Zulip's login_or_register_remote_user: an active account signs in; a deactivated one is
    told so; a new person gets an account when the provider has auto_signup, else the sign-up
    confirmation (never an account made silently)."""
    from chat_appliance.actions.external_auth import account_for_email, do_create_external_user  # at first use

    realm, _ = realm_and_redirect_uri()
    user = account_for_email(realm, email)
    if user is not None and not user.is_active:
        return page("Account deactivated", f"Your account {user.delivery_email} has been deactivated.", status=403)
    if user is None and not idp.auto_signup:
        return signup_confirmation(email, full_name, flow)
    if user is None:
        try:
            user = do_create_external_user(realm, email, full_name, password_method())
        except JsonableError as error:
            return failed(f"cannot create an account for {email!r}: {error.msg}")
    return finish(user, flow)


def signup_confirmation(email, full_name, flow):
    """Zulip's confirm_continue_registration: the address has no account here; a button creates it."""
    otps = {k: flow[k] for k in ("mobile_flow_otp", "desktop_flow_otp") if k in flow}
    token = serializer("oidc signup").dumps({"email": email, "full_name": full_name, "state": flow["state"], **otps})
    # Unless SOCIAL_AUTH_OIDC_FULL_NAME_VALIDATED vouches for the provider's names, the person may
    # correct theirs here, as on Zulip's registration form.
    name_field = "" if auth_settings().oidc_full_name_validated else (
        f'<label class="field"><span>Full name</span><input name="full_name" maxlength="60" required '
        f'value="{html.escape(full_name or "", quote=True)}"></label>')
    form = (f'<form method="post" action="{CONFIRM_PATH}"><input type="hidden" name="token" '
            f'value="{html.escape(token, quote=True)}">{name_field}<button class="primary" type="submit">'
            "Continue to registration</button></form>")
    response = page("Create your account", f"You attempted to log in using the email {email}, which does not have "
                    "an account in this organization.", "Do you want to create a new account with this email?",
                    extra=form)
    response.keeps_flow = True  # the button's POST proves it comes from this browser with the cookie
    return response


@bp.post(CONFIRM_PATH)
def confirm_signup():
    """The confirmation's button: create the account the provider vouched for, once."""
    from chat_appliance.actions.external_auth import account_for_email, do_create_external_user  # at first use

    enabled_idp()
    try:
        data = serializer("oidc signup").loads(request.form.get("token", ""), max_age=FLOW_SECONDS)
        flow = serializer("oidc flow").loads(request.cookies.get(FLOW_COOKIE, ""), max_age=FLOW_SECONDS)
    except BadSignature:
        return failed("a forged or expired sign-up confirmation")
    if not isinstance(flow, dict) or flow.get("state") != data["state"]:
        return failed("the sign-up confirmation is not this browser's")
    realm, _ = realm_and_redirect_uri()
    if not claim_once(("oidc signup", data["state"]), FLOW_SECONDS) or account_for_email(realm, data["email"]):
        return failed("the sign-up confirmation was already used")
    full_name = data.get("full_name")
    if not auth_settings().oidc_full_name_validated and request.form.get("full_name", "").strip():
        full_name = request.form["full_name"]
    try:
        user = do_create_external_user(realm, data["email"], full_name, password_method())
    except JsonableError as error:
        return failed(f"cannot create an account for {data['email']!r}: {error.msg}")
    response = finish(user, data)
    response.delete_cookie(FLOW_COOKIE, path=OIDC_COMPLETE_PATH)
    return response


def finish(user, flow):
    """The end of every successful external sign-in: the mobile app's redirect, the desktop app's
    token, or a session for this browser and the app."""
    if flow.get("mobile_flow_otp"):
        return finish_mobile_flow(user, flow["mobile_flow_otp"])
    if flow.get("desktop_flow_otp"):
        return finish_desktop_flow(user, flow["desktop_flow_otp"])
    lifetime = current_app.config["WEB_SESSION_SECONDS"]
    token, _csrf = create_session(user, lifetime)
    response = redirect("/", code=302)
    set_session_cookie(response, token, lifetime)
    return response


def finish_mobile_flow(user, otp):
    """302 to zulip://login with the realm, the email, the user id and the encrypted API key:
    the mobile app registers zulip:// and decrypts the key with the pad it sent."""
    realm, _ = realm_and_redirect_uri()
    params = {"otp_encrypted_api_key": otp_encrypt_api_key(user.api_key, otp), "email": user.delivery_email,
              "user_id": user.id, "realm": realm.url}
    # Not redirect(): the location is an app's scheme, passed through as it is.
    return Response(status=302, headers={"Location": "zulip://login?" + urlencode(params),
                                         "Cache-Control": "no-store"})


def finish_desktop_flow(user, otp):
    """Zulip's desktop flow: a one-time token, valid DESKTOP_TOKEN_SECONDS, encrypted with the
    pad as an AES-GCM key (hex of a 12-byte IV followed by the ciphertext). The person copies it
    into the desktop app, which decrypts it and opens /accounts/login/subdomain/<token> to get
    its session."""
    token = serializer("desktop login").dumps({"user_id": user.id, "nonce": secrets.token_hex(16)})
    iv = secrets.token_bytes(12)
    desktop_data = (iv + AESGCM(bytes.fromhex(otp)).encrypt(iv, token.encode(), b"")).hex()
    field = (f'<p><input id="desktop-data" aria-label="Login token" value="{desktop_data}" type="text" readonly>'
             "</p>")
    return page("Finish logging in", "Copy this login token and return to your Zulip app to finish logging in:",
                extra=field + "<p>You may then close this window.</p>")


@bp.get(DESKTOP_LOGIN_PATH + "<token>")
def desktop_login(token):
    """Zulip's log_into_subdomain for the desktop app: the token, once and soon, for a session."""
    try:
        data = serializer("desktop login").loads(token, max_age=DESKTOP_TOKEN_SECONDS)
    except BadSignature:
        return failed("a forged or expired desktop login token")
    if not claim_once(("desktop", data["nonce"]), DESKTOP_TOKEN_SECONDS):
        return failed("the desktop login token was already used")
    user = models.UserProfile.get_or_none(models.UserProfile.id == data["user_id"])
    if user is None or not user.is_active:
        return failed("the account is gone or deactivated")
    return finish(user, {})
