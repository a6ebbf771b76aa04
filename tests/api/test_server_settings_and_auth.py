"""Server settings, authentication and the envelope every endpoint shares."""

import base64

import pytest

from chat_appliance.api.server import ZULIP_FEATURE_LEVEL

from ..support.helpers import ApiClient, err, ok


def test_server_settings_needs_no_auth_and_reports_version(anon, org):
    """Does GET /server_settings answer without credentials, with a parseable zulip_version?"""
    body = ok(anon.get("server_settings"))
    assert body["zulip_feature_level"] == ZULIP_FEATURE_LEVEL == 482
    major_minor = body["zulip_version"].split("-")[0]
    assert [int(x) for x in major_minor.split(".")] == [11, 0]
    assert body["realm_uri"] == "http://zulip.example"


def test_server_settings_ignores_bad_credentials(flask_client, org):
    """Does GET /server_settings still succeed when the Basic credentials are wrong (the zulip
    library's constructor sends them and asserts on zulip_version)?"""
    client = ApiClient(flask_client, "nobody@zulip.example", "wrong")
    assert "zulip_version" in ok(client.get("server_settings"))


def test_missing_credentials_is_401_with_challenge(anon, org):
    """Does an endpoint that needs auth answer 401 UNAUTHORIZED with a Basic challenge?"""
    response = anon.get("users/me")
    err(response, 401, "UNAUTHORIZED", "Not logged in: API authentication or user session required")
    assert response.headers["WWW-Authenticate"].startswith("Basic")


def test_wrong_api_key_is_401(flask_client, org):
    """Is a wrong key for a real account refused as INVALID_API_KEY?"""
    client = ApiClient(flask_client, org.hamlet.email, "x" * 32)
    err(client.get("users/me"), 401, "INVALID_API_KEY", "Invalid API key")


def test_key_of_another_user_is_refused(flask_client, org):
    """Can one account's key be used with another account's email? (It must not.)"""
    client = ApiClient(flask_client, org.hamlet.email, org.othello.api_key)
    err(client.get("users/me"), 401, "INVALID_API_KEY")


def test_malformed_authorization_header(flask_client, org):
    """Is a garbled Authorization header a 401, not a 500?"""
    response = flask_client.get("/api/v1/users/me", headers={"Authorization": "Basic !!!notbase64"})
    assert response.status_code == 401
    token = base64.b64encode(b"no-colon-here").decode()
    response = flask_client.get("/api/v1/users/me", headers={"Authorization": f"Basic {token}"})
    assert response.status_code == 401


def test_basic_credentials_edge_cases(flask_client, org):
    """The Authorization header as the server has always read it: a password holding colons is
    split at the first one, bytes that are not UTF-8 are read as Latin-1 (and so match no key),
    a header without a space or with an empty value is no credentials at all."""
    def status(header):
        return flask_client.get("/api/v1/users/me", headers={"Authorization": header})

    def basic(raw):
        return "Basic " + base64.b64encode(raw).decode()

    good = basic(f"{org.hamlet.email}:{org.hamlet.api_key}".encode())
    assert status(good).status_code == 200
    err(status(basic(f"{org.hamlet.email}:{org.hamlet.api_key}:extra".encode())), 401, "INVALID_API_KEY")
    err(status(basic(org.hamlet.email.encode() + b":\xff\xfe")), 401, "INVALID_API_KEY")
    err(status("Basic"), 401, "UNAUTHORIZED")
    err(status(basic(b":")), 401, "UNAUTHORIZED")
    err(status("Basic " + base64.b64encode(b"\xe9t\xe9@zulip.example:key").decode()), 401, "INVALID_API_KEY")


def test_email_is_case_insensitive(flask_client, org):
    """Does Basic auth accept the email in another case?"""
    client = ApiClient(flask_client, org.hamlet.email.upper(), org.hamlet.api_key)
    assert ok(client.get("users/me"))["user_id"] == org.hamlet.id


def test_deactivated_user_is_refused(org):
    """Is a deactivated account's key refused with USER_DEACTIVATED (401)?"""
    from chat_appliance.models import UserProfile, database

    client = org.client(org.othello)
    with database.connection_context():
        UserProfile.update(is_active=False).where(UserProfile.id == org.othello.id).execute()
    err(client.get("users/me"), 401, "USER_DEACTIVATED", "Account is deactivated")


