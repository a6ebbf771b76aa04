"""Mobile push through Zulip's Mobile Push Notification Service, against the stand-in on loopback
(tests/support/push_service_standin.py), which checks each request as the real service would."""

import json
import os
import stat
import uuid

import pytest

from chat_appliance.lib.push_credentials import CREDENTIALS_FILE, read_credentials
from chat_appliance.models import FLAG_BITS, PushDeviceToken, UserMessage, database

from ..support.helpers import err, ok, register, run

FCM_TOKEN = "fcm-registration-token-1"
APNS_TOKEN = "c0ffee00c0ffee00"
APP_ID = "org.zulip.Zulip"


def notifier(app):
    return app.extensions["chat_appliance"].workers["push_notifications"]


def settle(app):
    """Until the push worker has handled everything noted so far."""
    notifier(app).wait_idle()


def tokens():
    with database.connection_context():
        return sorted((t.user_profile_id, t.kind, t.token) for t in PushDeviceToken.select())


def with_fcm(org, user, token=FCM_TOKEN):
    ok(org.client(user).post("users/me/android_gcm_reg_id", token=token))


def set_settings(org, user, **values):
    ok(org.client(user).patch("settings", **values))


def notifications(service, event="message"):
    return [n for n in service.notifications if n["gcm_payload"]["event"] == event]


def is_uuid4(value):
    return str(uuid.UUID(value, version=4)) == value


# ---- register-push-service ----

def test_register_push_service_command(instance, push_service):
    """Does register-push-service register the server (a UUID org id, a 64-character key, the host
    name and contact address), store the credentials readable by the owner only, never print the
    key, and update the same registration when run again?"""
    base = ["register-push-service", "--instance", str(instance), "--url", push_service.url]
    refused = run(*base, "--contact-email", "admin@chat.example.org")
    assert refused.returncode == 1 and "--agree-to-terms-of-service" in refused.stderr
    assert push_service.servers == {}
    result = run(*base, "--agree-to-terms-of-service", "--contact-email", "admin@chat.example.org",
                 "--hostname", "chat.example.org")
    assert result.returncode == 0, result.stderr
    stored = read_credentials(instance)
    org_id, key = stored["zulip_org_id"], stored["zulip_org_key"]
    assert is_uuid4(org_id) and len(key) == 64
    assert push_service.servers == {org_id: {"key": key, "hostname": "chat.example.org",
                                             "contact_email": "admin@chat.example.org"}}
    assert stat.S_IMODE(os.stat(instance / CREDENTIALS_FILE).st_mode) == 0o600
    assert key not in result.stdout + result.stderr and org_id in result.stdout and "Registered" in result.stdout

    again = run(*base, "--agree-to-terms-of-service", "--contact-email", "ops@chat.example.org",
                "--hostname", "chat.example.org")
    assert again.returncode == 0 and "Registration updated" in again.stdout
    assert push_service.servers[org_id]["contact_email"] == "ops@chat.example.org"
    assert read_credentials(instance) == stored

    rotated = run(*base, "--agree-to-terms-of-service", "--contact-email", "ops@chat.example.org",
                  "--hostname", "chat.example.org", "--rotate-key")
    assert rotated.returncode == 0, rotated.stderr
    new_key = read_credentials(instance)["zulip_org_key"]
    assert new_key != key and push_service.servers[org_id]["key"] == new_key


def test_credentials_survive_backup_and_restore(instance, push_service, tmp_path):
    """Does a backup carry the service credentials, restored identical and owner-only?"""
    result = run("register-push-service", "--instance", str(instance), "--url", push_service.url,
                 "--agree-to-terms-of-service", "--contact-email", "admin@chat.example.org")
    assert result.returncode == 0, result.stderr
    archive = tmp_path / "b.tar.gz"
    assert run("backup", "--instance", str(instance), str(archive)).returncode == 0
    restored = run("restore", "--instance", str(tmp_path / "new"), str(archive))
    assert restored.returncode == 0, restored.stderr
    assert read_credentials(tmp_path / "new") == read_credentials(instance) is not None
    assert stat.S_IMODE(os.stat(tmp_path / "new" / CREDENTIALS_FILE).st_mode) == 0o600


