"""Organization settings: PATCH /realm, and the preview of the custom welcome message."""

import json
import re

from flask import Blueprint

from chat_appliance.actions.onboarding_settings import check_onboarding_settings, do_set_onboarding_settings
from chat_appliance.actions.realm import do_set_default_code_block_language, do_update_realm
from chat_appliance.actions.welcome import do_send_test_welcome_message
from chat_appliance.lib.access import group_in_realm, require_realm_admin, stream_in_realm
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.message_permissions import MESSAGE_GROUP_SETTINGS, MESSAGE_LIMIT_SETTINGS
from chat_appliance.lib.onboarding_settings import (
    ONBOARDING_SETTING_NAMES,
    REALM_GROUP_SETTING_DEFAULTS,
    VIDEO_CHAT_PROVIDERS,
    check_welcome_text_param,
)
from chat_appliance.lib.validators import check_bool, check_group_id, check_int, int_range, one_of, string_max
from chat_appliance.models import EDIT_HISTORY_POLICIES
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("realm", __name__)

MAX_REALM_NAME_LENGTH = 40
MAX_REALM_DESCRIPTION_LENGTH = 1000
# A Pygments language name or alias; none is near this long.
MAX_CODE_BLOCK_LANGUAGE_LENGTH = 100
# Zulip's limit for a URL setting.
MAX_JITSI_URL_LENGTH = 200


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


def check_video_chat_provider(var_name, value):
    """One of VIDEO_CHAT_PROVIDERS' ids."""
    provider = check_int(var_name, value)
    if provider not in {p["id"] for p in VIDEO_CHAT_PROVIDERS.values()}:
        raise JsonableError(f"Invalid video_chat_provider {provider}")
    return provider


def check_jitsi_server_url(var_name, value):
    """Zulip's jitsi_server_url: "default" (the server's Jitsi, stored as "") or an http(s) URL."""
    if isinstance(value, str) and value.startswith('"'):
        value = json.loads(value)
    if value == "default":
        return ""
    if not isinstance(value, str) or len(value) > MAX_JITSI_URL_LENGTH or not re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
        raise JsonableError("jitsi_server_url is not an allowed_type")
    return value


# PATCH /realm parameters for the onboarding settings of lib/onboarding_settings.py (absent: None).
def realm_setting_params():
    params = {name: Param(check_group_id, default=None) for name in REALM_GROUP_SETTING_DEFAULTS}
    params.update(invite_required=Param(check_bool, default=None),
                  enable_read_receipts=Param(check_bool, default=None),
                  email_changes_disabled=Param(check_bool, default=None),
                  welcome_message_custom_text=Param(check_welcome_text_param, default=None),
                  video_chat_provider=Param(check_video_chat_provider, default=None),
                  jitsi_server_url=Param(check_jitsi_server_url, default=None))
    return params


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
    default_code_block_language=Param(string_max(MAX_CODE_BLOCK_LANGUAGE_LENGTH), default=None),
)
def update_realm(user, name, description, moderation_request_channel_id, message_edit_history_visibility_policy,
                 can_mention_many_users_group, allow_message_editing, message_content_edit_limit_seconds,
                 default_code_block_language, **message_settings):
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
    if default_code_block_language is not None:
        default_code_block_language = default_code_block_language.strip()
        if not re.fullmatch(r"[a-zA-Z0-9_+\-./#]*", default_code_block_language):
            raise JsonableError("Invalid default_code_block_language")
    changes = {k: v for k, v in changes.items() if getattr(realm, k) != v}
    if changes:
        do_update_realm(realm, changes)
    if (default_code_block_language is not None
            and default_code_block_language != (realm.settings or {}).get("default_code_block_language", "")):
        do_set_default_code_block_language(realm, default_code_block_language)
    if onboarding_changes:
        do_set_onboarding_settings(realm, onboarding_changes)


@bp.post("/realm/test_welcome_bot_custom_message")
@endpoint(welcome_message_custom_text=Param())
def test_welcome_bot_custom_message(user, welcome_message_custom_text):
    """Administrators preview the custom welcome text: Welcome Bot sends it to them."""
    require_realm_admin(user)
    text = check_welcome_text_param("welcome_message_custom_text", welcome_message_custom_text)
    if not text.strip():
        raise JsonableError("Message must not be empty")
    return {"message_id": do_send_test_welcome_message(user, text)}