def test_fetch_api_key(anon, org):
    """Does POST /fetch_api_key exchange email and password for the API key, and refuse a wrong password?"""
    from ..support.helpers import PASSWORD

    body = ok(anon.post("fetch_api_key", username=org.hamlet.email, password=PASSWORD))
    assert body["api_key"] == org.hamlet.api_key
    assert body["email"] == org.hamlet.email and body["user_id"] == org.hamlet.id
    err(anon.post("fetch_api_key", username=org.hamlet.email, password="nope"), 401, "AUTHENTICATION_FAILED")
    err(anon.post("fetch_api_key", username="ghost@zulip.example", password=PASSWORD), 401, "AUTHENTICATION_FAILED")


def test_unknown_path_is_json_404(org):
    """Does an unknown path under /api/v1 give a JSON 404 envelope, not an HTML page?"""
    err(org.client(org.hamlet).get("no/such/endpoint"), 404, "NOT_FOUND")


def test_wrong_method_is_405_with_allow(org):
    """Does a known path with the wrong method give 405 with the allowed methods?"""
    response = org.client(org.hamlet).put("users/me")
    err(response, 405, "BAD_REQUEST")
    assert "GET" in response.headers["Allow"]


def test_unexpected_exception_is_500_envelope(app, org, monkeypatch, caplog):
    """Does a bug inside a view become a logged 500 JSON envelope?"""
    from chat_appliance.api import users

    def explode(user):
        raise RuntimeError("boom")

    monkeypatch.setattr(users, "max_message_id", explode)
    response = org.client(org.hamlet).get("users/me")
    err(response, 500, "INTERNAL_SERVER_ERROR")
    assert "RuntimeError: boom" in caplog.text


def test_passwords_are_hashed(org):
    """Is the password stored hashed, never in the clear?"""
    from chat_appliance.models import UserProfile, database

    from ..support.helpers import PASSWORD

    with database.connection_context():
        stored = UserProfile.get_by_id(org.hamlet.id).password
    assert PASSWORD not in stored and stored.startswith("pbkdf2:")


@pytest.mark.parametrize("method", ["scrypt", "pbkdf2:sha256:1000", "pbkdf2:sha512:2000"])
def test_hashes_stored_by_werkzeug_still_sign_in(org, flask_client, method):
    """Does a password hash written by werkzeug.security (what every stored hash was, before
    lib/passwords hashed with hashlib itself) still sign in with its password, and only with it?"""
    from werkzeug.security import generate_password_hash

    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        UserProfile.update(password=generate_password_hash("old werkzeug secret", method=method)).where(
            UserProfile.id == org.hamlet.id).execute()
    login = {"username": "hamlet@zulip.example", "password": "old werkzeug secret"}
    assert ok(flask_client.post("/api/v1/fetch_api_key", data=login))["api_key"] == org.hamlet.api_key
    err(flask_client.post("/api/v1/fetch_api_key", data={**login, "password": "old werkzeug secreT"}), 401,
        "AUTHENTICATION_FAILED")


@pytest.mark.parametrize("method", ["scrypt", "pbkdf2:sha256", "pbkdf2:sha256:1000"])
def test_new_hashes_keep_werkzeugs_format(method):
    """Does a new hash spell out its method's parameters in werkzeug's format, so that werkzeug
    (and so any older build of this server, after a downgrade) verifies it?"""
    from werkzeug.security import check_password_hash

    from chat_appliance.lib.passwords import check_password, hash_password

    stored = hash_password("a new secret", method)
    assert stored.startswith({"scrypt": "scrypt:32768:8:1$", "pbkdf2:sha256": "pbkdf2:sha256:1000000$",
                              "pbkdf2:sha256:1000": "pbkdf2:sha256:1000$"}[method])
    assert check_password_hash(stored, "a new secret") and not check_password_hash(stored, "a new secreT")
    assert check_password(stored, "a new secret") and not check_password(stored, "a new secreT")
    assert not check_password("sha1$nonsense", "a new secret")


def test_api_keys_are_32_random_characters(org):
    """Are API keys 32 characters and distinct?"""
    keys = {u.api_key for u in (org.owner, org.admin, org.hamlet, org.othello, org.bot)}
    assert len(keys) == 5 and all(len(k) == 32 and k.isalnum() for k in keys)