def test_register_push_service_errors(instance, push_service):
    """Is the service's refusal (an example.com contact) shown as an error with nothing stored,
    and an unreachable service a clear error too?"""
    result = run("register-push-service", "--instance", str(instance), "--url", push_service.url,
                 "--agree-to-terms-of-service", "--contact-email", "someone@example.com")
    assert result.returncode == 1 and "Invalid email address." in result.stderr
    assert read_credentials(instance) is None and push_service.servers == {}
    down = run("register-push-service", "--instance", str(instance), "--url", "http://127.0.0.1:9",
               "--agree-to-terms-of-service", "--contact-email", "a@chat.example.org")
    assert down.returncode == 1 and "Could not reach the service" in down.stderr


def test_stored_credentials_turn_push_on(app, org, push_service):
    """Do credentials in the instance (as register-push-service leaves them) configure push, as
    server_settings reports?"""
    assert ok(org.client(org.hamlet).get("server_settings"))["push_notifications_enabled"] is False
    state = register(org.client(org.hamlet), fetch_event_types=["realm"])
    assert (state["realm_push_notifications_enabled"], state["realm_push_notifications_enabled_end_timestamp"]) == \
        (False, None)
    org_id, key = push_service.register_server()
    with open(os.path.join(app.config["INSTANCE_PATH"], CREDENTIALS_FILE), "w") as out:
        json.dump({"zulip_org_id": org_id, "zulip_org_key": key}, out)
    app.config["ZULIP_SERVICES_URL"] = push_service.url
    assert ok(org.client(org.hamlet).get("server_settings"))["push_notifications_enabled"] is True
    assert register(org.client(org.hamlet), fetch_event_types=["realm"])["realm_push_notifications_enabled"] is True
    with_fcm(org, org.hamlet)
    assert push_service.calls_to("push/register")[0]["token"] == FCM_TOKEN


# ---- device registration ----

@pytest.mark.parametrize("path,params", [("users/me/apns_device_token", {"token": APNS_TOKEN, "appid": APP_ID}),
                                         ("users/me/android_gcm_reg_id", {"token": FCM_TOKEN})])
