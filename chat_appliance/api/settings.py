"""A person's own settings: PATCH /settings (name, address, password, personal settings)."""

import zoneinfo

from flask import Blueprint, request

from chat_appliance.actions.account import do_change_password
from chat_appliance.actions.email_change import do_start_email_change
from chat_appliance.actions.users import check_full_name, do_change_full_name, do_change_settings
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.lib.validators import check_bool, int_range
from chat_appliance.lib.errors import JsonableError, ParamError, WrongPasswordError
from chat_appliance.web.context import instance_key, mailer, password_method
from chat_appliance.web.params import Param, endpoint
from chat_appliance.web.rate_limit import check_login_allowed, record_failed_login
from chat_appliance.web.sessions import SESSION_COOKIE, delete_other_sessions

bp = Blueprint("settings", __name__)


def check_timezone(var_name, value):
    """An IANA time zone name, or the empty string."""
    if value and value not in zoneinfo.available_timezones():
        raise ParamError(f"Invalid {var_name}")
    return value


BOOLEAN_SETTINGS = {k for k, v in USER_SETTING_DEFAULTS.items() if isinstance(v, bool)}


def _settings_params():
    params = {name: Param(check_bool, default=None) for name in sorted(BOOLEAN_SETTINGS)}
    params.update(
        full_name=Param(default=None),
        email=Param(default=None),
        timezone=Param(check_timezone, default=None),
        email_address_visibility=Param(int_range(1, 5), default=None),
        old_password=Param(default=None),
        new_password=Param(default=None),
    )
    return params


def change_password(user, old_password, new_password):
    """A wrong old password is a failed login: the same per-account throttle as signing in,
    checked before the password. Every other browser session of the account then ends (the one
    making the change stays)."""
    if old_password:
        check_login_allowed(user.delivery_email, user)
    try:
        do_change_password(user, old_password, new_password, password_method=password_method())
    except WrongPasswordError:
        record_failed_login(user.delivery_email, user)
        raise
    keep = request.cookies.get(SESSION_COOKIE) if request.path.startswith("/json/") else None
    delete_other_sessions(user.id, keep_token=keep)


@bp.patch("/settings")
@endpoint(**_settings_params())
def update_settings(user, full_name, email, old_password, new_password, **settings):
    """The requester changes their own name, password and personal settings; a new address is
    confirmed by a link mailed to it first."""
    result = {}
    if email is not None and email.strip().lower() != user.delivery_email.lower():
        if not mailer().configured:
            raise JsonableError("This server is not configured to send email, so it cannot confirm a new "
                                "address. Ask an administrator to change it.")
        do_start_email_change(user, email, secret=instance_key(), mailer=mailer())
        result["account_email"] = "Check your email for a confirmation link."
    if new_password:
        change_password(user, old_password, new_password)
    if full_name is not None and full_name.strip() != user.full_name:
        do_change_full_name(user, check_full_name(full_name))
    changes = {k: v for k, v in settings.items() if v is not None}
    if changes:
        do_change_settings(user, changes)
    return result
