"""Reads of an organization's defaults for new users' settings (actions/user_settings_defaults.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.models import EMAIL_VISIBLE_EVERYONE

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm

STORAGE_KEY = "user_settings_defaults"


def realm_user_settings_defaults(realm: Realm) -> JSONDict:
    """Every default, as /register's realm_user_settings_defaults gives them."""
    values = dict(USER_SETTING_DEFAULTS)
    values["email_address_visibility"] = EMAIL_VISIBLE_EVERYONE
    values.update((realm.settings or {}).get(STORAGE_KEY, {}))
    return values
