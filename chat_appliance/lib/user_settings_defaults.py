"""Reads of an organization's defaults for new users' settings (actions/user_settings_defaults.py changes them)."""

from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.models.users import EMAIL_VISIBLE_EVERYONE

STORAGE_KEY = "user_settings_defaults"


def realm_user_settings_defaults(realm):
    """Every default, as /register's realm_user_settings_defaults gives them."""
    values = dict(USER_SETTING_DEFAULTS)
    values["email_address_visibility"] = EMAIL_VISIBLE_EVERYONE
    values.update((realm.settings or {}).get(STORAGE_KEY, {}))
    return values
