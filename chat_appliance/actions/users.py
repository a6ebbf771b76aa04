"""Accounts: creation (humans, bots), roles, names, API keys, personal settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re

from peewee import fn

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import can_see_real_email
from chat_appliance.lib.bot_services import service_of
from chat_appliance.lib.audiences import active_user_ids, admin_ids  # noqa: F401 - active_user_ids is imported from here too
from chat_appliance.lib.credential_changes import credentials_changed
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import set_role_group_membership
from chat_appliance.lib.passwords import generate_api_key, hash_password, password_too_weak
from chat_appliance.lib.serializers import bot_dict, service_dicts, user_dict
from chat_appliance.lib import event_catalogue
from chat_appliance.models import (EMAIL_VISIBLE_EVERYONE, ROLES, ROLE_MEMBER, Message, Realm, Stream, UserPermission,
                                   UserProfile, WebSession)
from chat_appliance.actions.bot_services import bot_administrator_ids, create_bot_service
from chat_appliance.actions.channels import create_subscription_rows, default_streams
from chat_appliance.actions.drafts import delete_all_drafts
from chat_appliance.actions.invite_status import notify_invites_changed, revoke_invitations_by
from chat_appliance.actions.message_delete import delete_message_rows, notify_messages_deleted
from chat_appliance.actions.user_settings_defaults import new_user_settings
from chat_appliance.actions.welcome import send_welcome_message

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import BotService, Realm

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$|^[^@\s]+@localhost$")
MAX_NAME_LENGTH = 60


def check_email(email: str) -> str:
    """A syntactically valid address, or BAD_REQUEST."""
    email = email.strip()
    if not EMAIL_RE.match(email) or len(email) > 254:
        raise JsonableError(f"Invalid email '{email}'")
    return email


def check_not_placeholder(realm: Realm, email: str) -> str:
    """Addresses of the form user{N}@{organization host} are the placeholders of hidden real
    addresses; an account holding one as its real address would take over user N's placeholder
    once N hides their address."""
    local, _, host = email.strip().lower().rpartition("@")
    if host == realm.host.lower() and re.fullmatch(r"user[0-9]+", local):
        raise JsonableError(f"Email '{email}' is reserved for placeholder addresses")
    return email


def check_full_name(full_name: str) -> str:
    """Zulip's name rules: not empty, not too long, no control characters."""
    full_name = full_name.strip()
    if not full_name:
        raise JsonableError("Name too short!")
    if len(full_name) > MAX_NAME_LENGTH:
        raise JsonableError("Name too long!")
    if any(ord(ch) < 32 for ch in full_name) or "*" in full_name or "|" in full_name:
        # `*` and `|` would break @**Name|id** mention syntax.
        raise JsonableError("Invalid characters in name!")
    return full_name


def email_in_use(realm: Any, email: str, *, except_user_id: int | None = None) -> bool:
    """Whether an account of the organization (other than `except_user_id`) already has this address."""
    lowered = email.lower()
    query = UserProfile.select().where(
        (UserProfile.realm == realm)
        & ((fn.LOWER(UserProfile.delivery_email) == lowered) | (fn.LOWER(UserProfile.email) == lowered)))
    if except_user_id is not None:
        query = query.where(UserProfile.id != except_user_id)
    return query.exists()


def api_email_for(user: UserProfile) -> str:
    """The API email: the real address if everyone may see it, else Zulip's placeholder."""
    if user.is_bot or user.email_address_visibility == EMAIL_VISIBLE_EVERYONE:
        return user.delivery_email
    return f"user{user.id}@{user.realm.host}"


def create_user_row(realm: Realm, email: str, full_name: str, *, password: str | None, role: int,
                    password_method: str | None, bot_type: int | None = None, bot_owner: UserProfile | None = None,
                    is_system_bot: bool = False) -> UserProfile:
    """Insert an account and its system-group membership; the caller holds the transaction.
    Every account is made here, so the rules for every account are checked here, whoever asks
    (a path that checked them on its own would be the one that forgets): a placeholder address is nobody's real
    address, and a password follows the one policy."""
    check_not_placeholder(Realm.get_by_id(realm) if isinstance(realm, int) else realm, email)
    if password is not None and password_too_weak(password):
        raise JsonableError("The password is too weak.")
    user = UserProfile.create(
        realm=realm,
        email=email,
        delivery_email=email,
        full_name=full_name,
        role=role,
        is_bot=bot_type is not None,
        bot_type=bot_type,
        bot_owner=bot_owner,
        is_system_bot=is_system_bot,
        api_key=generate_api_key(),
        # Callers that give a password give its hashing method too.
        password=hash_password(password, password_method) if password else None,  # type: ignore[arg-type]
    )
    if bot_type is None and not isinstance(realm, int):
        apply_user_settings_defaults(user, realm)
    set_role_group_membership(user, role)
    return user


