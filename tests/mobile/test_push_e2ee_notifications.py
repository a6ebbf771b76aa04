"""End-to-end encrypted push (Zulip 11/12), which the current mobile app uses with this server:
registration through POST /mobile_push/register as the app sends it, the forwarding of its
sealed token to the push service stand-in (tests/support/push_service_standin.py, which opens
and checks it as Zulip's service does), and notifications that the test decrypts with the app's
key, as the app would, and checks against what the app's parser reads."""

import base64
import json

from nacl.public import PrivateKey

from chat_appliance.models import ClientDevice, Message, database

from ..support.flutter_app import (
    app_client,
    app_register,
    compute_token_id,
    decrypt_notification,
    encrypted_fcm_message,
    notif_payload_problems,
    problems_of,
)
from ..support.helpers import err, get_events, ok, register

FCM_TOKEN = "fcm-registration-token-e2ee"
APNS_TOKEN = "c0ffee00c0ffee01"
APP_ID = "com.zulip.flutter"
REALM_URL = "http://zulip.example"


def settle(app):
    """Until the push worker has handled everything noted so far."""
    app.extensions["chat_appliance"].workers["push_notifications"].wait_idle()


def registered_app(app, org, user, service, token=FCM_TOKEN, **options):
    """The app signed in as `user`, its device registered and its token confirmed by the
    service: (app client, device id, push key bytes, push key id)."""
    client = app_client(org, user)
    device_id = ok(client.register_client_device())["device_id"]
    response, push_key, push_key_id = client.register_e2ee_push(device_id, token, service.bouncer_public_key, **options)
    ok(response)
    settle(app)
    return client, device_id, push_key, push_key_id


def device_state(client, device_id):
    return app_register(client)["devices"][str(device_id)]


def delivered_payloads(service, push_key, kind="fcm"):
    """Every notification the service handed to FCM (or APNs) so far, decrypted with the key."""
    found = []
    for delivery in service.e2ee_delivered:
        if delivery["token_kind"] != kind:
            continue
        if kind == "fcm":
            _key_id, data = encrypted_fcm_message(delivery["fcm_data"])
        else:
            data = delivery["apns_payload"]["encrypted_data"]
        found.append(decrypt_notification(push_key, data))
    return found


def test_registration_events_and_register_state(app, org, push_configured):
    """Does a registration as the app sends it (key and sealed token) answer success at once, go
    to push/e2ee/register as Zulip forwards it, show as device update events (pending, then
    confirmed) and in /register's devices; and are a repeat, a rotated key and a rotated token
    handled as Zulip does?"""
    service = push_configured
    phone = app_client(org, org.hamlet)
    device_id = ok(phone.register_client_device())["device_id"]
    queue_id = register(org.client(org.hamlet), event_types=["device"])["queue_id"]
    # The largest id the app may draw (an unsigned 32-bit integer: beyond PostgreSQL's integer).
    response, push_key, push_key_id = phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key,
                                                               push_key_id=2**32 - 1)
    ok(response)
    settle(app)

    token_id = compute_token_id(FCM_TOKEN)
    (call,) = service.calls_to("push/e2ee/register")
    assert set(call) == {"realm_uuid", "token_id", "bouncer_public_key", "encrypted_push_registration"}
    assert call["token_id"] == token_id and call["bouncer_public_key"] == service.bouncer_public_key
    assert [device["token"] for device in service.e2ee_devices.values()] == [FCM_TOKEN]
    events = get_events(org.client(org.hamlet), queue_id, validate=False)
    stamp = events[0]["push_token_last_updated_timestamp"]
    assert [{k: v for k, v in e.items() if k != "id"} for e in events] == [
        {"type": "device", "op": "update", "device_id": device_id, "push_key_id": push_key_id,
         "pending_push_token_id": token_id, "push_token_last_updated_timestamp": stamp,
         "push_registration_error_code": None},
        {"type": "device", "op": "update", "device_id": device_id, "push_token_id": token_id,
         "pending_push_token_id": None}]
    state = device_state(phone, device_id)
    assert state == {"push_key_id": push_key_id, "push_token_id": token_id, "pending_push_token_id": None,
                     "push_token_last_updated_timestamp": stamp, "push_registration_error_code": None}
    assert problems_of(state, "ClientDevice", "devices") == []

    # The same again: nothing changes, nothing is sent.
    ok(phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key, push_key=push_key,
                                push_key_id=push_key_id)[0])
    settle(app)
    assert len(service.calls_to("push/e2ee/register")) == 1
    last = events[-1]["id"]
    assert get_events(org.client(org.hamlet), queue_id, last_event_id=last, validate=False) == []

    # A rotated key (key fields only), then a rotated token (token fields only).
    response, _new_key, new_key_id = phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key,
                                                              send_token=False)
    ok(response)
    response, _key, _key_id = phone.register_e2ee_push(device_id, "fcm-token-rotated", service.bouncer_public_key,
                                                       send_key=False)
    ok(response)
    settle(app)
    new_token_id = compute_token_id("fcm-token-rotated")
    rotated = get_events(org.client(org.hamlet), queue_id, last_event_id=last, validate=False)
    assert [{k: v for k, v in e.items() if k not in ("id", "push_token_last_updated_timestamp")} for e in rotated] == [
        {"type": "device", "op": "update", "device_id": device_id, "push_key_id": new_key_id},
        {"type": "device", "op": "update", "device_id": device_id, "pending_push_token_id": new_token_id,
         "push_registration_error_code": None},
        {"type": "device", "op": "update", "device_id": device_id, "push_token_id": new_token_id,
         "pending_push_token_id": None}]
    assert device_state(phone, device_id)["push_token_id"] == new_token_id
    assert service.problems == []


