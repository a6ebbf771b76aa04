"""Users: GET /users/me, GET /users, GET|PATCH /users/{user_id}, POST /users, POST /bots."""

from flask import current_app
from flask import Blueprint
from peewee import fn

from ..actions.users import do_change_full_name, do_change_role, do_create_bot, do_create_user
from ..lib.access import access_user_by_id, require_realm_admin
from ..lib.errors import JsonableError, OrganizationOwnerRequiredError
from ..lib.params import Param, check_bool, check_int, endpoint, one_of
from ..lib.serializers import own_user_dict, user_dict
from ..models import ROLE_OWNER, ROLES, UserMessage, UserProfile

bp = Blueprint("users", __name__)


def max_message_id(user):
    """The newest message id in the user's history; -1 when there is none (Zulip)."""
    newest = UserMessage.select(fn.MAX(UserMessage.message)).where(UserMessage.user_profile == user).scalar()
    return newest if newest is not None else -1


@bp.get("/users/me")
@endpoint()
def get_own_user(user):
    """The requester's own profile, flat."""
    return own_user_dict(user, max_message_id=max_message_id(user))


@bp.get("/users")
@endpoint(client_gravatar=Param(check_bool, default=True),
          include_custom_profile_fields=Param(check_bool, default=False))
def get_users(user, client_gravatar, include_custom_profile_fields):
    """Every account of the organization, bots and deactivated accounts included; system bots
    are Zulip's cross-realm bots and are listed by /register instead."""
    targets = (UserProfile.select()
               .where((UserProfile.realm == user.realm_id) & ~UserProfile.is_system_bot)
               .order_by(UserProfile.id))
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


@bp.post("/users")
@endpoint(email=Param(), password=Param(), full_name=Param())
def create_user(user, email, password, full_name):
    """Administrators create accounts."""
    require_realm_admin(user)
    new_user = do_create_user(user.realm, email, password, full_name,
                              password_method=current_app.config["PASSWORD_HASH_METHOD"], acting_user=user)
    return {"user_id": new_user.id}


def check_role_change(acting_user, target, role):
    """Zulip's role rules: owners alone grant or remove the owner role; the last owner stays one."""
    if role not in ROLES:
        raise JsonableError("Invalid role")
    if ROLE_OWNER in (role, target.role) and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    if target.role == ROLE_OWNER and role != ROLE_OWNER and only_owner(target):
        raise JsonableError("The owner permission cannot be removed from the only organization owner.")


def only_owner(target):
    """Whether the target is the organization's only active human owner."""
    owners = UserProfile.select().where(
        (UserProfile.realm == target.realm_id) & (UserProfile.role == ROLE_OWNER) & UserProfile.is_active
        & ~UserProfile.is_bot
    )
    return owners.count() == 1 and owners.first().id == target.id


@bp.patch("/users/<int:user_id>")
@endpoint(full_name=Param(default=None), role=Param(check_int, default=None))
def update_user(user, user_id, full_name, role):
    """Administrators rename accounts and change roles."""
    require_realm_admin(user)
    target = access_user_by_id(user, user_id)
    if role is not None and role != target.role:
        check_role_change(user, target, role)
    if full_name is not None and full_name != target.full_name:
        do_change_full_name(target, full_name)
    if role is not None and role != target.role:
        do_change_role(target, role)


@bp.post("/bots")
@endpoint(full_name=Param(), short_name=Param(), bot_type=Param(one_of(1, 2, 3, 4, parser=check_int), default=1))
def create_bot(user, full_name, short_name, bot_type):
    """Any member creates a bot it then owns; guests cannot."""
    if user.is_guest:
        raise JsonableError("Not allowed for guest users")
    bot = do_create_bot(user, full_name, short_name, bot_type)
    return {"user_id": bot.id, "api_key": bot.api_key}
