"""Signing in through a real OpenID Connect provider (the npm package oidc-provider, run by
tests/oidc_provider.py): the redirect there, the callback, and how each kind of person ends.
The app runs in Flask's test client; the provider's own pages are walked with requests, as a
browser would follow them."""

import secrets
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..support.flutter_app import problems_of
from ..support.helpers import REALM_HOST, ApiClient, ok
from ..support.oidc_provider import CLIENT_ID, OidcProvider

REALM_URL = f"http://{REALM_HOST}"
LOGIN = "/accounts/login/social/oidc"
ACCOUNTS = {
    "hamlet": {"email": "Hamlet@Zulip.Example", "name": "King Hamlet"},
    "newbie": {"email": "newbie@zulip.example", "name": "New Person"},
    "cordelia": {"email": "cordelia@zulip.example", "name": "Cordelia"},
}


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    """One oidc-provider for the module, allowed to return to the test organization's callback."""
    idp = OidcProvider(tmp_path_factory.mktemp("oidc"), [f"{REALM_URL}/complete/oidc/"], ACCOUNTS)
    yield idp
    idp.stop()


@pytest.fixture(autouse=True)
def oidc_config(request, provider):
    """Every test's app has the provider as its second backend (auto_signup unless a test's
    `config` marker says otherwise through OIDC_AUTO_SIGNUP)."""
    own = request.node.get_closest_marker("config")
    own = dict(own.kwargs) if own else {}
    auto_signup = own.pop("OIDC_AUTO_SIGNUP", True)
    settings = {"AUTHENTICATION_BACKENDS": ["zproject.backends.EmailAuthBackend",
                                            "zproject.backends.GenericOpenIdConnectBackend"],
                "SOCIAL_AUTH_OIDC_ENABLED_IDPS": provider.idp_settings(auto_signup=auto_signup), **own}
    request.node.add_marker(pytest.mark.config(**settings), append=False)


def to_provider(flask_client, query=""):
    """GET the login URL; the 302 to the provider's authorization endpoint."""
    response = flask_client.get(LOGIN + query)
    assert response.status_code == 302, response.get_data(as_text=True)
    return response.headers["Location"]


def through_provider(provider, location, account):
    """Follow the provider's pages as `account` (None: as the provider was told last), in a fresh
    browser there; the URL it sends back to."""
    if account is not None:
        provider.sign_in_as(account)
    browser = requests.Session()
    for _ in range(10):
        response = browser.get(location, allow_redirects=False, timeout=10)
        location = requests.compat.urljoin(response.url, response.headers.get("Location", ""))
        if location.startswith(REALM_URL):
            return location
    raise AssertionError(f"the provider never sent the browser back: {response.status_code} {response.text[:300]}")


def back_at(flask_client, url):
    """The callback as the browser would load it."""
    parsed = urlparse(url)
    return flask_client.get(f"{parsed.path}?{parsed.query}")


def sign_in(flask_client, provider, account, query=""):
    return back_at(flask_client, through_provider(provider, to_provider(flask_client, query), account))


def session_user(flask_client):
    """The account the browser's session cookie signs in, via the web client's /json/users/me."""
    page = flask_client.get("/")
    csrf = page.get_data(as_text=True).split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
    response = flask_client.get("/json/users/me", headers={"X-CSRFToken": csrf})
    return response.get_json() if response.status_code == 200 else None


def test_server_settings_list_the_provider(org, anon):
    """Does /server_settings list the provider as Zulip does (oidc:<name>, its display name,
    login and signup URLs) and say OpenID Connect is on?"""
    body = ok(anon.get("server_settings"))
    assert body["authentication_methods"]["openid connect"] is True
    assert body["external_authentication_methods"] == [{
        "name": "oidc:testidp", "display_name": "Test IdP", "display_icon": None,
        "login_url": "/accounts/login/social/oidc", "signup_url": "/accounts/register/social/oidc"}]
    # The mobile app decodes it with its generated decoders (tests/data/flutter_keys.json).
    assert problems_of(body, "GetServerSettingsResult", "server_settings") == []


