"""Legacy push: POST|DELETE /users/me/apns_device_token, POST|DELETE /users/me/android_gcm_reg_id,
POST /mobile_push/test_notification, POST /mobile_push/e2ee/test_notification."""

from flask import Blueprint, current_app

from chat_appliance.actions.push import PushServiceNotConfiguredError
from chat_appliance.actions.push_legacy import (
    access_push_token,
    check_token,
    do_add_push_token,
    do_remove_push_token,
    do_send_test_notification,
    e2ee_test_devices,
    legacy_test_devices,
)
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_int

bp = Blueprint("push_legacy", __name__)


def configured_relay():
    """The relay's address and timeout, or PUSH_SERVICE_NOT_CONFIGURED (as /mobile_push/register)."""
    config = current_app.config
    if not config.get("PUSH_RELAY_URL"):
        raise PushServiceNotConfiguredError()
    return {"url": config["PUSH_RELAY_URL"], "timeout": config["PUSH_RELAY_TIMEOUT_SECONDS"]}


@bp.post("/users/me/apns_device_token")
@endpoint(token=Param(), appid=Param())
def add_apns_token(user, token, appid):
    """Register an iOS device token."""
    check_token("apns", token)
    do_add_push_token(user, "apns", token, appid, configured_relay())


@bp.delete("/users/me/apns_device_token")
@endpoint(token=Param())
def remove_apns_token(user, token):
    """Forget an iOS device token."""
    check_token("apns", token)
    relay = configured_relay()
    do_remove_push_token(access_push_token(user, "apns", token), relay)


@bp.post("/users/me/android_gcm_reg_id")
@endpoint(token=Param())
def add_fcm_token(user, token):
    """Register an Android (FCM) registration token."""
    check_token("fcm", token)
    do_add_push_token(user, "fcm", token, None, configured_relay())


@bp.delete("/users/me/android_gcm_reg_id")
@endpoint(token=Param())
def remove_fcm_token(user, token):
    """Forget an Android (FCM) registration token."""
    check_token("fcm", token)
    relay = configured_relay()
    do_remove_push_token(access_push_token(user, "fcm", token), relay)


@bp.post("/mobile_push/test_notification")
@endpoint(token=Param(default=None))
def test_notification(user, token):
    """A test notification to one legacy device, or to all of the user's."""
    relay = configured_relay()
    do_send_test_notification(user, legacy_test_devices(user, token), relay)


@bp.post("/mobile_push/e2ee/test_notification")
@endpoint(push_account_id=Param(check_int, default=None))
def e2ee_test_notification(user, push_account_id):
    """An encrypted test notification to one registered device, or to all of the user's."""
    relay = configured_relay()
    do_send_test_notification(user, e2ee_test_devices(user, push_account_id), relay)