def apply_user_settings_defaults(user: UserProfile, realm: Realm) -> None:
    """A new person starts with the organization's defaults (PATCH /realm/user_settings_defaults)."""
    settings, visibility = new_user_settings(realm)
    if settings or visibility != user.email_address_visibility:
        user.settings, user.email_address_visibility = settings, visibility
        user.email = api_email_for(user)
        user.save()


def do_create_user(realm: Realm, email: str, password: str, full_name: str, *, role: int = ROLE_MEMBER,
                   password_method: str = "scrypt", acting_user: UserProfile | None = None) -> UserProfile:
    """Create a human account, subscribed to the organization's default channels, and greet it."""
    email = check_not_placeholder(realm, check_email(email))
    full_name = check_full_name(full_name)
    if role not in ROLES:
        raise JsonableError("Invalid role")
    with write_transaction():
        if email_in_use(realm, email):
            raise JsonableError(f"Email '{email}' already in use")
        user = create_user_row(realm, email, full_name, password=password, role=role,
                               password_method=password_method)
        create_subscription_rows(default_streams(realm), [user])
    notify_user_added(user)
    send_welcome_message(user)
    return user


def do_create_bot(owner: UserProfile, full_name: str, short_name: str, bot_type: int,
                  service: BotService | None = None) -> UserProfile:
    """Create a bot owned by `owner`; its email is SHORTNAME-bot@REALMHOST. `service` holds the
    checked fields of an outgoing webhook or embedded bot (bot_services.check_service_settings)."""

    full_name = check_full_name(full_name)
    short_name = short_name.strip().lower()
    if not re.fullmatch(r"[a-z0-9_.\-]+", short_name):
        raise JsonableError("Bad name or username")
    if bot_type not in (1, 2, 3, 4):
        raise JsonableError("Invalid bot type")
    email = f"{short_name}-bot@{owner.realm.host}"
    with write_transaction():
        if email_in_use(owner.realm, email):
            raise JsonableError("Username already in use")
        bot = create_user_row(owner.realm, email, full_name, password=None, role=ROLE_MEMBER,
                              password_method=None, bot_type=bot_type, bot_owner=owner)
        service_row = create_bot_service(bot, service) if service is not None else None
        create_subscription_rows(default_streams(owner.realm), [bot])
    notify_user_added(bot)
    publish(event_catalogue.realm_bot_add(bot_dict(bot, services=service_dicts(bot, service_row))),
            bot_administrator_ids(bot))
    return bot


def notify_user_added(user: UserProfile) -> None:
    """realm_user add with the full user object, to everyone in the organization. Viewers who may
    see different fields (delivery_email) get their own copy; most share one."""

    viewers = UserProfile.select().where((UserProfile.realm == user.realm_id) & UserProfile.is_active)
    by_shape: dict[Any, Any] = {}
    for viewer in viewers:
        person = user_dict(user, viewer, client_gravatar=False)
        by_shape.setdefault(person["delivery_email"], (person, []))[1].append(viewer.id)
    for person, viewer_ids in by_shape.values():
        publish(event_catalogue.realm_user_add(person), viewer_ids)


def notify_user_updated(user: UserProfile, **fields: Any) -> None:
    """realm_user update with the changed fields."""
    publish(event_catalogue.realm_user_update(user.id, **fields), active_user_ids(user.realm_id))


def do_change_full_name(user: UserProfile, full_name: str) -> None:
    """Rename an account."""
    full_name = check_full_name(full_name)
    with write_transaction():
        UserProfile.update(full_name=full_name).where(UserProfile.id == user.id).execute()
    user.full_name = full_name
    notify_user_updated(user, full_name=full_name)


