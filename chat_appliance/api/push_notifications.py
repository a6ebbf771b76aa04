"""Mobile push: POST|DELETE /users/me/android_gcm_reg_id, POST|DELETE /users/me/apns_device_token,
POST /mobile_push/test_notification (through Zulip's Mobile Push Notification Service), and the
end-to-end encrypted POST /mobile_push/register and /mobile_push/e2ee/test_notification, which
this server answers as a Zulip server without end-to-end encrypted push does."""

import base64
import binascii

from flask import Blueprint, current_app

from chat_appliance.actions.push_notifications import (
    access_push_token,
    check_token,
    do_add_push_token,
    do_remove_push_token,
    do_send_test_notification,
    legacy_test_devices,
)
from chat_appliance.lib.errors import MissingArgumentError, ParamError, PushServiceNotConfiguredError
from chat_appliance.clients.push_service import service_from_config
from chat_appliance.lib.validators import check_int, check_string, one_of
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("push_notifications", __name__)


def configured_service():
    """The service, or PUSH_SERVICE_NOT_CONFIGURED."""
    service = service_from_config(current_app.config)
    if service is None:
        raise PushServiceNotConfiguredError()
    return service


def check_base64(var_name, value):
    """RFC 4648 standard base64 (+ and /, padded), not empty."""
    value = check_string(var_name, value)
    try:
        if not value or base64.b64encode(base64.b64decode(value, validate=True)).decode() != value:
            raise ValueError
    except (binascii.Error, ValueError):
        raise ParamError(f"{var_name} is not valid base64") from None
    return value


@bp.post("/users/me/apns_device_token")
@endpoint(token=Param(), appid=Param())
def add_apns_token(user, token, appid):
    """Register an iOS device token with the service."""
    check_token("apns", token)
    do_add_push_token(user, "apns", token, appid, configured_service())


@bp.delete("/users/me/apns_device_token")
@endpoint(token=Param())
def remove_apns_token(user, token):
    """Forget an iOS device token, here and at the service."""
    check_token("apns", token)
    service = configured_service()
    do_remove_push_token(access_push_token(user, "apns", token), service)


@bp.post("/users/me/android_gcm_reg_id")
@endpoint(token=Param())
def add_fcm_token(user, token):
    """Register an Android (FCM) registration token with the service."""
    check_token("fcm", token)
    do_add_push_token(user, "fcm", token, None, configured_service())


@bp.delete("/users/me/android_gcm_reg_id")
@endpoint(token=Param())
def remove_fcm_token(user, token):
    """Forget an Android (FCM) registration token, here and at the service."""
    check_token("fcm", token)
    service = configured_service()
    do_remove_push_token(access_push_token(user, "fcm", token), service)


@bp.post("/mobile_push/test_notification")
@endpoint(token=Param(default=None))
def test_notification(user, token):
    """A test notification to one registered device, or to all of the user's."""
    service = configured_service()
    do_send_test_notification(user, legacy_test_devices(user, token), service)


@bp.post("/mobile_push/register")
@endpoint(device_id=Param(check_int, default=None), push_account_id=Param(check_int, default=None),
          push_key_id=Param(check_int, default=None), push_key=Param(check_base64, default=None),
          token_kind=Param(one_of("fcm", "apns"), default=None), token_id=Param(check_string, default=None),
          push_public_key=Param(check_base64, default=None), bouncer_public_key=Param(check_base64, default=None),
          encrypted_push_registration=Param(check_base64, default=None))
def register_push_device(user, device_id, push_account_id, **fields):
    """End-to-end encrypted push registration, in its feature-level-406 form (push_account_id)
    or its feature-level-468 form (device_id, push_key, token_id). Encrypting notifications for
    the device is not implemented here, so the parameters are checked and the answer is the one
    of a Zulip server that cannot push this way: PUSH_SERVICE_NOT_CONFIGURED. The app then keeps
    to the FCM/APNs token routes above."""
    if device_id is None and push_account_id is None:
        raise MissingArgumentError("device_id")
    raise PushServiceNotConfiguredError()


@bp.post("/mobile_push/e2ee/test_notification")
@endpoint(push_account_id=Param(check_int, default=None))
def e2ee_test_notification(user, push_account_id):
    """No end-to-end encrypted device can be registered here (see register_push_device)."""
    raise PushServiceNotConfiguredError()
