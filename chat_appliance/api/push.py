"""Push: POST /mobile_push/register (end-to-end encrypted push devices)."""

import base64
import binascii

from flask import Blueprint, current_app

from chat_appliance.actions.push import PushServiceNotConfiguredError, do_register_push_device
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import ParamError, check_int, check_string, one_of

bp = Blueprint("push", __name__)


def check_base64(var_name, value):
    """RFC 4648 standard base64 (+ and /, padded), not empty."""
    value = check_string(var_name, value)
    try:
        if not value or base64.b64encode(base64.b64decode(value, validate=True)).decode() != value:
            raise ValueError
    except (binascii.Error, ValueError):
        raise ParamError(f"{var_name} is not valid base64") from None
    return value


@bp.post("/mobile_push/register")
@endpoint(token_kind=Param(one_of("fcm", "apns")), push_account_id=Param(check_int),
          push_public_key=Param(check_base64), bouncer_public_key=Param(check_base64),
          encrypted_push_registration=Param(check_base64))
def register_push_device(user, **registration):
    """Register a device for encrypted pushes, through the configured relay."""
    config = current_app.config
    if not config.get("PUSH_RELAY_URL"):
        raise PushServiceNotConfiguredError()
    if registration["bouncer_public_key"] not in (config.get("PUSH_RELAY_PUBLIC_KEYS") or []):
        raise JsonableError("Invalid bouncer_public_key")
    do_register_push_device(user, registration, relay_url=config["PUSH_RELAY_URL"],
                            timeout=config["PUSH_RELAY_TIMEOUT_SECONDS"])
