"""End-to-end encrypted push registrations: stored per user and push_account_id, forwarded
to the push relay."""

from __future__ import annotations

from typing import Any

import json

from chat_appliance.db.connection import write_transaction
from chat_appliance.db.admission import turns
from chat_appliance.lib import safe_fetch
from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import PushDevice, now


class PushServiceNotConfiguredError(JsonableError):
    """No push relay is configured (PUSH_RELAY_URL unset)."""

    code = "PUSH_SERVICE_NOT_CONFIGURED"

    def __init__(self):
        super().__init__("Server is not configured to use push notification service.")


class PushRelayError(JsonableError):
    """The relay could not be reached or refused the registration: a gateway failure."""

    code = "BAD_GATEWAY"
    http_status = 502

    def __init__(self):
        super().__init__("Network error while connecting to Zulip push notification service.")


def forward_registration(relay_url: Any, timeout: float, user: Any, registration: Any) -> None:
    """POST the registration as JSON to {relay_url}/register.

    Body: {"realm_host", "user_id", "push_account_id", "token_kind", "bouncer_public_key",
    "encrypted_push_registration"}. The relay decrypts encrypted_push_registration with the
    private half of bouncer_public_key to learn the device token; push_public_key stays here,
    since this server encrypts notification payloads for the device itself. Any 2xx answer is
    success; anything else (or no answer) raises PushRelayError.
    """
    body = {
        "realm_host": user.realm.host,
        "user_id": user.id,
        "push_account_id": registration["push_account_id"],
        "token_kind": registration["token_kind"],
        "bouncer_public_key": registration["bouncer_public_key"],
        "encrypted_push_registration": registration["encrypted_push_registration"],
    }
    # Through the one fetch guard, without its address check: the relay is the operator's own
    # setting, and may well live on their private network. Redirects are not followed.
    try:
        with turns.waiting_on_others():
            response = safe_fetch.fetch(relay_url.rstrip("/") + "/register", method="POST", data=json.dumps(body).encode(),
                                        headers={"Content-Type": "application/json"}, timeout=timeout, allow_private=True)
    except (OSError, ValueError):
        raise PushRelayError() from None
    if not 200 <= response.status < 300:
        raise PushRelayError()


def do_register_push_device(user: Any, registration: Any, *, relay_url: Any, timeout: float) -> Any:
    """Forward to the relay, then store (a repeat registration for the same push_account_id
    replaces the earlier one). Nothing is stored when the relay refuses."""
    forward_registration(relay_url, timeout, user, registration)
    with write_transaction():
        device = PushDevice.get_or_none((PushDevice.user_profile == user)
                                        & (PushDevice.push_account_id == registration["push_account_id"]))
        if device is None:
            device = PushDevice(user_profile=user, push_account_id=registration["push_account_id"])
        for key in ("token_kind", "push_public_key", "bouncer_public_key", "encrypted_push_registration"):
            setattr(device, key, registration[key])
        device.date_updated = now()
        device.save()
    return device
