"""Mobile push: POST|DELETE /users/me/android_gcm_reg_id, POST|DELETE /users/me/apns_device_token,
POST /mobile_push/test_notification (the legacy, plaintext notifications, through Zulip's Mobile
Push Notification Service), and the end-to-end encrypted ones of the current app:
POST /mobile_push/register and POST /mobile_push/e2ee/test_notification."""

from flask import Blueprint, current_app

from chat_appliance.actions.push_devices import check_register_push_device, do_send_e2ee_test_notification
from chat_appliance.actions.push_notifications import (
    USER_AGENT,
    access_push_token,
    check_token,
    do_add_push_token,
    do_remove_push_token,
    do_send_test_notification,
    legacy_test_devices,
)
from chat_appliance.clients.push_e2ee import check_push_key_id
from chat_appliance.clients.push_service import service_from_config
from chat_appliance.lib.errors import (
    JsonableError,
    MissingArgumentError,
    NoActivePushDeviceError,
    PushServiceNotConfiguredError,
)
from chat_appliance.lib.validators import check_int, check_string, one_of
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("push_notifications", __name__)


def configured_service():
    """The service, or PUSH_SERVICE_NOT_CONFIGURED."""
    service = service_from_config(current_app.config)
    if service is None:
        raise PushServiceNotConfiguredError()
    return service


def human_only(user):
    """Zulip's human_users_only: a bot has no phone to push to."""
    if user.is_bot:
        raise JsonableError("This endpoint does not accept bot requests.")


def check_uint32(var_name, value):
    """push_key_id: a JSON integer from 0 to 2**32 - 1."""
    return check_push_key_id(var_name, check_int(var_name, value))


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
@endpoint(device_id=Param(check_int, default=None), push_key_id=Param(check_uint32, default=None),
          push_key=Param(check_string, default=None), token_kind=Param(one_of("fcm", "apns"), default=None),
          token_id=Param(check_string, default=None), bouncer_public_key=Param(check_string, default=None),
          encrypted_push_registration=Param(check_string, default=None),
          push_account_id=Param(check_int, default=None), push_public_key=Param(check_string, default=None))
def register_push_device(user, device_id, push_account_id, push_public_key, **fields):
    """Register a client device (POST /register_client_device) for end-to-end encrypted
    notifications, or rotate its push key or token (actions/push_devices.py): Zulip 12's form
    (feature level 468). Zulip 11's prototype (push_account_id, push_public_key, feature level
    406, whose cryptosystem Zulip dropped at 432) is answered as by a server without end-to-end
    encrypted push, so that a client speaking it keeps to the FCM/APNs token routes."""
    human_only(user)
    if device_id is None:
        if push_account_id is None:
            raise MissingArgumentError("device_id")
        raise PushServiceNotConfiguredError()
    configured_service()
    check_register_push_device(user, device_id, **fields)


@bp.post("/mobile_push/e2ee/test_notification")
@endpoint(device_id=Param(check_int, default=None), push_account_id=Param(check_int, default=None))
def e2ee_test_notification(user, device_id, push_account_id):
    """An end-to-end encrypted test notification to one registered device, or to all of the
    user's. A Zulip 11 push_account_id names no device registered here."""
    human_only(user)
    service = configured_service()
    if push_account_id is not None and device_id is None:
        raise NoActivePushDeviceError()
    do_send_e2ee_test_notification(user, device_id, service, USER_AGENT)
