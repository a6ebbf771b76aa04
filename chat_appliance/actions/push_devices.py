"""End-to-end encrypted push registration of client devices (POST /mobile_push/register), as
Zulip 12 does it (clients/push_e2ee.py has the protocol).

The app sends its push key, its token (sealed to the push service), or both. The key is kept
here. The token registration is forwarded to the service by the push worker, not while the app
waits (Zulip queues it too: the phone's network comes and goes, the server's does not): until the
service confirms, the device's token id is `pending_push_token_id`; then it becomes
`push_token_id`, or the service's refusal becomes `push_registration_error_code`. Each change
reaches the user's clients as a `device` update event with the fields that changed, and
/register's `devices` shows the current state.
"""

from __future__ import annotations

import logging
from typing import Any

from chat_appliance.clients import push_e2ee, push_service
from chat_appliance.clients.push_service import PushService
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish, publish_internal
from chat_appliance.lib import event_catalogue
from chat_appliance.lib.errors import (
    FailedToConnectBouncerError,
    InternalBouncerServerError,
    JsonableError,
    NoActivePushDeviceError,
    PushNotificationAdminActionRequiredError,
    PushServiceRefusedError,
    PushServiceRetryLaterError,
)
from chat_appliance.models import ClientDevice, UserProfile
from chat_appliance.models.base import now

log = logging.getLogger(__name__)

# Refusals that the server's operator must fix (credentials, the organizations not uploaded, the
# plan): Zulip keeps retrying those rather than telling the app its registration failed.
OPERATOR_ERRORS = {"INVALID_ZULIP_SERVER", "MISSING_REMOTE_REALM", "PUSH_NOTIFICATIONS_DISALLOWED"}
# The internal event telling the push worker to forward a registration.
REGISTRATION_JOB = "push_device_registration"


def access_client_device(user: UserProfile, device_id: int) -> ClientDevice:
    """One of the user's own devices, else Zulip's "Invalid `device_id`"."""
    device = ClientDevice.get_or_none((ClientDevice.id == device_id) & (ClientDevice.user_profile == user))
    if device is None:
        raise JsonableError("Invalid `device_id`")
    return device


def device_event(device: ClientDevice, **fields: Any) -> None:
    """A `device` update event to the user's clients, with only the fields that changed."""
    publish(event_catalogue.device_update(device.id, **fields), [device.user_profile_id])


def registration_in_progress(device: ClientDevice) -> bool:
    """A token registration sent to the service and not yet answered. One older than the
    liveness limit no longer counts (Zulip gives up on it after a day), so that a registration
    lost to a long outage does not lock the device out."""
    return (device.push_registration_error_code is None and device.pending_push_token_id is not None
            and now() - (device.push_token_last_updated_timestamp or 0) < push_e2ee.REGISTRATION_LIVENESS_SECONDS)


def check_register_push_device(user: UserProfile, device_id: int, *, push_key: str | None, push_key_id: int | None,
                               token_kind: str | None, token_id: str | None, bouncer_public_key: str | None,
                               encrypted_push_registration: str | None) -> None:
    """Zulip's three forms: key and token (a first registration, or a new one), key only (a
    rotated key), token only (a rotated token). Each is idempotent: sent again unchanged, it
    changes nothing and sends nothing."""
    device = access_client_device(user, device_id)
    key_given = push_key is not None and push_key_id is not None
    token_given = None not in (token_kind, token_id, bouncer_public_key, encrypted_push_registration)
    if not (key_given or token_given):
        raise JsonableError("Missing parameters: must provide either all push key fields, all token fields, or both.")
    if key_given and not token_given:
        if device.push_key_id is None:
            raise JsonableError("No push registration exists to rotate key for.")
        assert push_key is not None and push_key_id is not None
        do_rotate_push_key(device, push_e2ee.check_push_key(push_key), push_key_id)
        return
    if registration_in_progress(device):
        raise JsonableError("A registration for the device already in progress.")
    assert token_id is not None and token_kind is not None
    token_id = push_e2ee.check_token_id(token_id)
    if not key_given:
        if device.push_key_id is None:
            raise JsonableError("No push registration exists to rotate token for.")
        if device.push_registration_error_code is None and device.push_token_id == token_id:
            return
        do_rotate_token(device, token_id)
    else:
        assert push_key is not None and push_key_id is not None
        push_key = push_e2ee.check_push_key(push_key)
        if (device.push_registration_error_code is None and device.push_key_id == push_key_id
                and device.push_key == push_key and device.push_token_id == token_id
                and device.push_token_kind == token_kind):
            return
        do_register_push_device(device, push_key, push_key_id, token_kind, token_id)
    # The worker forwards the sealed registration once this is committed.
    publish_internal({"type": REGISTRATION_JOB, "device_id": device.id, "token_id": token_id,
                      "bouncer_public_key": bouncer_public_key,
                      "encrypted_push_registration": encrypted_push_registration}, [user.id])