def test_not_configured(org, path, params):
    """Without registration, do the token routes and test notifications answer
    PUSH_SERVICE_NOT_CONFIGURED and keep nothing?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post(path, **params), 400, "PUSH_SERVICE_NOT_CONFIGURED",
        "Server is not configured to use push notification service.")
    err(hamlet.delete(path, token=params["token"]), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    err(hamlet.post("mobile_push/test_notification"), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    assert tokens() == []


def test_not_configured_wakes_no_worker(app, org, push_service):
    """Without registration, do messages and read flags leave the push worker unstarted (each
    send used to wake it, only for it to find push was off), and does registering while the
    server runs start it at the next message?"""
    othello, hamlet = org.client(org.othello), org.client(org.hamlet)
    message_id = ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="hi"))["id"]
    ok(othello.post("messages", type="stream", to="Denmark", topic="t", content="hi"))
    ok(hamlet.post("messages/flags", messages=json.dumps([message_id]), op="add", flag="read"))
    assert notifier(app)._thread is None
    org_id, key = push_service.register_server()
    app.config.update(ZULIP_SERVICES_URL=push_service.url, ZULIP_ORG_ID=org_id, ZULIP_ORG_KEY=key)
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="again"))
    assert notifier(app)._thread is not None


def test_device_registration_forwarded(org, push_configured):
    """Are FCM and APNs tokens forwarded to push/register as Zulip sends them (token_kind 2 or 1,
    user_id, user_uuid, realm_uuid, ios_app_id for APNs), kept here, and removed at both ends?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/android_gcm_reg_id", token=FCM_TOKEN))
    ok(hamlet.post("users/me/apns_device_token", token=APNS_TOKEN, appid=APP_ID))
    fcm, apns = push_configured.calls_to("push/register")
    assert set(fcm) == {"server_uuid", "user_id", "user_uuid", "realm_uuid", "token", "token_kind"}
    assert fcm["server_uuid"] == next(iter(push_configured.servers))
    assert fcm["token"] == FCM_TOKEN and fcm["token_kind"] == "2" and fcm["user_id"] == str(org.hamlet.id)
    assert is_uuid4(fcm["user_uuid"]) and is_uuid4(fcm["realm_uuid"])
    assert apns == {**fcm, "token": APNS_TOKEN, "token_kind": "1", "ios_app_id": APP_ID}
    other = push_configured.calls_to("push/register")[0]
    ok(org.client(org.othello).post("users/me/android_gcm_reg_id", token="othello-token"))
    assert push_configured.calls_to("push/register")[-1]["user_uuid"] != other["user_uuid"]
    assert tokens() == sorted([(org.hamlet.id, "fcm", FCM_TOKEN), (org.hamlet.id, "apns", APNS_TOKEN),
                               (org.othello.id, "fcm", "othello-token")])

    ok(hamlet.delete("users/me/android_gcm_reg_id", token=FCM_TOKEN))
    assert push_configured.calls_to("push/unregister") == [
        {"server_uuid": fcm["server_uuid"], "user_id": str(org.hamlet.id), "user_uuid": fcm["user_uuid"], "realm_uuid": fcm["realm_uuid"],
         "token": FCM_TOKEN, "token_kind": "2"}]
    err(hamlet.delete("users/me/android_gcm_reg_id", token=FCM_TOKEN), 400, "BAD_REQUEST", "Token does not exist")
    assert [d["token"] for d in push_configured.devices if d["user_id"] == org.hamlet.id] == [APNS_TOKEN]
    assert push_configured.problems == []


def test_token_validation_and_service_failures(app, org, push_configured, caplog):
    """Are bad tokens refused before anything is sent; is an unreachable service a 502 that keeps
    nothing; is a wrong org key (the service's 401) logged for the operator and a 502 for the app,
    keeping nothing?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("users/me/apns_device_token", token="", appid="a"), 400, "BAD_REQUEST",
        "Empty or invalid length token")
    err(hamlet.post("users/me/apns_device_token", token="xyz", appid="a"), 400, "BAD_REQUEST", "Invalid APNS token")
    err(hamlet.post("users/me/android_gcm_reg_id", token="x" * 4097), 400, "BAD_REQUEST",
        "Empty or invalid length token")
    err(hamlet.post("users/me/apns_device_token", token=APNS_TOKEN), 400, "REQUEST_VARIABLE_MISSING")
    assert push_configured.calls == []
    push_configured.fail_next = 1
    err(hamlet.post("users/me/android_gcm_reg_id", token=FCM_TOKEN), 502, "BAD_GATEWAY")
    app.config["ZULIP_ORG_KEY"] = "w" * 64
    body = err(hamlet.post("users/me/android_gcm_reg_id", token=FCM_TOKEN), 502, "BAD_GATEWAY")
    assert "key" not in body["msg"] and "key does not match" in push_configured.problems[-1]
    assert "refused this server's credentials" in caplog.text
    assert tokens() == [] and push_configured.devices == []


def test_test_notification(org, push_configured):
    """Does a test notification reach push/test_notification with the base payload, and is an
    unknown token INVALID_PUSH_DEVICE_TOKEN?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("mobile_push/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE")
    with_fcm(org, org.hamlet)
    ok(hamlet.post("mobile_push/test_notification"))
    (call,) = push_configured.calls_to("push/test_notification")
    assert call["token"] == FCM_TOKEN and call["token_kind"] == 2 and call["user_id"] == org.hamlet.id
    assert call["base_payload"] == {"server": "zulip.example", "realm_id": org.realm.id,
                                    "realm_uri": "http://zulip.example", "realm_url": "http://zulip.example",
                                    "realm_name": "Zulip Dev", "user_id": org.hamlet.id}
    err(hamlet.post("mobile_push/test_notification", token="nope"), 400, "INVALID_PUSH_DEVICE_TOKEN")


