"""Code playgrounds, user-settings defaults, legacy push registrations, test notifications and
BigBlueButton, through HTTP."""

import pytest

from chat_appliance.actions.users import do_create_user
from chat_appliance.models import PushDevice, PushDeviceToken, database

from .helpers import FAST_HASH, PASSWORD, err, ok, polled, queues, register

PLAYGROUND = {"name": "Python playground", "pygments_language": "Python",
              "url_template": "https://python.example.com?code={code}"}


def test_playgrounds_add_remove_events(org):
    """Do administrators add and remove playgrounds, with the whole list in events and /register?"""
    admin = org.client(org.admin)
    qs = queues(org, org.othello, event_types=["realm_playgrounds"])
    playground_id = ok(admin.post("realm/playgrounds", **PLAYGROUND))["id"]
    expected = [{"id": playground_id, **PLAYGROUND}]
    assert register(org.client(org.othello), fetch_event_types=["realm_playgrounds"])["realm_playgrounds"] == expected
    ok(admin.delete(f"realm/playgrounds/{playground_id}"))
    assert [e["realm_playgrounds"] for e in polled(qs, org.othello)] == [expected, []]


def test_playground_errors(org):
    """Are members, bad languages, templates without exactly {code}, duplicates and unknown ids refused?"""
    admin = org.client(org.admin)
    err(org.client(org.hamlet).post("realm/playgrounds", **PLAYGROUND), 400, "UNAUTHORIZED_PRINCIPAL")
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, pygments_language="py$")), 400, "BAD_REQUEST",
        "Invalid characters in pygments language")
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, url_template="https://x.example/{other}")), 400,
        "BAD_REQUEST", '"code" should be the only variable present in the URL template')
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, url_template="https://x.example/{code")), 400,
        "BAD_REQUEST", "Invalid URL template.")
    err(admin.post("realm/playgrounds", name="x"), 400, "REQUEST_VARIABLE_MISSING")
    ok(admin.post("realm/playgrounds", **PLAYGROUND))
    err(admin.post("realm/playgrounds", **PLAYGROUND), 400, "BAD_REQUEST")
    err(admin.delete("realm/playgrounds/99999"), 400, "BAD_REQUEST", "Invalid playground")
    assert len(register(admin, fetch_event_types=["realm_playgrounds"])["realm_playgrounds"]) == 1


def test_user_settings_defaults(org):
    """Does an administrator's change reach /register and everyone's queues, and does a user
    created afterwards start with it?"""
    qs = queues(org, org.othello, event_types=["realm_user_settings_defaults"])
    ok(org.client(org.admin).patch("realm/user_settings_defaults", twenty_four_hour_time=True,
                                   web_home_view="recent_topics", email_address_visibility=3))
    events = polled(qs, org.othello)
    assert {(e["property"], e["value"]) for e in events} == {
        ("twenty_four_hour_time", True), ("web_home_view", "recent_topics"), ("email_address_visibility", 3)}
    defaults = register(org.client(org.othello),
                        fetch_event_types=["realm_user_settings_defaults"])["realm_user_settings_defaults"]
    assert defaults["twenty_four_hour_time"] is True and defaults["web_home_view"] == "recent_topics"
    with database.connection_context():
        newcomer = do_create_user(org.realm, "newcomer@zulip.example", PASSWORD, "Newcomer",
                                  password_method=FAST_HASH)
    settings = register(org.client(newcomer), fetch_event_types=["user_settings"])["user_settings"]
    assert settings["twenty_four_hour_time"] is True and settings["email_address_visibility"] == 3
    assert newcomer.email == f"user{newcomer.id}@{org.realm.host}"


def test_user_settings_defaults_errors(org):
    """Are members refused and bad values 400s that change nothing?"""
    err(org.client(org.hamlet).patch("realm/user_settings_defaults", twenty_four_hour_time=True), 400,
        "UNAUTHORIZED_PRINCIPAL")
    admin = org.client(org.admin)
    err(admin.patch("realm/user_settings_defaults", twenty_four_hour_time="maybe"), 400, "BAD_REQUEST")
    err(admin.patch("realm/user_settings_defaults", color_scheme=9), 400, "BAD_REQUEST")
    defaults = register(admin, fetch_event_types=["realm_user_settings_defaults"])["realm_user_settings_defaults"]
    assert defaults["twenty_four_hour_time"] is False and defaults["color_scheme"] == 1