def test_redirect_to_the_provider(org, flask_client, provider):
    """Does the login URL send the browser to the authorization endpoint with a code request,
    the openid email profile scope, the exact redirect URI, a random state, a nonce and PKCE?"""
    first = urlparse(to_provider(flask_client))
    params = {key: values[0] for key, values in parse_qs(first.query).items()}
    assert f"{first.scheme}://{first.netloc}{first.path}" == f"{provider.issuer}/auth"
    assert params["response_type"] == "code" and params["scope"] == "openid email profile"
    assert params["redirect_uri"] == f"{REALM_URL}/complete/oidc/" and params["client_id"] == CLIENT_ID
    assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) >= 43
    assert len(params["state"]) >= 32 and len(params["nonce"]) >= 32
    second = parse_qs(urlparse(to_provider(flask_client)).query)
    assert second["state"][0] != params["state"] and second["nonce"][0] != params["nonce"]


def test_existing_user_signs_in(org, flask_client, provider):
    """Does an existing active person, matched by email whatever its case, get a session and land
    in the app?"""
    done = sign_in(flask_client, provider, "hamlet")
    assert done.status_code == 302 and done.headers["Location"] == "/"
    assert session_user(flask_client)["user_id"] == org.hamlet.id


def test_new_user_auto_signup(org, flask_client, provider):
    """With auto_signup, does a new person get a member account named by the provider?"""
    done = sign_in(flask_client, provider, "newbie")
    assert done.status_code == 302 and done.headers["Location"] == "/"
    me = session_user(flask_client)
    assert (me["email"], me["full_name"], me["role"]) == ("newbie@zulip.example", "New Person", 400)


@pytest.mark.config(OIDC_AUTO_SIGNUP=False)
def test_new_user_without_auto_signup_is_asked(org, flask_client, provider):
    """Without auto_signup, is a new person shown the sign-up confirmation (no account yet), and
    does its button create the account, once?"""
    shown = sign_in(flask_client, provider, "newbie")
    text = shown.get_data(as_text=True)
    assert shown.status_code == 200 and "does not have an account in this organization" in text
    assert session_user(flask_client) is None
    owner = ApiClient(flask_client, org.owner.email, org.owner.api_key)
    emails = [u["email"] for u in ok(owner.get("users"))["members"]]
    assert "newbie@zulip.example" not in emails
    token = text.split('name="token" value="', 1)[1].split('"', 1)[0]
    assert 'name="full_name"' in text and 'value="New Person"' in text
    created = flask_client.post("/complete/oidc/confirm", data={"token": token, "full_name": "Nova Person"})
    assert created.status_code == 302 and created.headers["Location"] == "/"
    me = session_user(flask_client)
    assert (me["email"], me["full_name"]) == ("newbie@zulip.example", "Nova Person")
    again = flask_client.post("/complete/oidc/confirm", data={"token": token})
    assert again.status_code == 400


def test_deactivated_user_refused(org, flask_client, provider):
    """Is a deactivated account refused on a page saying so, without a session?"""
    ok(ApiClient(flask_client, org.owner.email, org.owner.api_key).delete(f"users/{org.cordelia.id}"))
    refused = sign_in(flask_client, provider, "cordelia")
    assert refused.status_code == 403
    assert "Your account cordelia@zulip.example has been deactivated." in refused.get_data(as_text=True)
    assert session_user(flask_client) is None


def test_tampering_refused(org, flask_client, provider):
    """Are a forged state, a browser that never started the flow, a replayed callback (even with
    the flow's cookie put back) and an IdP's error all refused with a 4xx and no session?"""
    forged = through_provider(provider, to_provider(flask_client), "hamlet").replace("state=", "state=x")
    assert back_at(flask_client, forged).status_code == 400 and session_user(flask_client) is None
    callback = through_provider(provider, to_provider(flask_client), "hamlet")
    cookie = flask_client.get_cookie("oidc_flow", path="/complete/oidc/").value
    stranger = flask_client.application.test_client()
    assert back_at(stranger, callback).status_code == 400 and session_user(stranger) is None
    assert back_at(flask_client, callback).status_code == 302
    thief = flask_client.application.test_client()
    thief.set_cookie("oidc_flow", cookie, path="/complete/oidc/")
    assert back_at(thief, callback).status_code == 400 and session_user(thief) is None
    provider.refuse_next()
    refused = through_provider(provider, to_provider(thief), None)
    assert "error=access_denied" in refused
    assert back_at(thief, refused).status_code == 400 and session_user(thief) is None