def test_e2ee_registration_without_the_service(org, push_service):
    """On a server not registered with the service, are the end-to-end encrypted registration
    and test notification PUSH_SERVICE_NOT_CONFIGURED, as on Zulip, with nothing kept?"""
    hamlet = org.client(org.hamlet)
    device_id = ok(hamlet.post("register_client_device"))["device_id"]
    key = "MTaUDJDMWypQ1WufZ1NRTHSSvgYtXh1qVNSjN3aBiEFt"
    err(hamlet.post("mobile_push/register", device_id=device_id, push_key_id=1, push_key=key, token_kind="fcm",
                    token_id="+wKIhyAx/Eg=", bouncer_public_key="a2V5", encrypted_push_registration="ZW5j"),
        400, "PUSH_SERVICE_NOT_CONFIGURED", "Server is not configured to use push notification service.")
    err(hamlet.post("mobile_push/register", token_kind="fcm"), 400, "REQUEST_VARIABLE_MISSING")
    err(hamlet.post("mobile_push/e2ee/test_notification"), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    assert register(hamlet, fetch_event_types=["device"])["devices"][str(device_id)]["push_key_id"] is None
    assert push_service.calls == []


# ---- notifications ----

def test_direct_message_to_offline_user(app, org, push_configured):
    """Does a DM to someone away (no event queue) reach push/notify in Zulip's exact shapes, for
    their devices, with the message marked as notified (a flag no client sees)?"""
    with_fcm(org, org.hamlet)
    ok(org.client(org.hamlet).post("users/me/apns_device_token", token=APNS_TOKEN, appid=APP_ID))
    register_call = push_configured.calls_to("push/register")[0]
    sent = ok(org.client(org.othello).post("messages", type="private", to=json.dumps([org.hamlet.id]),
                                           content="**Hello** there, @**King Hamlet**"))
    settle(app)
    (body,) = push_configured.notifications
    base = {"server": "zulip.example", "realm_id": org.realm.id, "realm_uri": "http://zulip.example",
            "realm_url": "http://zulip.example", "realm_name": "Zulip Dev", "user_id": org.hamlet.id}
    with database.connection_context():
        date_sent = UserMessage.get(UserMessage.message == sent["id"], UserMessage.user_profile == org.hamlet.id)
        date_sent = date_sent.message.date_sent
    message = {**base, "sender_id": org.othello.id, "sender_email": org.othello.email, "time": date_sent,
               "recipient_type": "private"}
    assert body["user_id"] == org.hamlet.id
    assert body["user_uuid"] == register_call["user_uuid"] and body["realm_uuid"] == register_call["realm_uuid"]
    assert body["gcm_payload"] == {**message, "event": "message", "zulip_message_id": sent["id"],
                                   "content": "Hello there, @King Hamlet", "content_truncated": False,
                                   "sender_full_name": "Othello, the Moor of Venice",
                                   "sender_avatar_url": body["gcm_payload"]["sender_avatar_url"]}
    assert body["gcm_payload"]["sender_avatar_url"].startswith("https://")
    assert body["gcm_options"] == {"priority": "high"}
    assert body["apns_payload"] == {
        "alert": {"title": "Othello, the Moor of Venice", "subtitle": "", "body": "Hello there, @King Hamlet"},
        "sound": "default", "badge": 0, "custom": {"zulip": {**message, "message_ids": [sent["id"]]}}}
    assert body["android_devices"] == [FCM_TOKEN] and body["apple_devices"] == [APNS_TOKEN]
    assert push_configured.problems == []
    with database.connection_context():
        row = UserMessage.get(UserMessage.message == sent["id"], UserMessage.user_profile == org.hamlet.id)
        assert row.flags & FLAG_BITS["active_mobile_push_notification"]
    fetched = ok(org.client(org.hamlet).get("messages", anchor=sent["id"], num_before=0, num_after=0))
    assert fetched["messages"][0]["flags"] == ["mentioned"]


def test_online_rule_and_offline_setting(app, org, push_configured):
    """With enable_online_push_notifications off, is someone with a live queue not notified while
    someone away is; and does enable_offline_push_notifications off stop DM notifications?"""
    with_fcm(org, org.hamlet)
    with_fcm(org, org.cordelia, "cordelia-token")
    set_settings(org, org.hamlet, enable_online_push_notifications=False)
    set_settings(org, org.cordelia, enable_online_push_notifications=False)
    register(org.client(org.hamlet))  # Hamlet has a client open
    othello = org.client(org.othello)
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="while you are here"))
    ok(othello.post("messages", type="private", to=json.dumps([org.cordelia.id]), content="while you are away"))
    settle(app)
    assert [n["user_id"] for n in push_configured.notifications] == [org.cordelia.id]
    set_settings(org, org.cordelia, enable_offline_push_notifications=False)
    ok(othello.post("messages", type="private", to=json.dumps([org.cordelia.id]), content="not pushed"))
    settle(app)
    assert len(push_configured.notifications) == 1


