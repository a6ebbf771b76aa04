"""Users: GET /users/me, GET /users, GET|PATCH /users/{user_id} and /users/{email}, DELETE /users/{user_id},
DELETE /users/me, POST /users/{user_id}/reactivate, POST /users, POST /bots."""

from flask import Blueprint, current_app

from chat_appliance.actions.bot_services import check_service_settings
from chat_appliance.actions.email_change import check_new_email
from chat_appliance.actions.profile_fields import check_profile_data, do_update_profile_data
from chat_appliance.actions.users import (
    CAN_CHANGE_USER_EMAILS,
    check_full_name,
    do_change_bot_owner,
    do_change_delivery_email,
    do_change_full_name,
    do_change_role,
    do_create_bot,
    do_create_user,
    do_deactivate_user,
    do_reactivate_user,
    do_regenerate_api_key,
    has_permission,
)
from chat_appliance.lib.access import access_user_by_email, access_user_by_id, only_owner, realm_accounts, require_realm_admin
from chat_appliance.lib.errors import (
    CannotDeactivateLastUserError,
    JsonableError,
    OrganizationOwnerRequiredError,
    ParamError,
)
from chat_appliance.lib.messages import max_message_id
from chat_appliance.lib.profile_data import profile_data_for
from chat_appliance.lib.snapshots import read_through
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_dict, check_int, list_of, one_of, string_max
from chat_appliance.lib.serializers import own_user_dict, user_dict
from chat_appliance.models import ROLE_ADMINISTRATOR, ROLE_OWNER, ROLES

bp = Blueprint("users", __name__)


@bp.get("/users/me")
@endpoint()
def get_own_user(user):
    """The requester's own profile, flat. Its newest message id and profile data are read at
    the data version the account was (lib/snapshots.py)."""
    newest, profile_data = read_through("own_user", user.id, getattr(user, "read_at", None),
                                        lambda: (max_message_id(user), None if user.is_bot else profile_data_for(user)))
    return own_user_dict(user, max_message_id=newest, profile_data=profile_data)


@bp.get("/users")
@endpoint(client_gravatar=Param(check_bool, default=True),
          include_custom_profile_fields=Param(check_bool, default=False))
def get_users(user, client_gravatar, include_custom_profile_fields):
    """Every account of the organization, bots and deactivated accounts included; system bots
    are Zulip's cross-realm bots and are listed by /register instead."""
    targets = realm_accounts(user.realm_id)
    return {"members": [user_dict(t, user, client_gravatar=client_gravatar,
                                  include_custom_profile_fields=include_custom_profile_fields) for t in targets]}


@bp.get("/users/<int:user_id>")
@endpoint(client_gravatar=Param(check_bool, default=True),
          include_custom_profile_fields=Param(check_bool, default=False))
def get_user(user, user_id, client_gravatar, include_custom_profile_fields):
    """One account by id."""
    target = access_user_by_id(user, user_id)
    return {"user": user_dict(target, user, client_gravatar=client_gravatar,
                              include_custom_profile_fields=include_custom_profile_fields)}


# `/users/<int:user_id>` is registered first and wins for all-digit paths; every other
# segment (an address) reaches these string routes.
@bp.get("/users/<email>")
@endpoint(client_gravatar=Param(check_bool, default=True),
          include_custom_profile_fields=Param(check_bool, default=False))
def get_user_by_email(user, email, client_gravatar, include_custom_profile_fields):
    """One account by real address (when visible to the requester) or by placeholder address."""
    target = access_user_by_email(user, email)
    return {"user": user_dict(target, user, client_gravatar=client_gravatar,
                              include_custom_profile_fields=include_custom_profile_fields)}


@bp.post("/users")
@endpoint(email=Param(), password=Param(), full_name=Param())
def create_user(user, email, password, full_name):
    """Administrators create accounts."""
    require_realm_admin(user)
    new_user = do_create_user(user.realm, email, password, full_name,
                              password_method=current_app.config["PASSWORD_HASH_METHOD"], acting_user=user)
    return {"user_id": new_user.id}


