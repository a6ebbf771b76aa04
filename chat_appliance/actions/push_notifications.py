"""Mobile push devices, registered through Zulip's Mobile Push Notification Service
(clients/push_service.py).

Device tokens of older apps: the app registers its FCM registration id
(`users/me/android_gcm_reg_id`) or APNs device token (`users/me/apns_device_token`); this server
forwards it to the service (push/register) and keeps a copy, as a Zulip server does; removal
forwards push/unregister. A test notification asks the service to notify the person's devices
(push/test_notification). The current app (talking to a server of feature level 468 or later)
registers a client device with its push key and sealed token instead, for end-to-end encrypted
notifications (actions/push_devices.py).

The notifications themselves are sent off the request path by the push worker
(workers/push_notifications.py).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from chat_appliance.clients import push_service
from chat_appliance.clients.push_service import PushService, Recipient
from chat_appliance.db.admission import turns
from chat_appliance.db.connection import write_transaction
from chat_appliance.lib.errors import (
    FailedToConnectBouncerError,
    InvalidPushDeviceTokenError,
    JsonableError,
    NoActivePushDeviceError,
    PushServiceRefusedError,
    PushServiceRetryLaterError,
)
from chat_appliance.models import PushDeviceToken, Realm, UserProfile

log = logging.getLogger(__name__)

TOKEN_MAX_LENGTH = 4096
USER_AGENT = "ZulipServer/11.0 (chat-appliance)"


def check_token(kind: str, token: str) -> str:
    """Zulip's token checks: not empty, not too long; an APNs token is hexadecimal."""
    if not token or len(token) > TOKEN_MAX_LENGTH:
        raise JsonableError("Empty or invalid length token")
    if kind == "apns":
        try:
            bytes.fromhex(token)
        except ValueError:
            raise JsonableError("Invalid APNS token") from None
    return token


def recipient_of(user: UserProfile, realm: Realm, service: PushService) -> Recipient:
    """Whom a notification or registration is for, as the service knows them."""
    return Recipient(user_id=user.id, user_uuid=push_service.derived_uuid(service.org_id, "user", user.id),
                     realm_id=realm.id, realm_uuid=push_service.derived_uuid(service.org_id, "realm", realm.id),
                     realm_url=realm.url, realm_name=realm.name, server=realm.host)


def identity(recipient: Recipient, service: PushService) -> dict[str, Any]:
    """The fields naming a user in push/register and push/unregister (Zulip sends its own org id
    as server_uuid too)."""
    return {"server_uuid": service.org_id, "user_uuid": recipient.user_uuid, "user_id": recipient.user_id,
            "realm_uuid": recipient.realm_uuid}


def call_service(service: PushService, method: str, endpoint: str, data: Mapping[str, Any], *,
                 json_body: bool = False) -> dict[str, Any]:
    """A call made while a request waits: the request's database turn is given up meanwhile. The
    service refusing this server's own credentials is the operator's problem, logged; the person
    gets the gateway error, not the service's words about the server's key."""
    try:
        with turns.waiting_on_others():
            return push_service.send(service, method, endpoint, data, json_body=json_body, user_agent=USER_AGENT)
    except PushServiceRefusedError as error:
        if error.service_code != "INVALID_ZULIP_SERVER":
            raise
        log.error("the push notification service refused this server's credentials: %s", error.msg)
        raise PushServiceRetryLaterError(error.msg) from None


def do_add_push_token(user: UserProfile, kind: str, token: str, appid: str | None, service: PushService) -> None:
    """Forward the token to the service (push/register), then keep it (once)."""
    recipient = recipient_of(user, user.realm, service)
    call_service(service, "POST", "push/register", {**identity(recipient, service), "token": token,
                                                    "token_kind": push_service.TOKEN_KINDS[kind],
                                                    "ios_app_id": appid})
    with write_transaction():
        PushDeviceToken.insert(user_profile=user, kind=kind, token=token, ios_app_id=appid) \
            .on_conflict_ignore().execute()


def access_push_token(user: UserProfile, kind: str, token: str) -> PushDeviceToken:
    """The user's registration of this token, or Zulip's 'Token does not exist'."""
    row = PushDeviceToken.get_or_none((PushDeviceToken.user_profile == user) & (PushDeviceToken.kind == kind)
                                      & (PushDeviceToken.token == token))
    if row is None:
        raise JsonableError("Token does not exist")
    return row


def do_remove_push_token(row: PushDeviceToken, service: PushService) -> None:
    """Forget the token here, then tell the service (push/unregister). A token the service no
    longer knows is gone there already: that is not an error here."""
    user = row.user_profile
    with write_transaction():
        row.delete_instance()
    recipient = recipient_of(user, user.realm, service)
    try:
        call_service(service, "POST", "push/unregister", {**identity(recipient, service), "token": row.token,
                                                          "token_kind": push_service.TOKEN_KINDS[row.kind]})
    except PushServiceRefusedError as error:
        log.info("push/unregister for user %s: %s", user.id, error.msg)


def legacy_test_devices(user: UserProfile, token: str | None) -> list[PushDeviceToken]:
    """The devices a test notification goes to: the one named, else all of the user's."""
    query = PushDeviceToken.select().where(PushDeviceToken.user_profile == user)
    if token is not None:
        devices = list(query.where(PushDeviceToken.token == token))
        if not devices:
            raise InvalidPushDeviceTokenError()
        return devices
    devices = list(query)
    if not devices:
        raise NoActivePushDeviceError()
    return devices


def do_send_test_notification(user: UserProfile, devices: list[PushDeviceToken], service: PushService) -> None:
    """push/test_notification for each device (the service words the notification itself)."""
    recipient = recipient_of(user, user.realm, service)
    for device in devices:
        body = {"token": device.token, "token_kind": push_service.TOKEN_KINDS[device.kind],
                "user_id": recipient.user_id, "user_uuid": recipient.user_uuid,
                "realm_uuid": recipient.realm_uuid, "base_payload": push_service.base_payload(recipient)}
        try:
            call_service(service, "POST", "push/test_notification", body, json_body=True)
        except PushServiceRetryLaterError:
            raise FailedToConnectBouncerError() from None
        except PushServiceRefusedError as error:
            if error.service_code == "INVALID_REMOTE_PUSH_DEVICE_TOKEN":
                raise InvalidPushDeviceTokenError() from None
            raise