def test_group_dm(app, org, push_configured):
    """Does a group DM carry pm_users and the participants' names as title?"""
    with_fcm(org, org.hamlet)
    ids = sorted([org.hamlet.id, org.othello.id, org.cordelia.id])
    ok(org.client(org.othello).post("messages", type="private", to=json.dumps([org.hamlet.id, org.cordelia.id]),
                                    content="all three"))
    settle(app)
    (body,) = push_configured.notifications
    assert body["gcm_payload"]["pm_users"] == ",".join(map(str, ids))
    assert body["apns_payload"]["alert"]["title"] == ", ".join(sorted(
        ["King Hamlet", "Othello, the Moor of Venice", "Cordelia, Lear's daughter"]))
    assert body["apns_payload"]["alert"]["subtitle"] == "Othello, the Moor of Venice:"


def test_mention_in_channel(app, org, push_configured):
    """Is a mention in a channel pushed with the channel, topic and "mentioned you" subtitle, a
    plain channel message not (channel pushes are off by default), and a wildcard mention only
    with wildcard_mentions_notify?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    ok(othello.post("messages", type="stream", to="Denmark", topic="castle", content="plain message"))
    sent = ok(othello.post("messages", type="stream", to="Denmark", topic="castle", content="@**King Hamlet** look"))
    settle(app)
    (body,) = push_configured.notifications
    gcm = body["gcm_payload"]
    assert (gcm["recipient_type"], gcm["stream"], gcm["stream_id"], gcm["topic"], gcm["zulip_message_id"]) == \
        ("stream", "Denmark", org.denmark.id, "castle", sent["id"])
    assert body["apns_payload"]["alert"] == {"title": "#Denmark > castle",
                                             "subtitle": "Othello, the Moor of Venice mentioned you:",
                                             "body": "@King Hamlet look"}
    set_settings(org, org.hamlet, wildcard_mentions_notify=False)
    ok(othello.post("messages", type="stream", to="Denmark", topic="castle", content="@**all** hear"))
    settle(app)
    assert len(push_configured.notifications) == 1
    set_settings(org, org.hamlet, wildcard_mentions_notify=True)
    ok(othello.post("messages", type="stream", to="Denmark", topic="castle", content="@**all** hear again"))
    settle(app)
    assert push_configured.notifications[-1]["apns_payload"]["alert"]["subtitle"] == \
        "Othello, the Moor of Venice mentioned everyone:"
    assert push_configured.problems == []


def test_followed_topic_and_channel_setting(app, org, push_configured):
    """Is a message in a followed topic pushed (unless enable_followed_topic_push_notifications is
    off), and a channel's push_notifications subscription setting honoured?"""
    with_fcm(org, org.hamlet)
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    ok(hamlet.post("user_topics", stream_id=org.denmark.id, topic="followed", visibility_policy=3))
    first = ok(othello.post("messages", type="stream", to="Denmark", topic="followed", content="news"))
    ok(othello.post("messages", type="stream", to="Denmark", topic="other", content="not followed"))
    settle(app)
    assert [n["gcm_payload"]["zulip_message_id"] for n in push_configured.notifications] == [first["id"]]
    assert push_configured.notifications[0]["apns_payload"]["alert"]["subtitle"] == "Othello, the Moor of Venice:"
    set_settings(org, org.hamlet, enable_followed_topic_push_notifications=False)
    ok(othello.post("messages", type="stream", to="Denmark", topic="followed", content="quiet now"))
    settle(app)
    assert len(push_configured.notifications) == 1
    ok(hamlet.post("users/me/subscriptions/properties", subscription_data=json.dumps(
        [{"stream_id": org.denmark.id, "property": "push_notifications", "value": True}])))
    channel = ok(othello.post("messages", type="stream", to="Denmark", topic="other", content="channel push"))
    settle(app)
    assert push_configured.notifications[-1]["gcm_payload"]["zulip_message_id"] == channel["id"]


