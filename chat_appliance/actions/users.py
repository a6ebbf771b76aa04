"""Accounts: creation (humans, bots), roles, names, API keys, personal settings."""

import re

from peewee import fn

from ..db import write_transaction
from ..events.bus import publish
from ..lib.errors import JsonableError
from ..lib.groups import set_role_group_membership
from ..lib.passwords import generate_api_key, hash_password
from ..models import ROLE_MEMBER, ROLES, UserProfile
from ..models.users import EMAIL_VISIBLE_EVERYONE

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$|^[^@\s]+@localhost$")
MAX_NAME_LENGTH = 60


def check_email(email):
    """A syntactically valid address, or BAD_REQUEST."""
    email = email.strip()
    if not EMAIL_RE.match(email) or len(email) > 254:
        raise JsonableError(f"Invalid email '{email}'")
    return email


def check_full_name(full_name):
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


def email_in_use(realm, email):
    """Whether an account of the organization already has this address."""
    lowered = email.lower()
    return (
        UserProfile.select()
        .where(
            (UserProfile.realm == realm)
            & ((fn.LOWER(UserProfile.delivery_email) == lowered) | (fn.LOWER(UserProfile.email) == lowered))
        )
        .exists()
    )


def api_email_for(user):
    """The API email: the real address if everyone may see it, else Zulip's placeholder."""
    if user.is_bot or user.email_address_visibility == EMAIL_VISIBLE_EVERYONE:
        return user.delivery_email
    return f"user{user.id}@{user.realm.host}"


def create_user_row(realm, email, full_name, *, password, role, password_method, bot_type=None,
                    bot_owner=None, is_system_bot=False):
    """Insert an account and its system-group membership; the caller holds the transaction."""
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
        password=hash_password(password, password_method) if password else None,
    )
    set_role_group_membership(user, role)
    return user


def do_create_user(realm, email, password, full_name, *, role=ROLE_MEMBER, password_method="scrypt",
                   acting_user=None):
    """Create a human account, subscribed to the organization's default channels, and greet it."""
    from .channels import default_streams, subscribe_users_to_streams
    from .welcome import send_welcome_message

    email = check_email(email)
    full_name = check_full_name(full_name)
    if role not in ROLES:
        raise JsonableError("Invalid role")
    with write_transaction():
        if email_in_use(realm, email):
            raise JsonableError(f"Email '{email}' already in use")
        user = create_user_row(realm, email, full_name, password=password, role=role,
                               password_method=password_method)
        subscribe_users_to_streams(default_streams(realm), [user], acting_user=acting_user, notify=False)
    notify_user_added(user)
    send_welcome_message(user)
    return user


def do_create_bot(owner, full_name, short_name, bot_type):
    """Create a bot owned by `owner`; its email is SHORTNAME-bot@REALMHOST."""
    from .channels import default_streams, subscribe_users_to_streams

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
        subscribe_users_to_streams(default_streams(owner.realm), [bot], acting_user=owner, notify=False)
    notify_user_added(bot)
    return bot


def active_user_ids(realm_id):
    """Every active account of the organization (the audience of realm_user events)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where((UserProfile.realm == realm_id) & UserProfile.is_active)]


def notify_user_added(user):
    """realm_user add with the full user object, to everyone in the organization. Viewers who may
    see different fields (delivery_email) get their own copy; most share one."""
    from ..lib.serializers import user_dict

    viewers = UserProfile.select().where((UserProfile.realm == user.realm_id) & UserProfile.is_active)
    by_shape = {}
    for viewer in viewers:
        person = user_dict(user, viewer, client_gravatar=False)
        by_shape.setdefault(person["delivery_email"], (person, []))[1].append(viewer.id)
    for person, viewer_ids in by_shape.values():
        publish({"type": "realm_user", "op": "add", "person": person}, viewer_ids)


def notify_user_updated(user, **fields):
    """realm_user update with the changed fields."""
    publish({"type": "realm_user", "op": "update", "person": {"user_id": user.id, **fields}},
            active_user_ids(user.realm_id))


def do_change_full_name(user, full_name):
    """Rename an account."""
    full_name = check_full_name(full_name)
    with write_transaction():
        UserProfile.update(full_name=full_name).where(UserProfile.id == user.id).execute()
    user.full_name = full_name
    notify_user_updated(user, full_name=full_name)


def do_change_role(user, role):
    """Change an account's role and its system-group membership."""
    with write_transaction():
        UserProfile.update(role=role).where(UserProfile.id == user.id).execute()
        user.role = role
        set_role_group_membership(user, role)
    notify_user_updated(user, role=role)


def do_regenerate_api_key(user):
    """Give the account a new API key; the old one stops working at once."""
    key = generate_api_key()
    with write_transaction():
        UserProfile.update(api_key=key).where(UserProfile.id == user.id).execute()
    user.api_key = key
    return key


def do_change_settings(user, changes):
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
    for name, value in changes.items():
        publish({"type": "user_settings", "op": "update", "property": name, "value": value}, [user.id])
    return list(changes)

