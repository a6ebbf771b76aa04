"""The organization's defaults for new users' personal settings (Zulip's RealmUserDefault).

Stored in realm.settings["user_settings_defaults"] over Zulip's defaults (lib/user_settings.py);
a new account starts with them (actions.users.create_user_row)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.models import EMAIL_VISIBLE_EVERYONE, Realm
from chat_appliance.lib.user_settings_defaults import STORAGE_KEY, realm_user_settings_defaults
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict


def new_user_settings(realm: Realm) -> tuple[JSONDict, int]:
    """(settings dict, email_address_visibility) for an account created now (read afresh: the
    caller's realm object may predate a change of the defaults)."""

    fresh = Realm.get_by_id(realm.id)
    stored = dict((fresh.settings or {}).get(STORAGE_KEY, {}))
    visibility = stored.pop("email_address_visibility", EMAIL_VISIBLE_EVERYONE)
    return stored, visibility


def do_update_user_settings_defaults(realm: Any, changes: Any) -> None:
    """Store validated defaults; announce each changed one to the organization."""
    with write_transaction():
        realm = Realm.get_by_id(realm.id)
        settings = dict(realm.settings or {})
        current = dict(settings.get(STORAGE_KEY, {}))
        changed = {k: v for k, v in changes.items() if realm_user_settings_defaults(realm)[k] != v}
        current.update(changes)
        settings[STORAGE_KEY] = current
        realm.settings = settings
        realm.save()
    audience = active_user_ids(realm.id)
    for name, value in changed.items():
        publish(event_catalogue.realm_user_settings_defaults_update(name, value), audience)