def test_remove_when_read(app, org, push_configured):
    """When notified messages are read, does one "remove" in Zulip's shape go out for them, and
    never again for the same messages?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    ids = [ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content=f"m{i}"))["id"]
           for i in range(2)]
    settle(app)
    assert len(notifications(push_configured)) == 2
    ok(org.client(org.hamlet).post("messages/flags", messages=json.dumps(ids), op="add", flag="read"))
    settle(app)
    (remove,) = notifications(push_configured, "remove")
    base = {"server": "zulip.example", "realm_id": org.realm.id, "realm_uri": "http://zulip.example",
            "realm_url": "http://zulip.example", "realm_name": "Zulip Dev", "user_id": org.hamlet.id}
    assert remove["gcm_payload"] == {**base, "event": "remove", "zulip_message_ids": f"{ids[0]},{ids[1]}",
                                     "zulip_message_id": ids[0]}
    assert remove["gcm_options"] == {"priority": "normal"}
    assert remove["apns_payload"] == {"badge": 0, "custom": {"zulip": {
        **base, "event": "remove", "zulip_message_ids": f"{ids[0]},{ids[1]}"}}}
    ok(org.client(org.hamlet).post("messages/flags", messages=json.dumps(ids), op="remove", flag="read"))
    ok(org.client(org.hamlet).post("messages/flags", messages=json.dumps(ids), op="add", flag="read"))
    settle(app)
    assert len(notifications(push_configured, "remove")) == 1


def test_remove_when_deleted(app, org, push_configured):
    """When notified messages are deleted, one by one or with their topic, does a "remove" go
    to the person they were notified to, and none to those who were not notified?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    notified = ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="oops"))["id"]
    topic = [ok(othello.post("messages", type="stream", to="Denmark", topic="gone",
                             content=f"@**King Hamlet** {i}"))["id"] for i in range(2)]
    settle(app)
    assert len(notifications(push_configured)) == 3
    admin = org.client(org.admin)
    ok(othello.delete(f"messages/{notified}"))
    settle(app)
    (remove,) = notifications(push_configured, "remove")
    assert (remove["gcm_payload"]["user_id"], remove["gcm_payload"]["zulip_message_ids"]) == (
        org.hamlet.id, str(notified))
    ok(admin.post(f"streams/{org.denmark.id}/delete_topic", topic_name="gone"))
    settle(app)
    removes = notifications(push_configured, "remove")
    assert len(removes) == 2 and removes[1]["gcm_payload"]["zulip_message_ids"] == f"{topic[0]},{topic[1]}"
    ok(othello.post("messages", type="stream", to="Denmark", topic="kept", content="not a mention"))
    unnotified = ok(othello.post("messages", type="stream", to="Denmark", topic="kept", content="quiet"))["id"]
    settle(app)
    ok(admin.delete(f"messages/{unnotified}"))
    settle(app)
    assert len(notifications(push_configured, "remove")) == 2