def check_role_change(acting_user, target, role):
    """Zulip's role rules: owners alone grant or remove the owner role; the last owner stays one.

    "Guests cannot be organization administrators": a guest may not be moved straight to the
    administrator or owner role. Zulip's request once carried is_admin and is_guest together
    and refused both at once; with `role` alone, the spec still names making a guest an
    administrator as BAD_REQUEST, so the promotion must go through a non-guest role first
    (member or moderator), making the elevation of an outside guest an explicit two-step act.
    """
    if role not in ROLES:
        raise JsonableError("Invalid role")
    if ROLE_OWNER in (role, target.role) and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    if target.role == ROLE_OWNER and role != ROLE_OWNER and only_owner(target):
        raise JsonableError("The owner permission cannot be removed from the only organization owner.")
    if target.is_guest and role in (ROLE_OWNER, ROLE_ADMINISTRATOR):
        raise JsonableError("Guests cannot be organization administrators")


USER_UPDATE_PARAMS = dict(
    full_name=Param(default=None),
    role=Param(check_int, default=None),
    profile_data=Param(list_of(check_dict), default=None),
    new_email=Param(default=None),
)


def update_user_as(user, target, full_name, role, profile_data, new_email):
    """PATCH /users/{id} and /users/{email} (the views require an administrator): check every
    change first, then apply them."""
    if role is not None and role != target.role:
        check_role_change(user, target, role)
    if full_name is not None:
        check_full_name(full_name)
    checked_profile = check_profile_data(user.realm_id, profile_data) if profile_data is not None else None
    if new_email is not None:
        # Zulip: an owner holding the special can_change_user_emails permission (stored per
        # user in UserPermission; granted by `chat-appliance set-permission` or an owner).
        if not (user.is_owner and has_permission(user, CAN_CHANGE_USER_EMAILS)):
            raise JsonableError("User not authorized to change user emails")
        new_email = check_new_email(target, new_email)
    if full_name is not None and full_name.strip() != target.full_name:
        do_change_full_name(target, full_name)
    if role is not None and role != target.role:
        do_change_role(target, role)
    if checked_profile:
        do_update_profile_data(target, checked_profile)
    if new_email is not None and new_email != target.delivery_email:
        do_change_delivery_email(target, new_email)


@bp.patch("/users/<int:user_id>")
@endpoint(**USER_UPDATE_PARAMS)
def update_user(user, user_id, full_name, role, profile_data, new_email):
    """Administrators rename accounts, change roles, profile data and (owners) addresses."""
    require_realm_admin(user)
    update_user_as(user, access_user_by_id(user, user_id), full_name, role, profile_data, new_email)


@bp.patch("/users/<email>")
@endpoint(**USER_UPDATE_PARAMS)
def update_user_by_email(user, email, full_name, role, profile_data, new_email):
    """As PATCH /users/{user_id}, the target found as GET /users/{email} finds it."""
    require_realm_admin(user)
    update_user_as(user, access_user_by_email(user, email), full_name, role, profile_data, new_email)


DEACTIVATION_ACTIONS = ("delete_profile", "delete_public_channel_messages", "delete_private_channel_messages",
                        "delete_direct_messages")


def check_deactivation_actions(var_name, value):
    """{"delete_profile": true, ...}: only the known boolean members."""
    value = check_dict(var_name, value)
    for key, flag in value.items():
        if key not in DEACTIVATION_ACTIONS:
            raise ParamError(f"Invalid {var_name} key: {key}")
        if not isinstance(flag, bool):
            raise ParamError(f"{var_name}[{key}] is not a boolean")
    return value


@bp.delete("/users/<int:user_id>")
@endpoint(actions=Param(check_deactivation_actions, default=None),
          deactivation_notification_comment=Param(string_max(2000), default=None))
def deactivate_user(user, user_id, actions, deactivation_notification_comment):
    """Administrators deactivate accounts (bots through DELETE /bots). The comment is accepted;
    with no email delivery here it is not sent anywhere."""
    require_realm_admin(user)
    target = access_user_by_id(user, user_id, allow_deactivated=False, allow_bots=False)
    if target.is_owner and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if target.is_owner and only_owner(target):
        raise JsonableError("Cannot deactivate the only organization owner")
    do_deactivate_user(target, acting_user=user, actions=actions)