def do_register_push_device(device: ClientDevice, push_key: str, push_key_id: int, token_kind: str,
                            token_id: str) -> None:
    """Keep the key, and the token id as pending until the service confirms it."""
    when = now()
    with write_transaction():
        ClientDevice.update(push_key=push_key, push_key_id=push_key_id, push_token_kind=token_kind,
                            pending_push_token_id=token_id, push_token_last_updated_timestamp=when,
                            push_registration_error_code=None).where(ClientDevice.id == device.id).execute()
    device_event(device, push_key_id=push_key_id, pending_push_token_id=token_id,
                 push_token_last_updated_timestamp=when, push_registration_error_code=None)


def do_rotate_push_key(device: ClientDevice, push_key: str, push_key_id: int) -> None:
    """A new key for the registered device (the app rotates its key monthly). The app forgets
    its older keys once the server reports the new key's id."""
    if device.push_key_id == push_key_id and device.push_key == push_key:
        return
    with write_transaction():
        ClientDevice.update(push_key=push_key, push_key_id=push_key_id).where(ClientDevice.id == device.id).execute()
    device_event(device, push_key_id=push_key_id)


def do_rotate_token(device: ClientDevice, token_id: str) -> None:
    """A new FCM/APNs token for the registered device, pending until the service confirms it."""
    when = now()
    with write_transaction():
        ClientDevice.update(pending_push_token_id=token_id, push_token_last_updated_timestamp=when,
                            push_registration_error_code=None).where(ClientDevice.id == device.id).execute()
    device_event(device, pending_push_token_id=token_id, push_token_last_updated_timestamp=when,
                 push_registration_error_code=None)


def forward_registration(service: PushService, job: dict[str, Any], user_agent: str) -> None:
    """push/e2ee/register for a pending registration, and its outcome on the device. A device
    removed, or registered again meanwhile, is left alone. Raises PushServiceRetryLaterError when
    it may work later (no answer, a 5xx, or a refusal the operator must fix)."""
    device = ClientDevice.get_or_none(ClientDevice.id == job["device_id"])
    if device is None or device.pending_push_token_id != job["token_id"]:
        return
    user = UserProfile.get_by_id(device.user_profile_id)
    realm_uuid = push_service.derived_uuid(service.org_id, "realm", user.realm_id)
    fields = push_e2ee.registration_request(realm_uuid, job["token_id"], job["bouncer_public_key"],
                                            job["encrypted_push_registration"])
    try:
        push_service.send(service, "POST", "push/e2ee/register", fields, user_agent=user_agent)
    except PushServiceRefusedError as error:
        if error.service_code in OPERATOR_ERRORS:
            log.error("Push device registration request for device_id=%s failed: %s", device.id, error.msg)
            raise PushServiceRetryLaterError(error.msg) from None
        record_registration_failure(device, job["token_id"], error.service_code or "BAD_REQUEST")
        return
    with write_transaction():
        updated = ClientDevice.update(push_token_id=job["token_id"], pending_push_token_id=None).where(
            (ClientDevice.id == device.id) & (ClientDevice.pending_push_token_id == job["token_id"])).execute()
    if updated:
        device_event(device, push_token_id=job["token_id"], pending_push_token_id=None)


def record_registration_failure(device: ClientDevice, token_id: str, error_code: str) -> None:
    """The service refused the registration for good: the app sees the code and registers again."""
    if error_code == "REQUEST_EXPIRED":
        # The registration waited a day for the service: an outage between this server and it.
        log.error("Push registration request for device_id=%s expired.", device.id)
    with write_transaction():
        updated = ClientDevice.update(push_registration_error_code=error_code).where(
            (ClientDevice.id == device.id) & (ClientDevice.pending_push_token_id == token_id)).execute()
    if updated:
        device_event(device, push_registration_error_code=error_code)


