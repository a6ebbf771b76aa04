"""Organization and personal settings: PATCH /realm, PATCH /settings."""

import zoneinfo

from flask import Blueprint, request

from chat_appliance.actions.account import do_change_password
from chat_appliance.actions.onboarding_settings import check_onboarding_settings, do_set_onboarding_settings
from chat_appliance.actions.realm import do_update_realm
from chat_appliance.actions.users import check_full_name, do_change_full_name, do_change_settings
from chat_appliance.actions.welcome import do_send_test_welcome_message
from chat_appliance.lib.access import group_in_realm, require_realm_admin, stream_in_realm
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.message_permissions import MESSAGE_GROUP_SETTINGS, MESSAGE_LIMIT_SETTINGS
from chat_appliance.lib.onboarding_settings import ONBOARDING_SETTING_NAMES, check_welcome_text_param, realm_setting_params
from chat_appliance.web.params import Param, ParamError, check_bool, check_group_id, check_int, endpoint, int_range, one_of, string_max
from chat_appliance.web.context import password_method
from chat_appliance.web.sessions import SESSION_COOKIE
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.models import EDIT_HISTORY_POLICIES

bp = Blueprint("realm", __name__)

MAX_REALM_NAME_LENGTH = 40
MAX_REALM_DESCRIPTION_LENGTH = 1000


def check_edit_limit(var_name, value):
    """Seconds, or "unlimited" (stored as 0: clients compare the limit with `> 0`)."""
    if value == "unlimited":
        return 0
    return int_range(low=1)(var_name, value)


def check_limit_or_unlimited(var_name, value):
    """Seconds, or "unlimited" (stored as None)."""
    if value == "unlimited":
        return None
    return int_range(low=0)(var_name, value)


MESSAGE_SETTING_PARAMS = {name: Param(check_group_id, default=None) for name in MESSAGE_GROUP_SETTINGS}
MESSAGE_SETTING_PARAMS.update({name: Param(check_limit_or_unlimited, default=()) for name in MESSAGE_LIMIT_SETTINGS})


@bp.patch("/realm")
@endpoint(**MESSAGE_SETTING_PARAMS, **realm_setting_params(),
    name=Param(default=None),
    description=Param(string_max(MAX_REALM_DESCRIPTION_LENGTH), default=None),
    moderation_request_channel_id=Param(check_int, default=None),
    message_edit_history_visibility_policy=Param(one_of(*EDIT_HISTORY_POLICIES), default=None),
    can_mention_many_users_group=Param(check_group_id, default=None),
    allow_message_editing=Param(check_bool, default=None),
    message_content_edit_limit_seconds=Param(check_edit_limit, default=None),
)
def update_realm(user, name, description, moderation_request_channel_id, message_edit_history_visibility_policy,
                 can_mention_many_users_group, allow_message_editing, message_content_edit_limit_seconds,
                 **message_settings):
    """Administrators change organization settings."""
    require_realm_admin(user)
    realm = user.realm
    onboarding_changes = check_onboarding_settings(
        realm, {name: message_settings.pop(name) for name in ONBOARDING_SETTING_NAMES})
    changes = {}
    stored = dict(realm.settings or {})
    for setting, value in message_settings.items():
        if value is None and setting in MESSAGE_GROUP_SETTINGS or value == ():
            continue  # not sent (limits use () as "absent", since None means unlimited)
        if setting in MESSAGE_GROUP_SETTINGS and group_in_realm(realm.id, value) is None:
            raise JsonableError("Invalid user group ID")
        stored[setting] = value
    if stored != (realm.settings or {}):
        changes["settings"] = stored
    if name is not None:
        name = name.strip()
        if not name or len(name) > MAX_REALM_NAME_LENGTH:
            raise JsonableError("Invalid name")
        changes["name"] = name
    if description is not None:
        changes["description"] = description
    if moderation_request_channel_id is not None:
        # -1 turns the moderation request channel off, as in Zulip.
        if moderation_request_channel_id == -1:
            changes["moderation_request_channel_id"] = None
        else:
            stream = stream_in_realm(realm.id, moderation_request_channel_id)
            if stream is None:
                raise JsonableError("Invalid channel ID")
            changes["moderation_request_channel_id"] = stream.id
    if message_edit_history_visibility_policy is not None:
        changes["message_edit_history_visibility_policy"] = EDIT_HISTORY_POLICIES[
            message_edit_history_visibility_policy]
    if can_mention_many_users_group is not None:
        group = group_in_realm(realm.id, can_mention_many_users_group)
        if group is None:
            raise JsonableError("Invalid user group ID")
        changes["can_mention_many_users_group_id"] = group.id
    if allow_message_editing is not None:
        changes["allow_message_editing"] = allow_message_editing
    if message_content_edit_limit_seconds is not None:
        changes["message_content_edit_limit_seconds"] = message_content_edit_limit_seconds
    changes = {k: v for k, v in changes.items() if getattr(realm, k) != v}
    if changes:
        do_update_realm(realm, changes)
    if onboarding_changes:
        do_set_onboarding_settings(realm, onboarding_changes)


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
        timezone=Param(check_timezone, default=None),
        email_address_visibility=Param(int_range(1, 5), default=None),
        old_password=Param(default=None),
        new_password=Param(default=None),
    )
    return params


@bp.patch("/settings")
@endpoint(**_settings_params())
def update_settings(user, full_name, old_password, new_password, **settings):
    """The requester changes their own name, password and personal settings."""
    if new_password:
        keep = request.cookies.get(SESSION_COOKIE) if request.path.startswith("/json/") else None
        do_change_password(user, old_password, new_password, password_method=password_method(), keep_session=keep)
    if full_name is not None and full_name.strip() != user.full_name:
        do_change_full_name(user, check_full_name(full_name))
    changes = {k: v for k, v in settings.items() if v is not None}
    if changes:
        do_change_settings(user, changes)


@bp.post("/realm/test_welcome_bot_custom_message")
@endpoint(welcome_message_custom_text=Param())
def test_welcome_bot_custom_message(user, welcome_message_custom_text):
    """Administrators preview the custom welcome text: Welcome Bot sends it to them."""
    require_realm_admin(user)
    text = check_welcome_text_param("welcome_message_custom_text", welcome_message_custom_text)
    if not text.strip():
        raise JsonableError("Message must not be empty")
    return {"message_id": do_send_test_welcome_message(user, text)}