def test_retry_and_give_up(app, org, push_configured, caplog):
    """Is a notification the service failed (5xx) retried and delivered; after every attempt
    fails, is it logged and dropped without blocking the sender?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="first"))
    settle(app)  # the worker has uploaded the server data, and sent this one
    assert len(push_configured.notifications) == 1
    push_configured.fail_next = 2
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="eventually"))
    settle(app)
    assert len(push_configured.notifications) == 2
    push_configured.fail_next = 3
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="lost"))
    settle(app)
    assert len(push_configured.notifications) == 2
    assert "not delivered after 3 attempts" in caplog.text


def test_no_device_no_call(app, org, push_configured):
    """Is nothing sent for people without a registered device, nor for the sender?"""
    with_fcm(org, org.othello)
    ok(org.client(org.othello).post("messages", type="private", to=json.dumps([org.hamlet.id]), content="hi"))
    settle(app)
    assert push_configured.notifications == []


def test_notification_text(app, org, push_configured):
    """Is the text Zulip's: emoji as characters, a spoiler as its header and "(…)", lists
    numbered, quotes beside the message's own text collapsed to "[…]", and a long text cut after
    200 characters with "…" and content_truncated?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    sent = [
        "Good :smile:",
        "```spoiler The ending\nEveryone dies\n```",
        "1. first\n2. second",
        "> what he said\n\nmy answer",
        "> only a quote",
        "x" * 250,
    ]
    for content in sent:
        ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content=content))
    settle(app)
    texts = [(n["gcm_payload"]["content"], n["gcm_payload"]["content_truncated"]) for n in push_configured.notifications]
    assert texts == [("Good \N{SLIGHTLY SMILING FACE}", False), ("The ending (…)\n", False),
                     ("1. first\n2. second", False), ("[…]\nmy answer", False), ("> only a quote\n", False),
                     ("x" * 200 + "…", True)]
    assert [n["apns_payload"]["alert"]["body"] for n in push_configured.notifications] == [t for t, _c in texts]


def test_server_data_upload(app, org, push_configured, caplog):
    """Does the worker upload the organizations and their role counts (server/analytics) before
    notifying, as the service needs to allow pushing; and is a notification the service then
    refuses (more than 10 people without a plan) logged, not sent?"""
    with_fcm(org, org.hamlet)
    othello = org.client(org.othello)
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="first"))
    settle(app)
    (upload,) = push_configured.analytics
    (realm,) = upload["realms"]
    assert (realm["id"], realm["host"], realm["url"], realm["name"]) == (org.realm.id, "zulip.example",
                                                                      "http://zulip.example", "Zulip Dev")
    assert realm["uuid"] == push_configured.notifications[0]["realm_uuid"]
    (row,) = upload["realmauditlog_rows"]
    # Humans by role (owner, admin, moderator, three members, a guest); bots: Hamlet's and the
    # organization's two system bots.
    assert json.loads(row["extra_data"]) == {"10": {"11": {"100": 1, "200": 1, "300": 1, "400": 3, "600": 1},
                                                    "12": 3}}
    assert len(push_configured.notifications) == 1
    push_configured.humans = {key: 11 for key in push_configured.humans}
    ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]), content="second"))
    settle(app)
    assert len(push_configured.notifications) == 1
    assert "refused by the service" in caplog.text and "signing up for a plan" in caplog.text