def registered_devices(user_ids: list[int]) -> dict[int, list[push_e2ee.E2EEDevice]]:
    """The devices of these people that the service can reach: a key and a confirmed token."""
    found: dict[int, list[push_e2ee.E2EEDevice]] = {}
    rows = ClientDevice.select().where(ClientDevice.user_profile.in_(user_ids)
                                       & ClientDevice.push_token_id.is_null(False)
                                       & ClientDevice.push_key.is_null(False)).order_by(ClientDevice.id)
    for row in rows:
        found.setdefault(row.user_profile_id, []).append(push_e2ee.E2EEDevice(
            device_id=row.id, push_key=row.push_key, push_key_id=row.push_key_id, token_id=row.push_token_id,
            token_kind=row.push_token_kind or "fcm"))
    return found


def forget_tokens(user_id: int, token_ids: list[str]) -> None:
    """Tokens the service says are gone (expired, or unknown to it): the devices no longer have
    one, and the app, told so, registers its token again."""
    with write_transaction():
        rows = list(ClientDevice.select().where((ClientDevice.user_profile == user_id)
                                                & ClientDevice.push_token_id.in_(token_ids)))
        ClientDevice.update(push_token_id=None).where(ClientDevice.id.in_([row.id for row in rows])).execute()
        for row in rows:
            device_event(row, push_token_id=None)


# ---- Notifications ----

def send_e2ee_notification(service: PushService, user: UserProfile, devices: list[push_e2ee.E2EEDevice],
                           payload: dict[str, Any], user_agent: str) -> dict[str, Any]:
    """push/e2ee/notify for these devices of one person, each request encrypted with its
    device's key; tokens the service reports gone are forgotten. Returns the service's answer;
    raises what push_service.send raises."""
    realm_uuid = push_service.derived_uuid(service.org_id, "realm", user.realm_id)
    answer = push_service.send(service, "POST", "push/e2ee/notify", push_e2ee.notify_body(realm_uuid, devices, payload),
                               json_body=True, user_agent=user_agent)
    gone = [token_id for token_id in answer.get("delete_token_ids") or [] if isinstance(token_id, str)]
    if gone:
        log.info("clearing push_token_id of user %s's devices with token ids %s, as the service asks", user.id,
                 sorted(gone))
        forget_tokens(user.id, gone)
    status = answer.get("realm_push_status")
    if isinstance(status, dict) and status.get("can_push") is False:
        log.warning("the push notification service says organization %s may not push", user.realm_id)
    return answer


def do_send_e2ee_test_notification(user: UserProfile, device_id: int | None, service: PushService,
                                   user_agent: str) -> None:
    """The test notification, to the one device named or to all the user's registered ones,
    sent while the request waits (the app shows the outcome)."""
    devices = registered_devices([user.id]).get(user.id, [])
    if device_id is not None:
        devices = [device for device in devices if device.device_id == device_id]
    if not devices:
        raise NoActivePushDeviceError()
    realm = user.realm
    recipient = push_service.Recipient(
        user_id=user.id, user_uuid=push_service.derived_uuid(service.org_id, "user", user.id), realm_id=realm.id,
        realm_uuid=push_service.derived_uuid(service.org_id, "realm", realm.id), realm_url=realm.url,
        realm_name=realm.name, server=realm.host)
    try:
        answer = send_e2ee_notification(service, user, devices, push_e2ee.test_payload(recipient, now()), user_agent)
    except PushServiceRetryLaterError as error:
        if error.server_error:
            raise InternalBouncerServerError() from None
        raise FailedToConnectBouncerError() from None
    except PushServiceRefusedError as error:
        if error.service_code in OPERATOR_ERRORS:
            log.error("Sending E2EE test push notification for user_id=%s failed: %s", user.id, error.msg)
            raise PushNotificationAdminActionRequiredError() from None
        raise
    if len(answer.get("delete_token_ids") or []) >= len(devices):
        # The service knows none of them: nothing was delivered.
        raise NoActivePushDeviceError()