@bp.post("/users/<int:user_id>/reactivate")
@endpoint()
def reactivate_user(user, user_id):
    """Administrators reactivate deactivated accounts."""
    require_realm_admin(user)
    target = access_user_by_id(user, user_id, allow_bots=False)
    if target.is_owner and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if target.is_active:
        raise JsonableError("User is already active")
    do_reactivate_user(target)


def access_bot(user, bot_id):
    """A bot the user owns, or any bot for an administrator; Zulip's errors otherwise."""
    bot = access_user_by_id(user, bot_id)
    if not bot.is_bot or bot.is_system_bot:
        raise JsonableError("No such bot")
    if not (user.is_realm_admin or bot.bot_owner_id == user.id):
        raise JsonableError("Insufficient permission")
    return bot


@bp.patch("/bots/<int:bot_id>")
@endpoint(full_name=Param(default=None), bot_owner_id=Param(check_int, default=None))
def update_bot(user, bot_id, full_name, bot_owner_id):
    """The bot's owner (or an administrator) renames it or gives it to another active member."""
    bot = access_bot(user, bot_id)
    if bot_owner_id is not None:
        owner = access_user_by_id(user, bot_owner_id, allow_deactivated=False, allow_bots=False)
        if owner.id != bot.bot_owner_id:
            bot = do_change_bot_owner(bot, owner)
    if full_name is not None:
        do_change_full_name(bot, full_name)
    return {"full_name": bot.full_name}


@bp.delete("/bots/<int:bot_id>")
@endpoint()
def deactivate_bot(user, bot_id):
    """The bot's owner (or an administrator) deactivates it; its key stops working at once."""
    bot = access_bot(user, bot_id)
    if not bot.is_active:
        raise JsonableError("No such bot")
    do_deactivate_user(bot, acting_user=user)


@bp.post("/bots/<int:bot_id>/api_key/regenerate")
@endpoint()
def regenerate_bot_api_key(user, bot_id):
    """A new key for a bot, from its owner or an administrator; the old one stops working at once."""
    return {"api_key": do_regenerate_api_key(access_bot(user, bot_id))}


@bp.post("/users/me/api_key/regenerate")
@endpoint()
def regenerate_own_api_key(user):
    """A new key for the requester (human accounts; a bot's owner regenerates the bot's)."""
    if user.is_bot:
        raise JsonableError("This endpoint does not accept bot requests.")
    return {"api_key": do_regenerate_api_key(user), "email": user.email}


@bp.post("/bots")
@endpoint(full_name=Param(), short_name=Param(string_max(100)),
          bot_type=Param(one_of(1, 2, 3, 4, parser=check_int), default=1),
          payload_url=Param(default=None), interface_type=Param(one_of(1, 2, parser=check_int), default=1),
          service_name=Param(default=None), config_data=Param(check_dict, default=None))
def create_bot(user, full_name, short_name, bot_type, payload_url, interface_type, service_name, config_data):
    """Any member creates a bot it then owns; guests and bots cannot. Outgoing webhook bots name
    their payload_url (and interface_type); embedded bots a zulip_bots service_name."""
    if user.is_bot:
        raise JsonableError("This endpoint does not accept bot requests.")
    if user.is_guest:
        raise JsonableError("Not allowed for guest users")
    service = check_service_settings(
        bot_type, payload_url=payload_url, interface_type=interface_type, service_name=service_name,
        config_data=config_data, allow_private=current_app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"])
    bot = do_create_bot(user, full_name, short_name, bot_type, service=service)
    return {"user_id": bot.id, "api_key": bot.api_key}


@bp.delete("/users/me")
@endpoint()
def deactivate_own_user(user):
    """Deactivate one's own account; the organization's only owner cannot."""
    if user.is_owner and only_owner(user):
        raise CannotDeactivateLastUserError()
    do_deactivate_user(user, acting_user=user)
