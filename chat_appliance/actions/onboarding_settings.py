"""Changing the organization settings of lib/onboarding_settings (invitations, channel creation,
subscribing others, the welcome text, read receipts, video calls) through PATCH /realm."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.onboarding_settings import REALM_GROUP_SETTING_DEFAULTS, realm_group_setting_id, realm_value_setting
from chat_appliance.lib import event_catalogue
from chat_appliance.models import UserGroup
from chat_appliance.actions.users import active_user_ids

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm


def check_onboarding_settings(realm: Realm, values: JSONDict) -> JSONDict:
    """The sent settings that differ from the stored ones; group ids must be the organization's."""
    changes = {}
    for name, value in values.items():
        if value is None:
            continue
        if name in REALM_GROUP_SETTING_DEFAULTS:
            if not UserGroup.select().where((UserGroup.id == value) & (UserGroup.realm == realm.id)).exists():
                raise JsonableError("Invalid user group ID")
            if value != realm_group_setting_id(realm, name):
                changes[name] = value
        elif value != realm_value_setting(realm, name):
            changes[name] = value
    return changes


def do_set_onboarding_settings(realm: Realm, changes: JSONDict) -> None:
    """Store the changes; everyone hears of each, as Zulip sends them: group settings in a realm
    update_dict event, the others in a realm update event."""
    with write_transaction():
        realm.settings = dict(realm.settings or {}, **changes)
        realm.save()
    audience = active_user_ids(realm.id)
    for name, value in changes.items():
        if name in REALM_GROUP_SETTING_DEFAULTS:
            publish(event_catalogue.realm_update_dict("default", {name: value}), audience)
        else:
            publish(event_catalogue.realm_update(name, realm_value_setting(realm, name)), audience)