def do_change_bot_owner(bot: UserProfile, owner: UserProfile) -> UserProfile:
    """Give a bot to another member: everyone learns the new bot_owner_id; the old owner stops
    administering the bot (realm_bot delete) and the new one starts (realm_bot add), while
    administrators, who see every bot, get an update."""
    before = set(bot_administrator_ids(bot))
    with write_transaction():
        UserProfile.update(bot_owner=owner.id).where(UserProfile.id == bot.id).execute()
    bot = UserProfile.get_by_id(bot.id)
    after = set(bot_administrator_ids(bot))
    notify_user_updated(bot, bot_owner_id=owner.id)
    if before - after:
        publish(event_catalogue.realm_bot_delete(bot.id), sorted(before - after))
    if after - before:
        publish(event_catalogue.realm_bot_add(bot_dict(bot, services=service_dicts(bot, service_of(bot)))),
                sorted(after - before))
    if before & after:
        publish(event_catalogue.realm_bot_update(bot.id, owner_id=owner.id), sorted(before & after))
    return bot


def do_change_role(user: UserProfile, role: int) -> None:
    """Change an account's role and its system-group membership."""
    with write_transaction():
        UserProfile.update(role=role).where(UserProfile.id == user.id).execute()
        user.role = role
        set_role_group_membership(user, role)
    notify_user_updated(user, role=role)


def do_regenerate_api_key(user: UserProfile) -> str:
    """Give the account a new API key; the old one stops working at once."""
    key = generate_api_key()
    with write_transaction():
        UserProfile.update(api_key=key).where(UserProfile.id == user.id).execute()
    credentials_changed(user.id)
    user.api_key = key
    return key


def do_change_password(user: Any, password: str, method: str) -> None:
    """Set the account's password (chat-appliance set-password)."""
    if password_too_weak(password):
        raise JsonableError("The password is too weak.")
    hashed = hash_password(password, method)
    with write_transaction():
        UserProfile.update(password=hashed).where(UserProfile.id == user.id).execute()
    user.password = hashed


def do_change_settings(user: UserProfile, changes: JSONDict) -> list[str]:
    """Apply personal settings (already validated); returns the changed names."""
    settings = dict(user.settings or {})
    columns = {}
    for name, value in changes.items():
        if name in ("timezone", "email_address_visibility"):
            columns[name] = value
        else:
            settings[name] = value
    with write_transaction():
        for name, value in columns.items():
            setattr(user, name, value)
        user.settings = settings
        user.email = api_email_for(user)
        user.save()
        if changes.get("enable_drafts_synchronization") is False:
            delete_all_drafts(user)
    for name, value in changes.items():
        publish(event_catalogue.user_settings_update(name, value), [user.id])
    if "timezone" in changes:
        # Others show the user's local time: Zulip tells the organization too.
        notify_user_updated(user, timezone=changes["timezone"])
    if "allow_private_data_export" in changes:

        publish(event_catalogue.realm_export_consent(user.id, changes["allow_private_data_export"]),
                admin_ids(user.realm_id))
    return list(changes)


# --- administration: email changes, profile data, deactivation ------------------------

# Zulip's fixed name for an account whose profile was deleted on deactivation.
DELETED_USER_NAME = "Deleted User"
# The special permission an owner needs to change other users' addresses (PATCH new_email).
CAN_CHANGE_USER_EMAILS = "can_change_user_emails"
SPECIAL_PERMISSIONS = (CAN_CHANGE_USER_EMAILS,)


def has_permission(user: UserProfile, permission: str) -> bool:
    """Whether the user holds this special permission."""
    return UserPermission.select().where(
        (UserPermission.user_profile == user) & (UserPermission.permission == permission)).exists()


def do_set_permission(user: UserProfile, permission: str, granted: bool) -> None:
    """Grant or revoke a special permission (the CLI's set-permission, or an owner)."""
    if permission not in SPECIAL_PERMISSIONS:
        raise JsonableError(f"Invalid permission '{permission}'")
    with write_transaction():
        UserPermission.delete().where(
            (UserPermission.user_profile == user) & (UserPermission.permission == permission)).execute()
        if granted:
            UserPermission.create(user_profile=user, permission=permission)