def test_registration_refused(app, org, push_configured):
    """Are bad parameters refused with Zulip's texts before anything is kept or sent?"""
    service = push_configured
    phone = app_client(org, org.hamlet)
    device_id = ok(phone.register_client_device())["device_id"]
    othello_device = ok(app_client(org, org.othello).register_client_device())["device_id"]
    good_key = base64.b64encode(bytes([0x31]) + bytes(32)).decode()
    token = {"token_kind": "fcm", "token_id": compute_token_id(FCM_TOKEN),
             "bouncer_public_key": service.bouncer_public_key, "encrypted_push_registration": "c2VhbGVk"}
    hamlet = org.client(org.hamlet)
    err(hamlet.post("mobile_push/register", device_id=othello_device, push_key_id=1, push_key=good_key, **token),
        400, "BAD_REQUEST", "Invalid `device_id`")
    err(hamlet.post("mobile_push/register", device_id=device_id, push_key=good_key), 400, "BAD_REQUEST",
        "Missing parameters: must provide either all push key fields, all token fields, or both.")
    for bad in ("@abcdefg", "abcd", base64.b64encode(bytes([0x32]) + bytes(32)).decode()):
        err(hamlet.post("mobile_push/register", device_id=device_id, push_key_id=1, push_key=bad, **token),
            400, "BAD_REQUEST", "Invalid `push_key`")
    for bad_id in (-1, 2**32):
        err(hamlet.post("mobile_push/register", device_id=device_id, push_key_id=bad_id, push_key=good_key, **token),
            400, "BAD_REQUEST", "Invalid push_key_id: Value error, Not a valid unsigned 32-bit integer")
    err(hamlet.post("mobile_push/register", device_id=device_id, push_key_id=1, push_key=good_key,
                    **{**token, "token_id": "@abcdefg"}), 400, "BAD_REQUEST", "`token_id` is not Base64 encoded")
    err(hamlet.post("mobile_push/register", device_id=device_id, push_key_id=1, push_key=good_key), 400,
        "BAD_REQUEST", "No push registration exists to rotate key for.")
    err(hamlet.post("mobile_push/register", device_id=device_id, **token), 400, "BAD_REQUEST",
        "No push registration exists to rotate token for.")
    err(hamlet.post("mobile_push/register", push_key_id=1, push_key=good_key), 400, "REQUEST_VARIABLE_MISSING")
    err(org.client(org.bot).post("mobile_push/register", device_id=device_id, push_key_id=1, push_key=good_key),
        400, "BAD_REQUEST", "This endpoint does not accept bot requests.")
    # Zulip 11's prototype form (push_account_id, push_public_key): as a server without this push.
    err(hamlet.post("mobile_push/register", push_account_id=5, token_kind="fcm", push_public_key="a2V5",
                    bouncer_public_key="a2V5", encrypted_push_registration="ZW5j"), 400, "PUSH_SERVICE_NOT_CONFIGURED")
    settle(app)
    assert service.calls_to("push/e2ee/register") == []
    assert device_state(phone, device_id)["push_key_id"] is None