LEGACY = [("users/me/apns_device_token", {"token": "c0ffee", "appid": "org.zulip.Zulip"}, "apns"),
          ("users/me/android_gcm_reg_id", {"token": "android-token"}, "fcm")]


@pytest.mark.parametrize("path,params,kind", LEGACY)
def test_legacy_tokens_without_relay(org, path, params, kind):
    """Without a push relay, do adding, removing and test notifications answer PUSH_SERVICE_NOT_CONFIGURED?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post(path, **params), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    err(hamlet.delete(path, token=params["token"]), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    err(hamlet.post("mobile_push/test_notification"), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    err(hamlet.post("mobile_push/e2ee/test_notification"), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    with database.connection_context():
        assert PushDeviceToken.select().count() == 0


@pytest.mark.parametrize("path,params,kind", LEGACY)
def test_legacy_tokens_with_relay(org, configured, path, params, kind):
    """With a relay, is a token stored and forwarded, removable once, and the target of a test notification?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post(path, **params))
    assert configured.received[-1] == ("/legacy/register", {
        "realm_host": org.realm.host, "user_id": org.hamlet.id, "token_kind": kind, "token": params["token"],
        "appid": params.get("appid")})
    ok(hamlet.post("mobile_push/test_notification", token=params["token"]))
    assert configured.received[-1][0] == "/test_notification"
    assert configured.received[-1][1]["devices"] == [{"token_kind": kind, "token": params["token"]}]
    err(hamlet.post("mobile_push/test_notification", token="0123"), 400, "INVALID_PUSH_DEVICE_TOKEN",
        "Device not recognized")
    ok(hamlet.delete(path, token=params["token"]))
    err(hamlet.delete(path, token=params["token"]), 400, "BAD_REQUEST", "Token does not exist")
    err(hamlet.post("mobile_push/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE")


def test_legacy_token_validation(org, configured):
    """Are empty, overlong and (APNs) non-hexadecimal tokens refused before anything is sent?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("users/me/apns_device_token", token="", appid="a"), 400, "BAD_REQUEST",
        "Empty or invalid length token")
    err(hamlet.post("users/me/apns_device_token", token="xyz", appid="a"), 400, "BAD_REQUEST", "Invalid APNS token")
    err(hamlet.post("users/me/android_gcm_reg_id", token="x" * 4097), 400, "BAD_REQUEST",
        "Empty or invalid length token")
    err(hamlet.post("users/me/apns_device_token", token="c0ffee"), 400, "REQUEST_VARIABLE_MISSING")
    assert configured.received == []


def test_e2ee_test_notification(org, configured):
    """Does the encrypted test notification need a registered device, and reach the relay for it?
    Does a relay failure answer FAILED_TO_CONNECT_BOUNCER (502)?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("mobile_push/e2ee/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE")
    with database.connection_context():
        PushDevice.create(user_profile=org.hamlet.id, push_account_id=77, token_kind="fcm", push_public_key="k",
                          bouncer_public_key="b", encrypted_push_registration="e")
    ok(hamlet.post("mobile_push/e2ee/test_notification", push_account_id=77))
    assert configured.received[-1][1]["devices"] == [{"push_account_id": 77}]
    err(hamlet.post("mobile_push/e2ee/test_notification", push_account_id=78), 400, "NO_ACTIVE_PUSH_DEVICE")
    configured.status = 500
    err(hamlet.post("mobile_push/e2ee/test_notification"), 502, "FAILED_TO_CONNECT_BOUNCER")


def test_bigbluebutton_not_configured(org):
    """Does the BigBlueButton call URL answer Zulip's not-configured error, and need meeting_name?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.get("calls/bigbluebutton/create", meeting_name="standup"), 400, "BAD_REQUEST",
        "BigBlueButton is not configured.")
    err(hamlet.get("calls/bigbluebutton/create"), 400, "REQUEST_VARIABLE_MISSING")