def do_change_delivery_email(user: UserProfile, new_email: str) -> None:
    """Change an account's real address; the API email follows its visibility setting."""
    new_email = check_not_placeholder(user.realm, check_email(new_email))
    with write_transaction():
        if email_in_use(user.realm_id, new_email, except_user_id=user.id):
            raise JsonableError("Email is already in use.")
        old_api_email = user.email
        user.delivery_email = new_email
        user.email = api_email_for(user)
        user.save()
    credentials_changed(user.id)
    audience = UserProfile.select().where((UserProfile.realm == user.realm_id) & UserProfile.is_active)
    seeing = [u.id for u in audience if can_see_real_email(u, user)]
    publish(event_catalogue.realm_user_update(user.id, delivery_email=new_email), seeing)
    if user.email != old_api_email:
        # Zulip's field for a changed API email (clients re-key the user by it).
        notify_user_updated(user, new_email=user.email)


def do_deactivate_user(user: UserProfile, *, acting_user: UserProfile | None = None,
                       actions: JSONDict | None = None) -> None:
    """Deactivate an account: its bots first, each after the deletion `actions`, then the account.

    The account's API key stops working at once (authentication refuses inactive users); the
    realm_user update with is_active false lets the events layer drop the account's queues.
    """

    actions = actions or {}
    bots = list(UserProfile.select().where((UserProfile.bot_owner == user) & UserProfile.is_active))
    for target in [*bots, user]:
        audience = active_user_ids(target.realm_id)
        deleted, holders, first_ids = apply_deactivation_actions(target, actions)
        with write_transaction():
            UserProfile.update(is_active=False).where(UserProfile.id == target.id).execute()
            # Its browser sessions end for good: a reactivation must not revive a session
            # someone may have left open on a shared or lost machine.
            WebSession.delete().where(WebSession.user == target.id).execute()
            revoked_invitations = revoke_invitations_by(target)
        target.is_active = False
        if revoked_invitations:
            notify_invites_changed(target.realm_id, None)
        credentials_changed(target.id)
        notify_messages_deleted(deleted, holders, first_ids)
        if actions.get("delete_profile"):
            publish(event_catalogue.realm_user_update(target.id, full_name=target.full_name), audience)
            publish(event_catalogue.realm_user_update(target.id, avatar_version=target.avatar_version,
                                                      avatar_url=None), audience)
        publish(event_catalogue.realm_user_update(target.id, is_active=False), audience)


def messages_to_delete(user: UserProfile, actions: JSONDict) -> list[Message]:
    """The messages the deletion actions name, sent by the user."""
    query = Message.select(Message.id, Message.stream, Message.topic, Message.topic_key,
                           Message.recipient).where(Message.sender == user)
    wanted = []
    if actions.get("delete_direct_messages"):
        wanted.append(Message.stream.is_null())
    public, private = actions.get("delete_public_channel_messages"), actions.get("delete_private_channel_messages")
    if public or private:
        kinds = [flag for flag, wanted_kind in ((False, public), (True, private)) if wanted_kind]
        ids = Stream.select(Stream.id).where((Stream.realm == user.realm_id) & Stream.invite_only.in_(kinds))
        wanted.append(Message.stream.in_(ids))
    if not wanted:
        return []
    condition = wanted[0]
    for extra in wanted[1:]:
        condition = condition | extra
    return list(query.where(condition))


def apply_deactivation_actions(user: UserProfile,
                               actions: JSONDict) -> tuple[list[Message], dict[int, Any], dict[int, Any]]:
    """Delete the profile and messages the actions ask for, in one transaction.

    Returns (deleted messages, {message_id: holder ids}, {stream_id: new first_message_id}) for
    message_delete.notify_messages_deleted.
    """

    with write_transaction():
        if actions.get("delete_profile"):
            user.full_name = DELETED_USER_NAME
            # A new avatar version drops any uploaded picture: the default avatar is used.
            user.avatar_version += 1
            user.save()
        messages = messages_to_delete(user, actions)
        if not messages:
            return [], {}, {}
        holders, first_ids = delete_message_rows(messages)
    return messages, holders, first_ids


def do_reactivate_user(user: UserProfile) -> None:
    """Reactivate a deactivated account."""
    with write_transaction():
        UserProfile.update(is_active=True).where(UserProfile.id == user.id).execute()
    user.is_active = True
    notify_user_updated(user, is_active=True)
