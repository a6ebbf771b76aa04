"""End-to-end encrypted push notifications, as Zulip 11/12 sends them (feature level 468 on).

The app registers a device (POST /register_client_device), then gives this server two things
through POST /mobile_push/register:

- a push key: one tag byte naming the cryptosystem (0x31: libsodium's secretbox, XSalsa20 and
  Poly1305) followed by its 32-byte secret key, base64; and the key's id, an unsigned 32-bit
  integer the app chose. Notifications are encrypted with the key, and carry its id so that the
  app finds the key again. The push service, FCM and APNs see only ciphertext.
- its FCM or APNs token, sealed (libsodium's crypto_box_seal) to the push service's public key,
  which this server cannot open: it forwards the sealed registration to the service
  (push/e2ee/register) and names the token afterwards only by its token id, the first 8 bytes of
  the token's SHA-256, base64.

A notification is then a JSON object (the "plaintext" the app parses, lib/api/notifications.dart
in zulip-flutter) encrypted with secretbox: 24 random nonce bytes, then the ciphertext, base64;
sent to push/e2ee/notify as one push request per device.

Nothing here knows Flask or the tables: callers pass what the payloads need.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import orjson

from chat_appliance.lib.errors import JsonableError
from chat_appliance.clients.push_service import PushMessage, Recipient, mobile_push_content, truncate_content

# The push key's first byte: which cryptosystem the rest is a key for. Zulip defines only this one.
PUSH_KEY_TAG_SECRETBOX = 0x31
SECRETBOX_KEY_BYTES = 32  # libsodium's crypto_secretbox_KEYBYTES
PUSH_KEY_LENGTH = 1 + SECRETBOX_KEY_BYTES
# push_key_id is an unsigned 32-bit integer (the app draws it at random).
MAX_PUSH_KEY_ID = 2**32 - 1
# A token id is the first 8 bytes of the token's SHA-256; Zulip keeps it as a signed 64-bit integer.
TOKEN_ID_BYTES = 8
# How long a registration may stay pending at the service before the app may start another: Zulip
# gives up on a registration after a day ("a day is longer than any minor outage").
REGISTRATION_LIVENESS_SECONDS = 24 * 60 * 60
# What the APNs payload shows if the app's notification service extension cannot decrypt it.
APNS_PLACEHOLDER_APS = {"mutable-content": 1, "alert": {"title": "New notification"}}


def check_push_key(value: str) -> str:
    """A push key as the app sends it: standard base64 of the tag byte 0x31 and 32 key bytes.
    Zulip's one answer to anything else: "Invalid `push_key`"."""
    try:
        key = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise JsonableError("Invalid `push_key`") from None
    if len(key) != PUSH_KEY_LENGTH or key[0] != PUSH_KEY_TAG_SECRETBOX:
        raise JsonableError("Invalid `push_key`")
    return base64.b64encode(key).decode()


def check_push_key_id(var_name: str, number: int) -> int:
    """An unsigned 32-bit integer, with Zulip's (pydantic's) wording when it is not."""
    if not 0 <= number <= MAX_PUSH_KEY_ID:
        raise JsonableError(f"Invalid {var_name}: Value error, Not a valid unsigned 32-bit integer")
    return number


