"""Organization settings for invitations, channel creation, subscribing others, the welcome
message, read receipts, video calls and address changes, under Zulip's names and with Zulip's defaults. They are stored in
`realm.settings`; group settings hold a system group name (the default) or a group id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.lib.groups import is_user_in_group, system_group_ids
from chat_appliance.lib.snapshots import snapshot_versions
from chat_appliance.lib.errors import ParamError

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm, UserProfile

REALM_GROUP_SETTING_DEFAULTS = {
    "can_invite_users_group": "role:members",
    "create_multiuse_invite_group": "role:administrators",
    "can_add_subscribers_group": "role:members",
    "can_create_public_channel_group": "role:members",
    "can_create_private_channel_group": "role:members",
    "can_create_web_public_channel_group": "role:owners",
}

# Zulip's welcome_message_custom_text limit.
MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000

REALM_VALUE_SETTING_DEFAULTS = {
    "invite_required": True,
    "welcome_message_custom_text": "",
    # Zulip turns read receipts on for new organizations (except open Zulip Cloud ones).
    "enable_read_receipts": True,
    # The video call provider compose's "Add video call" uses (VIDEO_CHAT_PROVIDERS' ids), and the
    # organization's own Jitsi server (None: the server's, SERVER_JITSI_SERVER_URL).
    "video_chat_provider": 1,
    "jitsi_server_url": None,
    # Whether members may change their own address (administrators always may); organizations
    # whose accounts come from a directory turn it on.
    "email_changes_disabled": False,
}

# Zulip's realm_available_video_chat_providers, of the ones that need no OAuth set-up here.
VIDEO_CHAT_PROVIDERS = {
    "disabled": {"name": "None", "id": 0},
    "jitsi_meet": {"name": "Jitsi Meet", "id": 1},
}
# Zulip's default JITSI_SERVER_URL.
SERVER_JITSI_SERVER_URL = "https://meet.jit.si"


def realm_value_setting(realm: Realm, name: str) -> Any:
    """A non-group organization setting, or Zulip's default. The Jitsi URL "default" is stored
    as "" and reads as None (the server's), as Zulip's realm_jitsi_server_url."""
    value = (realm.settings or {}).get(name, REALM_VALUE_SETTING_DEFAULTS[name])
    return None if name == "jitsi_server_url" and not value else value


def realm_group_setting_id(realm: Realm, name: str) -> int | None:
    """The id of the group an organization group setting names."""
    value = (realm.settings or {}).get(name, REALM_GROUP_SETTING_DEFAULTS[name])
    if isinstance(value, int):
        return value
    return system_group_ids(realm.id).get(value)


def user_has_realm_permission(user: UserProfile, name: str, at: int | None = None) -> bool:
    """Whether the user is in the organization's group for this setting (recursively). `at`: as
    lib/groups.is_user_in_group's."""
    return is_user_in_group(user, realm_group_setting_id(user.realm, name), at)


def can_invite_users_by_email(user: UserProfile, at: int | None = None) -> bool:
    return not user.is_guest and user_has_realm_permission(user, "can_invite_users_group", at)


def can_create_multiuse_invite(user: UserProfile) -> bool:
    return not user.is_guest and user_has_realm_permission(user, "create_multiuse_invite_group")


def can_subscribe_other_users(user: UserProfile, at: int | None = None) -> bool:
    return not user.is_guest and user_has_realm_permission(user, "can_add_subscribers_group", at)


def onboarding_settings_state(user: UserProfile) -> JSONDict:
    """These settings as /register's realm_* keys, and the requester's derived permissions."""
    realm = user.realm
    state: JSONDict = {f"realm_{name}": realm_group_setting_id(realm, name) for name in REALM_GROUP_SETTING_DEFAULTS}
    state.update({f"realm_{name}": realm_value_setting(realm, name) for name in REALM_VALUE_SETTING_DEFAULTS})
    state.update({
        "realm_available_video_chat_providers": VIDEO_CHAT_PROVIDERS,
        "server_jitsi_server_url": SERVER_JITSI_SERVER_URL,
        # The legacy key: the Jitsi server in use.
        "jitsi_server_url": state["realm_jitsi_server_url"] or SERVER_JITSI_SERVER_URL,
    })
    # Memberships kept with the configuration generation read before them (a read by /register).
    _data, at = snapshot_versions()
    public = user_has_realm_permission(user, "can_create_public_channel_group", at)
    private = user_has_realm_permission(user, "can_create_private_channel_group", at)
    state.update({
        "can_invite_others_to_realm": can_invite_users_by_email(user, at),
        "can_subscribe_other_users": can_subscribe_other_users(user, at),
        "can_create_public_streams": public,
        "can_create_private_streams": private,
        "can_create_web_public_streams": user_has_realm_permission(user, "can_create_web_public_channel_group", at),
        "can_create_streams": public or private,
    })
    return state


def check_welcome_text_param(var_name: str, value: Any) -> Any:
    """At most MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH characters."""
    if len(value) > MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH:
        raise ParamError(f"{var_name} is too long (limit: {MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH} characters)")
    return value


ONBOARDING_SETTING_NAMES = tuple(REALM_GROUP_SETTING_DEFAULTS) + tuple(REALM_VALUE_SETTING_DEFAULTS)
