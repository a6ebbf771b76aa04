"""Legacy push registrations (APNs device tokens, FCM registration ids) and test notifications.

As POST /mobile_push/register, everything here needs the push relay (PUSH_RELAY_URL); without
one the answer is PUSH_SERVICE_NOT_CONFIGURED. With one, tokens are stored here and forwarded
to the relay as JSON: POST {relay}/legacy/register and /legacy/unregister with
{"realm_host", "user_id", "token_kind", "token", "appid"}; test notifications go to
POST {relay}/test_notification with {"realm_host", "user_id", "devices": [...]}, each device
{"token_kind", "token"} or {"push_account_id"} for end-to-end encrypted ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json

from chat_appliance.db.connection import write_transaction
from chat_appliance.db.admission import turns
from chat_appliance.lib import safe_fetch
from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import PushDevice, PushDeviceToken
from chat_appliance.actions.push import PushRelayError

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

TOKEN_MAX_LENGTH = 4096


class NoActivePushDeviceError(JsonableError):
    code = "NO_ACTIVE_PUSH_DEVICE"

    def __init__(self):
        super().__init__("No active registered push device")


class InvalidPushDeviceTokenError(JsonableError):
    code = "INVALID_PUSH_DEVICE_TOKEN"

    def __init__(self):
        super().__init__("Device not recognized")


class FailedToConnectBouncerError(JsonableError):
    code = "FAILED_TO_CONNECT_BOUNCER"
    http_status = 502

    def __init__(self):
        super().__init__("Network error while connecting to Zulip push notification service.")


def check_token(kind: Any, token: Any) -> Any:
    """Zulip's token checks: not empty, not too long; an APNs token is hexadecimal."""
    if not token or len(token) > TOKEN_MAX_LENGTH:
        raise JsonableError("Empty or invalid length token")
    if kind == "apns":
        try:
            bytes.fromhex(token)
        except ValueError:
            raise JsonableError("Invalid APNS token") from None
    return token


def post_to_relay(relay: Any, path: str, body: JSONDict, error: Any = PushRelayError) -> None:
    """POST JSON to the relay; any 2xx is success, anything else raises `error`."""
    # Through the one fetch guard, without its address check: the relay is the operator's own
    # setting, and may well live on their private network. Redirects are not followed.
    try:
        with turns.waiting_on_others():
            response = safe_fetch.fetch(relay["url"].rstrip("/") + path, method="POST", data=json.dumps(body).encode(),
                                        headers={"Content-Type": "application/json"}, timeout=relay["timeout"],
                                        allow_private=True)
    except (OSError, ValueError):
        raise error() from None
    if not 200 <= response.status < 300:
        raise error()


def do_add_push_token(user: Any, kind: Any, token: Any, appid: Any, relay: Any) -> None:
    """Forward, then store (a repeat registration is accepted and kept once)."""
    post_to_relay(relay, "/legacy/register", {"realm_host": user.realm.host, "user_id": user.id,
                                              "token_kind": kind, "token": token, "appid": appid})
    with write_transaction():
        PushDeviceToken.insert(user_profile=user, kind=kind, token=token, ios_app_id=appid) \
            .on_conflict_ignore().execute()


def access_push_token(user: Any, kind: Any, token: Any) -> Any:
    """The user's registration of this token, or Zulip's 'Token does not exist'."""
    row = PushDeviceToken.get_or_none((PushDeviceToken.user_profile == user) & (PushDeviceToken.kind == kind)
                                      & (PushDeviceToken.token == token))
    if row is None:
        raise JsonableError("Token does not exist")
    return row


def do_remove_push_token(row: Any, relay: Any) -> None:
    """Tell the relay, then forget the token."""
    user = row.user_profile
    post_to_relay(relay, "/legacy/unregister", {"realm_host": user.realm.host, "user_id": user.id,
                                                "token_kind": row.kind, "token": row.token, "appid": row.ios_app_id})
    with write_transaction():
        row.delete_instance()


def legacy_test_devices(user: Any, token: Any) -> Any:
    """The devices a legacy test notification goes to: the one named, else all of the user's."""
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


def e2ee_test_devices(user: Any, push_account_id: Any) -> Any:
    """The encrypted-push devices a test notification goes to."""
    query = PushDevice.select().where(PushDevice.user_profile == user)
    if push_account_id is not None:
        query = query.where(PushDevice.push_account_id == push_account_id)
    devices = list(query)
    if not devices:
        raise NoActivePushDeviceError()
    return devices


def do_send_test_notification(user: Any, devices: Any, relay: Any) -> None:
    """Ask the relay to send a test notification to these devices."""
    described = [{"push_account_id": d.push_account_id} if isinstance(d, PushDevice)
                 else {"token_kind": d.kind, "token": d.token} for d in devices]
    post_to_relay(relay, "/test_notification", {"realm_host": user.realm.host, "user_id": user.id,
                                                "realm_name": user.realm.name, "devices": described},
                  error=FailedToConnectBouncerError)