def check_token_id(value: str) -> str:
    """A token id, normalised as Zulip stores and reports it: the base64 of its 8 bytes read as
    a signed 64-bit integer (what the app computes, so the app's value comes back unchanged)."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise JsonableError("`token_id` is not Base64 encoded") from None
    if not 0 < len(raw) <= TOKEN_ID_BYTES:
        raise JsonableError("Invalid `token_id`")
    number = int.from_bytes(raw, byteorder="big", signed=True)
    return base64.b64encode(number.to_bytes(TOKEN_ID_BYTES, byteorder="big", signed=True)).decode()


def encrypt(payload: dict[str, Any], push_key: str) -> str:
    """The payload as JSON, sealed with the device's secretbox key: base64 of the 24-byte nonce
    followed by the ciphertext (the packing the app's decryptNotification unpacks)."""
    # Loaded by the first notification (the push worker), not with the server: libsodium's
    # binding takes tens of milliseconds to load.
    from nacl.secret import SecretBox

    key = base64.b64decode(push_key)
    assert key[0] == PUSH_KEY_TAG_SECRETBOX and len(key) == PUSH_KEY_LENGTH
    sealed = SecretBox(key[1:]).encrypt(orjson.dumps(payload))
    return base64.b64encode(bytes(sealed)).decode()


# ---- The plaintext payloads (Zulip's "for_legacy_clients=False" shapes) ----

def base_payload(recipient: Recipient) -> dict[str, Any]:
    """Whom every payload is for: the app checks realm_url and user_id against the account the
    push key belongs to."""
    return {"realm_url": recipient.realm_url, "realm_name": recipient.realm_name, "user_id": recipient.user_id}


def message_payload(recipient: Recipient, message: PushMessage,
                    mentioned_group: tuple[int, str] | None = None) -> dict[str, Any]:
    """A new message: sender, where it was sent (channel and topic, or every participant of the
    direct message, the recipient and the sender included), its id, time and text."""
    data = base_payload(recipient)
    data["sender_id"] = message.sender_id
    if mentioned_group is not None:
        data.update(mentioned_user_group_id=mentioned_group[0], mentioned_user_group_name=mentioned_group[1])
    if message.stream_id is not None:
        data.update(recipient_type="channel", channel_name=message.stream_name, channel_id=message.stream_id,
                    topic=message.topic)
    else:
        participants = set(message.group_user_ids) or {recipient.user_id, message.sender_id}
        data.update(recipient_type="direct", recipient_user_ids=sorted(participants))
    content, _truncated = truncate_content(mobile_push_content(message.rendered_content))
    data.update(type="message", message_id=message.id, time=message.date_sent, content=content,
                sender_full_name=message.sender_full_name, sender_avatar_url=message.sender_avatar_url)
    return data


def remove_payload(recipient: Recipient, message_ids: list[int]) -> dict[str, Any]:
    """Take these messages' notifications off the phone."""
    return {**base_payload(recipient), "type": "remove", "message_ids": list(message_ids)}


def test_payload(recipient: Recipient, now: int) -> dict[str, Any]:
    """The test notification (POST /mobile_push/e2ee/test_notification)."""
    return {**base_payload(recipient), "type": "test", "time": now}


# ---- What goes to the service ----

@dataclass(frozen=True)
class E2EEDevice:
    """A device registered at the service, as a notification to it needs it."""

    device_id: int
    push_key: str
    push_key_id: int
    token_id: str
    token_kind: str  # "fcm" or "apns"


def push_request(device: E2EEDevice, payload: dict[str, Any]) -> dict[str, Any]:
    """One device's entry of push/e2ee/notify's push_requests. A removal is not urgent (FCM
    priority normal, an APNs background push at priority 5); anything else is."""
    removal = payload["type"] == "remove"
    body = {"push_key_id": device.push_key_id, "encrypted_data": encrypt(payload, device.push_key)}
    if device.token_kind == "apns":
        return {"token_id": device.token_id,
                "http_headers": {"apns_priority": 5 if removal else 10,
                                 "apns_push_type": "background" if removal else "alert"},
                "payload": {**body, "aps": APNS_PLACEHOLDER_APS}}
    return {"token_id": device.token_id, "fcm_priority": "normal" if removal else "high", "payload": body}


def notify_body(realm_uuid: str, devices: list[E2EEDevice], payload: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of push/e2ee/notify: the organization, and a push request per device (each
    encrypted with that device's own key)."""
    return {"realm_uuid": realm_uuid, "push_requests": [push_request(device, payload) for device in devices]}


def registration_request(realm_uuid: str, token_id: str, bouncer_public_key: str,
                         encrypted_push_registration: str) -> dict[str, str]:
    """The form fields of push/e2ee/register: the app's sealed registration, passed on as is."""
    return {"realm_uuid": realm_uuid, "token_id": token_id, "bouncer_public_key": bouncer_public_key,
            "encrypted_push_registration": encrypted_push_registration}
