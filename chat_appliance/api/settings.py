"""A person's own settings: PATCH /settings (name, address, password, personal settings)."""

import re
import zoneinfo

from flask import Blueprint, request

from chat_appliance.actions.account import do_change_password
from chat_appliance.actions.email_change import check_may_change_own_email, check_new_email, do_start_email_change
from chat_appliance.actions.users import check_full_name, do_change_delivery_email, do_change_full_name, do_change_settings
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.lib.validators import check_bool, check_int, int_range, one_of
from chat_appliance.lib.errors import JsonableError, ParamError, WrongPasswordError
from chat_appliance.web.context import auth_settings, instance_key, mailer, password_method
from chat_appliance.web.params import Param, endpoint
from chat_appliance.web.rate_limit import check_email_change_allowed, check_login_allowed, record_failed_login
from chat_appliance.web.sessions import SESSION_COOKIE, delete_other_sessions

bp = Blueprint("settings", __name__)


def check_timezone(var_name, value):
    """An IANA time zone name, or the empty string."""
    if value and value not in zoneinfo.available_timezones():
        raise ParamError(f"Invalid {var_name}")
    return value


BOOLEAN_SETTINGS = {k for k, v in USER_SETTING_DEFAULTS.items() if isinstance(v, bool)}

# A language tag such as "en", "pt-BR" or "zh_Hans": the server has no translations of its own,
# so it keeps the client's choice for the clients that translate.
LANGUAGE_TAG = re.compile(r"[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,2}")


def check_language(var_name, value):
    """A well-formed language tag."""
    if not isinstance(value, str) or not LANGUAGE_TAG.fullmatch(value):
        raise ParamError(f"Invalid {var_name}")
    return value


# The personal settings with a fixed set of values, and those values (Zulip's).
CHOICE_SETTINGS = {
    "color_scheme": one_of(1, 2, 3, parser=check_int),
    "emojiset": one_of("google", "google-blob", "twitter", "text"),
    "demote_inactive_streams": one_of(1, 2, 3, parser=check_int),
    "web_mark_read_on_scroll_policy": one_of(1, 2, 3, parser=check_int),
    "user_list_style": one_of(1, 2, 3, parser=check_int),
    "web_channel_default_view": one_of(1, 2, 3, 4, parser=check_int),
    "web_home_view": one_of("recent_topics", "inbox", "all_messages"),
    "automatically_follow_topics_policy": one_of(1, 2, 3, 4, parser=check_int),
    "automatically_unmute_topics_in_muted_streams_policy": one_of(1, 2, 3, 4, parser=check_int),
    "default_language": check_language,
}


def _settings_params():
    params = {name: Param(check_bool, default=None) for name in sorted(BOOLEAN_SETTINGS)}
    params.update({name: Param(parser, default=None) for name, parser in CHOICE_SETTINGS.items()})
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


def name_locked(user):
    """Names come from LDAP (AUTH_LDAP_USER_ATTR_MAP): only an administrator may change one, and a
    request from anyone else leaves the name as it is without an error, as on Zulip (whose web
    app disables the field; the next sync would undo the change anyway)."""
    settings = auth_settings()
    return settings.ldap is not None and settings.ldap.manages_name and not user.is_realm_admin


@bp.patch("/settings")
@endpoint(**_settings_params())
def update_settings(user, full_name, email, old_password, new_password, **settings):
    """The requester changes their own name, address, password and personal settings. A new
    address is checked before anything changes; it is confirmed by a link mailed to it, or, on a
    server that sends no mail, taken at once."""
    result = {}
    new_email = None
    if email is not None and email.strip().lower() != user.delivery_email.lower():
        check_may_change_own_email(user)
        new_email = check_new_email(user, email)
        if mailer().configured:
            check_email_change_allowed(user)
    if new_password:
        change_password(user, old_password, new_password)
    if full_name is not None and full_name.strip() != user.full_name and not name_locked(user):
        do_change_full_name(user, check_full_name(full_name))
    changes = {k: v for k, v in settings.items() if v is not None}
    if changes:
        do_change_settings(user, changes)
    if new_email is not None:
        if mailer().configured:
            do_start_email_change(user, new_email, secret=instance_key(), mailer=mailer())
            result["account_email"] = "Check your email for a confirmation link."
        else:
            # Without mail no address here was ever confirmed (accounts are made and invited with
            # whatever address is typed), so a link could prove nothing: the change is made now,
            # and the answer says so.
            do_change_delivery_email(user, new_email)
            result["account_email"] = (f"Your email address is now {new_email}. This server does not send "
                                       "email, so the new address was not confirmed.")
    return result
