"""Push: POST /mobile_push/register against a fake relay on 127.0.0.1."""

import base64

from chat_appliance.models import PushDevice, database

from .helpers import KEY, err, ok


def b64(data):
    return base64.b64encode(data).decode()


def params(**overrides):
    values = {"token_kind": "fcm", "push_account_id": 1234, "push_public_key": b64(b"device-key"),
              "bouncer_public_key": KEY, "encrypted_push_registration": b64(b"ciphertext")}
    values.update(overrides)
    return values


def devices():
    with database.connection_context():
        return [(d.user_profile_id, d.push_account_id, d.token_kind) for d in PushDevice.select()]


def test_not_configured(org):
    """Without PUSH_RELAY_URL, is registration PUSH_SERVICE_NOT_CONFIGURED?"""
    err(org.client(org.hamlet).post("mobile_push/register", **params()), 400, "PUSH_SERVICE_NOT_CONFIGURED",
        "Server is not configured to use push notification service.")


def test_register_forwards_and_stores(org, configured):
    """Is a registration forwarded to the relay's /register as JSON and stored for the user?"""
    ok(org.client(org.hamlet).post("mobile_push/register", **params()))
    path, body = configured.received[0]
    assert path == "/register"
    assert body == {"realm_host": "zulip.example", "user_id": org.hamlet.id, "push_account_id": 1234,
                    "token_kind": "fcm", "bouncer_public_key": KEY,
                    "encrypted_push_registration": b64(b"ciphertext")}
    assert devices() == [(org.hamlet.id, 1234, "fcm")]


def test_repeat_registration_updates(org, configured):
    """Does a repeat registration with the same push_account_id update rather than add?"""
    client = org.client(org.hamlet)
    ok(client.post("mobile_push/register", **params()))
    ok(client.post("mobile_push/register", **params(token_kind="apns")))
    ok(client.post("mobile_push/register", **params(push_account_id=99)))
    assert sorted(devices()) == [(org.hamlet.id, 99, "fcm"), (org.hamlet.id, 1234, "apns")]


def test_parameter_validation(org, configured):
    """Are a bad token_kind, non-integer account id, non-base64 keys and an unknown relay key refused?"""
    client = org.client(org.hamlet)
    err(client.post("mobile_push/register", **params(token_kind="gcm")), 400, "BAD_REQUEST")
    err(client.post("mobile_push/register", **params(push_account_id="abc")), 400, "BAD_REQUEST")
    err(client.post("mobile_push/register", **params(push_public_key="not base64!")), 400, "BAD_REQUEST")
    err(client.post("mobile_push/register", **params(encrypted_push_registration="YWJj-_")), 400, "BAD_REQUEST")
    err(client.post("mobile_push/register", **params(bouncer_public_key=b64(b"other"))), 400, "BAD_REQUEST",
        "Invalid bouncer_public_key")
    err(client.post("mobile_push/register", token_kind="fcm"), 400, "REQUEST_VARIABLE_MISSING")
    assert devices() == [] and configured.received == []


def test_relay_failure_stores_nothing(org, configured):
    """When the relay refuses, is the request a 502 and nothing stored?"""
    configured.status = 500
    err(org.client(org.hamlet).post("mobile_push/register", **params()), 502, "BAD_GATEWAY")
    assert devices() == []