def test_service_refusals_reach_the_app(app, org, push_configured):
    """Does the service's refusal of a registration (a wrong public key, an expired request, a
    sealed registration it cannot read) reach the app as push_registration_error_code, and can the
    app then register again; while a registration the service has not answered blocks another?"""
    service = push_configured
    phone = app_client(org, org.hamlet)
    device_id = ok(phone.register_client_device())["device_id"]
    other_key = base64.b64encode(bytes(PrivateKey.generate().public_key)).decode()
    cases = [({"bouncer_public_key": other_key}, "INVALID_BOUNCER_PUBLIC_KEY"),
             ({"timestamp": 1}, "REQUEST_EXPIRED"),
             ({"token_kind": "apns"}, "BAD_REQUEST")]  # an APNs registration without its app id
    for change, code in cases:
        public_key = change.get("bouncer_public_key", service.bouncer_public_key)
        ok(phone.register_e2ee_push(device_id, APNS_TOKEN if "token_kind" in change else FCM_TOKEN, public_key,
                                    token_kind=change.get("token_kind", "fcm"), timestamp=change.get("timestamp"))[0])
        settle(app)
        state = device_state(phone, device_id)
        assert (state["push_registration_error_code"], state["push_token_id"]) == (code, None), change
    assert service.e2ee_devices == {}

    # No answer from the service: the registration stays pending, and a second one waits for it.
    service.fail_next = 100
    ok(phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key)[0])
    settle(app)
    assert device_state(phone, device_id)["pending_push_token_id"] == compute_token_id(FCM_TOKEN)
    err(phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key)[0], 400, "BAD_REQUEST",
        "A registration for the device already in progress.")
    service.fail_next = 0
    with database.connection_context():  # as if the day the service is given had passed
        ClientDevice.update(push_token_last_updated_timestamp=1).where(ClientDevice.id == device_id).execute()
    ok(phone.register_e2ee_push(device_id, FCM_TOKEN, service.bouncer_public_key)[0])
    settle(app)
    assert device_state(phone, device_id)["push_token_id"] == compute_token_id(FCM_TOKEN)


def test_notifications_decrypt_with_the_apps_key(app, org, push_configured):
    """Does a direct message reach the registered phone encrypted with its own push key, in the
    shape the service hands to FCM, decrypting (with the app's cipher) to the payload the app
    parses; and do a channel mention, the message being read, and a notified message's deletion
    send what Zulip sends?"""
    service = push_configured
    phone, device_id, push_key, push_key_id = registered_app(app, org, org.hamlet, service)
    othello = org.client(org.othello)
    dm = ok(othello.post("messages", type="private", to=json.dumps([org.hamlet.id]),
                         content="**Hello** there"))["id"]
    settle(app)
    (notify,) = service.calls_to("push/e2ee/notify")
    assert set(notify) == {"realm_uuid", "push_requests"}
    (push_request,) = notify["push_requests"]
    assert push_request["token_id"] == compute_token_id(FCM_TOKEN) and push_request["fcm_priority"] == "high"
    (delivery,) = service.e2ee_delivered
    assert delivery["token"] == FCM_TOKEN and delivery["fcm_data"]["push_key_id"] == str(push_key_id)
    assert FCM_TOKEN not in json.dumps(notify) and "Hello" not in json.dumps(notify)
    (payload,) = delivered_payloads(service, push_key)
    with database.connection_context():
        date_sent = Message.get_by_id(dm).date_sent
    assert payload == {"realm_url": REALM_URL, "realm_name": "Zulip Dev", "user_id": org.hamlet.id,
                       "sender_id": org.othello.id, "recipient_type": "direct",
                       "recipient_user_ids": sorted([org.hamlet.id, org.othello.id]), "type": "message",
                       "message_id": dm, "time": date_sent, "content": "Hello there",
                       "sender_full_name": "Othello, the Moor of Venice",
                       "sender_avatar_url": payload["sender_avatar_url"]}
    assert payload["sender_avatar_url"].startswith("https://")
    assert notif_payload_problems(payload) == []

    mention = ok(othello.post("messages", type="stream", to="Denmark", topic="castle",
                              content="@**King Hamlet** look"))["id"]
    settle(app)
    channel = delivered_payloads(service, push_key)[-1]
    assert {k: channel[k] for k in ("type", "message_id", "recipient_type", "channel_name", "topic", "content")} == \
        {"type": "message", "message_id": mention, "recipient_type": "channel", "channel_name": "Denmark",
         "topic": "castle", "content": "@King Hamlet look"}
    assert isinstance(channel["channel_id"], int) and notif_payload_problems(channel) == []

    ok(org.client(org.hamlet).post("messages/flags", messages=json.dumps([dm]), op="add", flag="read"))
    settle(app)
    removal = delivered_payloads(service, push_key)[-1]
    assert removal == {"realm_url": REALM_URL, "realm_name": "Zulip Dev", "user_id": org.hamlet.id,
                       "type": "remove", "message_ids": [dm]}
    assert service.e2ee_delivered[-1]["fcm_priority"] == "normal" and notif_payload_problems(removal) == []

    ok(othello.delete(f"messages/{mention}"))
    settle(app)
    assert delivered_payloads(service, push_key)[-1]["message_ids"] == [mention]
    assert len(service.e2ee_delivered) == 4 and service.problems == []
    assert device_state(phone, device_id)["push_token_id"] == compute_token_id(FCM_TOKEN)


