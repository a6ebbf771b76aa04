"""A channel's life and the organization's channel lists: POST /channels/create, DELETE
/streams/{id} (archive), /default_streams, GET /streams/{id}/email_address."""

from flask import Blueprint

from chat_appliance.actions.channel_folders import access_folder
from chat_appliance.actions.channel_lifecycle import (
    can_administer_channel,
    check_create_permission,
    do_archive_stream,
    do_change_default_stream,
    do_create_channel,
    do_get_channel_email_address,
    notification_bot,
)
from chat_appliance.actions.channels import check_stream_name
from chat_appliance.lib.access import (
    access_stream_by_id,
    get_stream_by_name,
    group_in_realm,
    require_realm_admin,
    user_in_realm,
)
from chat_appliance.lib.errors import ChannelAlreadyExistsError, JsonableError, OrganizationAdministratorRequiredError
from chat_appliance.lib.onboarding_settings import can_subscribe_other_users
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_group_id, check_int, list_of
from chat_appliance.lib.serializers import STREAM_GROUP_SETTINGS
from chat_appliance.api.channel_folders import check_folder_id
from chat_appliance.web.context import limits

bp = Blueprint("channel_lifecycle", __name__)


def check_group_settings(realm_id, settings):
    """Group ids of channel permission settings, each a group of the organization."""
    chosen = {}
    for name, group_id in settings.items():
        if group_id is None:
            continue
        if group_in_realm(realm_id, group_id) is None:
            raise JsonableError(f"Invalid user group ID: {group_id}")
        chosen[name] = group_id
    return chosen


def users_by_ids(requester, user_ids):
    """Active accounts of the organization, in order, without repeats."""
    users = []
    for user_id in dict.fromkeys(user_ids):
        target = user_in_realm(requester.realm_id, user_id)
        if target is None or not target.is_active:
            raise JsonableError("No such user")
        users.append(target)
    return users


@bp.post("/channels/create")
@endpoint(name=Param(), subscribers=Param(list_of(check_int)), description=Param(default=""),
          invite_only=Param(check_bool, default=False), history_public_to_subscribers=Param(check_bool, default=None),
          is_web_public=Param(check_bool, default=False), is_default_stream=Param(check_bool, default=False),
          folder_id=Param(check_folder_id, default=None), announce=Param(check_bool, default=False),
          send_new_subscription_messages=Param(check_bool, default=True),
          **{name: Param(check_group_id, default=None) for name in STREAM_GROUP_SETTINGS})
def create_channel(user, name, subscribers, description, invite_only, history_public_to_subscribers, is_web_public,
                   is_default_stream, folder_id, announce, send_new_subscription_messages, **group_settings):
    """Create a channel with its settings, subscribing the given users. `announce` is accepted: no
    new-channel announcement channel is configured on this server, so nothing is announced."""

    check_create_permission(user, invite_only=invite_only, is_web_public=is_web_public)
    name = check_stream_name(name, limits())
    if get_stream_by_name(user.realm_id, name) is not None:
        raise ChannelAlreadyExistsError(name)
    if len(description) > limits().max_stream_description_length:
        raise JsonableError(f"description is too long (limit: {limits().max_stream_description_length} characters)")
    if is_default_stream:
        if not user.is_realm_admin:
            raise OrganizationAdministratorRequiredError()
        if invite_only:
            raise JsonableError("A default channel cannot be private.")
    if folder_id is not None:
        access_folder(user.realm_id, folder_id)
    targets = users_by_ids(user, subscribers)
    if any(t.id != user.id for t in targets) and not can_subscribe_other_users(user):
        raise JsonableError("You do not have permission to subscribe other users to channels.")
    stream = do_create_channel(user, name, description=description, invite_only=invite_only,
                               history_public_to_subscribers=history_public_to_subscribers,
                               is_web_public=is_web_public, is_default_stream=is_default_stream,
                               folder_id=folder_id, group_settings=check_group_settings(user.realm_id, group_settings),
                               subscribers=targets, send_new_subscription_messages=send_new_subscription_messages)
    return {"id": stream.id}


@bp.delete("/streams/<int:stream_id>")
@endpoint()
def archive_stream(user, stream_id):
    """Archive a channel (administrators and the channel's administrators)."""
    stream = access_stream_by_id(user, stream_id)
    if not can_administer_channel(user, stream):
        raise OrganizationAdministratorRequiredError()
    do_archive_stream(stream, user)


def access_default_stream_candidate(user, stream_id):
    """An active channel of the organization, for the default-channel endpoints (administrators)."""
    require_realm_admin(user)
    stream = access_stream_by_id(user, stream_id)
    if stream.deactivated:
        raise JsonableError("Invalid channel ID")
    return stream


@bp.post("/default_streams")
@endpoint(stream_id=Param(check_int))
def add_default_stream(user, stream_id):
    """Make a public channel one that new users join."""
    do_change_default_stream(user.realm, access_default_stream_candidate(user, stream_id), True)


@bp.delete("/default_streams")
@endpoint(stream_id=Param(check_int))
def remove_default_stream(user, stream_id):
    """Stop giving a channel to new users."""
    do_change_default_stream(user.realm, access_default_stream_candidate(user, stream_id), False)


@bp.get("/streams/<int:stream_id>/email_address")
@endpoint(sender_id=Param(check_int, default=None))
def get_stream_email_address(user, stream_id, sender_id):
    """The channel's email address. The sender is the requester, a bot they own, or (the default)
    Notification Bot, which stands in for Zulip's Email gateway bot; no email is received here."""
    stream = access_stream_by_id(user, stream_id)
    default_sender = notification_bot(user.realm)
    if sender_id is None or sender_id == default_sender.id:
        sender = default_sender
    elif sender_id == user.id:
        sender = user
    else:
        sender = user_in_realm(user.realm_id, sender_id)
        if sender is None or not sender.is_bot or sender.is_system_bot:
            raise JsonableError("No such bot")
        if sender.bot_owner_id != user.id and not user.is_realm_admin:
            raise JsonableError("Insufficient permission")
    return {"email": do_get_channel_email_address(user, stream, sender)}


