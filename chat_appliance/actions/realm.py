"""The organization: creation with its system groups, owner and first channel; settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.groups import NOBODY_GROUP, SYSTEM_GROUPS
from chat_appliance.lib.message_permissions import realm_message_settings_state
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, WELCOME_BOT
from chat_appliance.lib import event_catalogue
from chat_appliance.models import BOT_GENERIC, ROLE_MEMBER, ROLE_OWNER, GroupGroupMembership, Realm, UserGroup
from chat_appliance.actions.channels import create_stream_row, create_subscription_rows
from chat_appliance.actions.users import check_email, check_full_name, create_user_row
from chat_appliance.actions.welcome import send_welcome_message

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's system bots. They belong to the organization here (one organization per server)
# and are reported as cross-realm bots.


def create_system_groups(realm: Realm) -> JSONDict:
    """The role groups, each containing the next narrower one, plus role:nobody."""
    groups = [UserGroup.create(realm=realm, name=name, description=doc, is_system_group=True)
              for name, doc, _role in SYSTEM_GROUPS]
    for wider, narrower in zip(groups, groups[1:]):
        GroupGroupMembership.create(supergroup=wider, subgroup=narrower)
    UserGroup.create(realm=realm, name=NOBODY_GROUP[0], description=NOBODY_GROUP[1], is_system_group=True)
    return {g.name: g for g in groups}


def do_create_realm(name: str, host: str, url: str, owner_email: str, owner_name: str, owner_password: str, *,
                    password_method: str = "scrypt") -> tuple[Realm, UserProfile]:
    """A new organization with its owner, system groups and bots, and a #general channel."""
    owner_email = check_email(owner_email)
    owner_name = check_full_name(owner_name)
    with write_transaction():
        realm = Realm.create(name=name, host=host, url=url, settings={})
        groups = create_system_groups(realm)
        realm.can_mention_many_users_group_id = groups["role:administrators"].id
        owner = create_user_row(realm, owner_email, owner_name, password=owner_password, role=ROLE_OWNER,
                                password_method=password_method)
        for short_name, full_name in (WELCOME_BOT, NOTIFICATION_BOT):
            create_user_row(realm, f"{short_name}@{host}", full_name, password=None, role=ROLE_MEMBER,
                            password_method=None, bot_type=BOT_GENERIC, is_system_bot=True)
        general = create_stream_row(realm, "general", description="Everyone is added to this channel by default.",
                                    creator=owner)
        realm.settings = {"default_stream_ids": [general.id]}
        realm.save()
        create_subscription_rows([general], [owner])

    send_welcome_message(owner)
    return realm, owner


def do_set_default_code_block_language(realm: Realm, language: str) -> None:
    """Set the language of code fences that name none ("" for none: plain code), as Zulip's
    default_code_block_language; new and edited messages render with it."""
    with write_transaction():
        realm.settings = {**(realm.settings or {}), "default_code_block_language": language}
        realm.save()
    publish(event_catalogue.realm_update("default_code_block_language", language), active_user_ids(realm.id))


def do_update_realm(realm: Realm, changes: JSONDict) -> None:
    """Apply validated organization settings and tell everyone."""
    with write_transaction():
        for key, value in changes.items():
            setattr(realm, key, value)
        realm.save()
    for key, value in changes.items():
        if key == "settings":
            continue  # announced per setting below
        publish(event_catalogue.realm_update(key, value), active_user_ids(realm.id))
    if "settings" in changes:

        state = realm_message_settings_state(realm)
        publish(event_catalogue.realm_update_dict("default", {key[len("realm_"):]: value for key, value in state.items()}),
                active_user_ids(realm.id))