def test_ios_device(app, org, push_configured):
    """Does an iOS registration (APNs token and app id) get Zulip's APNs request: the encrypted
    payload beside a placeholder alert the app's notification service replaces, an alert push at
    priority 10, and a background push at priority 5 for a removal?"""
    service = push_configured
    _phone, _device_id, push_key, push_key_id = registered_app(app, org, org.hamlet, service, token=APNS_TOKEN,
                                                               token_kind="apns", ios_app_id=APP_ID)
    assert list(service.e2ee_devices.values()) == [{"token": APNS_TOKEN, "token_kind": "apns", "ios_app_id": APP_ID}]
    dm = ok(org.client(org.othello).post("messages", type="private", to=json.dumps([org.hamlet.id]),
                                         content="to the phone"))["id"]
    settle(app)
    ok(org.client(org.hamlet).post("messages/flags", messages=json.dumps([dm]), op="add", flag="read"))
    settle(app)
    alert, background = service.e2ee_delivered
    assert alert["http_headers"] == {"apns_priority": 10, "apns_push_type": "alert"}
    assert background["http_headers"] == {"apns_priority": 5, "apns_push_type": "background"}
    assert alert["apns_payload"]["aps"] == {"mutable-content": 1, "alert": {"title": "New notification"}}
    assert alert["apns_payload"]["push_key_id"] == push_key_id
    message, removal = delivered_payloads(service, push_key, kind="apns")
    assert (message["type"], message["message_id"], message["content"]) == ("message", dm, "to the phone")
    assert (removal["type"], removal["message_ids"]) == ("remove", [dm])
    assert notif_payload_problems(message) == [] and service.problems == []


def test_e2ee_test_notification(app, org, push_configured):
    """Does POST /mobile_push/e2ee/test_notification send Zulip's test payload to the device, answer
    NO_ACTIVE_PUSH_DEVICE without one (or when the service no longer knows its token, which the
    device then loses, with an event), and 502 when the service fails?"""
    service = push_configured
    phone, device_id, push_key, _key_id = registered_app(app, org, org.hamlet, service)
    hamlet = org.client(org.hamlet)
    err(org.client(org.othello).post("mobile_push/e2ee/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE",
        "No active registered push device")
    ok(hamlet.post("mobile_push/e2ee/test_notification", device_id=device_id))
    (payload,) = delivered_payloads(service, push_key)
    assert payload == {"realm_url": REALM_URL, "realm_name": "Zulip Dev", "user_id": org.hamlet.id, "type": "test",
                       "time": payload["time"]}
    err(hamlet.post("mobile_push/e2ee/test_notification", device_id=device_id + 100), 400, "NO_ACTIVE_PUSH_DEVICE")
    service.fail_next = 1
    err(hamlet.post("mobile_push/e2ee/test_notification"), 502, "INTERNAL_SERVER_ERROR_ON_BOUNCER",
        "Internal server error on Zulip push notification service, retry later.")

    queue_id = register(hamlet, event_types=["device"])["queue_id"]
    service.e2ee_devices.clear()  # the token expired at FCM
    err(hamlet.post("mobile_push/e2ee/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE")
    events = get_events(hamlet, queue_id, validate=False)
    assert [(e["device_id"], e["push_token_id"]) for e in events] == [(device_id, None)]
    assert device_state(phone, device_id)["push_token_id"] is None


def test_legacy_and_e2ee_devices_both_notified(app, org, push_configured):
    """Does someone with an old app's FCM token and a current app's registered device get the
    plaintext notification on the first and the encrypted one on the second, as from Zulip?"""
    service = push_configured
    _phone, _device_id, push_key, _key_id = registered_app(app, org, org.hamlet, service)
    ok(org.client(org.hamlet).post("users/me/android_gcm_reg_id", token="old-app-token"))
    ok(org.client(org.othello).post("messages", type="private", to=json.dumps([org.hamlet.id]), content="both"))
    settle(app)
    (legacy,) = service.notifications
    assert legacy["android_devices"] == ["old-app-token"] and legacy["gcm_payload"]["content"] == "both"
    assert [p["content"] for p in delivered_payloads(service, push_key)] == ["both"]