@pytest.mark.config(OIDC_AUTO_SIGNUP=False, SOCIAL_AUTH_OIDC_FULL_NAME_VALIDATED=True)
def test_validated_names_are_not_asked(org, flask_client, provider):
    """With SOCIAL_AUTH_OIDC_FULL_NAME_VALIDATED, does the confirmation ask no name and take the
    provider's, whatever the form sends?"""
    shown = sign_in(flask_client, provider, "newbie").get_data(as_text=True)
    assert 'name="full_name"' not in shown
    token = shown.split('name="token" value="', 1)[1].split('"', 1)[0]
    flask_client.post("/complete/oidc/confirm", data={"token": token, "full_name": "Someone Else"})
    assert session_user(flask_client)["full_name"] == "New Person"


@pytest.mark.config(AUTHENTICATION_BACKENDS=["zproject.backends.EmailAuthBackend"])
def test_login_url_is_404_when_off(org, flask_client):
    """Is the login URL a 404 when OpenID Connect is off?"""
    assert flask_client.get(LOGIN).status_code == 404


def xor_hex(a, b):
    return "".join(f"{int(x, 16) ^ int(y, 16):x}" for x, y in zip(a, b))


def test_mobile_flow(org, flask_client, provider):
    """Does the mobile app's flow (mobile_flow_otp on the login URL) end in a 302 to
    zulip://login with the realm, email, user id and the API key encrypted with the pad, a key
    that works once decrypted, and no browser session?"""
    otp = secrets.token_hex(32)
    done = sign_in(flask_client, provider, "hamlet", f"?mobile_flow_otp={otp}")
    assert done.status_code == 302
    location = urlparse(done.headers["Location"])
    assert (location.scheme, location.netloc) == ("zulip", "login")
    params = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert set(params) == {"realm", "email", "user_id", "otp_encrypted_api_key"}
    assert (params["realm"], params["email"], params["user_id"]) == (REALM_URL, "hamlet@zulip.example",
                                                                     str(org.hamlet.id))
    api_key = bytes.fromhex(xor_hex(params["otp_encrypted_api_key"], otp)).decode()
    assert api_key == org.hamlet.api_key
    assert ok(ApiClient(flask_client, "hamlet@zulip.example", api_key).get("users/me"))["user_id"] == org.hamlet.id
    assert session_user(flask_client) is None


def test_malformed_otp_is_400(org, flask_client):
    """Is a mobile or desktop one-time pad that is not 64 hex digits refused with 400 Invalid OTP?"""
    for query in ("?mobile_flow_otp=1234", f"?mobile_flow_otp={'g' * 64}", f"?desktop_flow_otp={'0' * 63}"):
        response = flask_client.get(LOGIN + query)
        assert response.status_code == 400 and response.get_json()["msg"] == "Invalid OTP", query


def test_desktop_flow(org, flask_client, provider):
    """Does the desktop app's flow show a token encrypted with AES-GCM under the pad, which the app
    decrypts and redeems once at /accounts/login/subdomain/<token> for a session?"""
    otp = secrets.token_hex(32)
    shown = sign_in(flask_client, provider, "hamlet", f"?desktop_flow_otp={otp}")
    assert shown.status_code == 200 and session_user(flask_client) is None
    data = bytes.fromhex(shown.get_data(as_text=True).split('id="desktop-data"', 1)[1].split('value="', 1)[1]
                         .split('"', 1)[0])
    token = AESGCM(bytes.fromhex(otp)).decrypt(data[:12], data[12:], b"").decode()
    app = flask_client.application.test_client()
    signed = app.get(f"/accounts/login/subdomain/{token}")
    assert signed.status_code == 302 and session_user(app)["user_id"] == org.hamlet.id
    assert flask_client.application.test_client().get(f"/accounts/login/subdomain/{token}").status_code == 400
