"""Channels and subscriptions: /users/me/subscriptions(/properties), GET /users/{id}/subscriptions/{stream_id},
/streams, /get_stream_id."""

import re

from flask import Blueprint

from chat_appliance.actions.channel_folders import access_folder
from chat_appliance.actions.channel_lifecycle import check_archive_change, check_create_permission, do_unarchive_stream
from chat_appliance.actions.channels import (
    check_stream_name,
    do_change_subscription_properties,
    do_subscribe_creating_streams,
    do_update_stream,
    unsubscribe_users,
)
from chat_appliance.lib.access import (
    access_stream_by_id,
    access_stream_by_name,
    access_user_by_id,
    active_subscription,
    can_access_stream_metadata,
    find_users_by_emails,
    get_stream_by_name,
    group_in_realm,
    is_subscribed,
    require_realm_admin,
    streams_and_subscriptions,
    streams_by_names,
    users_in_realm,
)
from chat_appliance.lib.errors import JsonableError, ParamError, UnauthorizedPrincipalError
from chat_appliance.lib.onboarding_settings import can_subscribe_other_users
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import (
    check_any_json,
    check_bool,
    check_dict,
    check_group_id,
    check_json_list,
    check_string,
    dedupe,
    list_of,
)
from chat_appliance.lib.serializers import STREAM_GROUP_SETTINGS, stream_dict
from chat_appliance.lib.subscriptions import (
    realm_streams,
    subscribed_stream_ids,
    subscriber_counts,
    subscriber_ids,
    subscription_list,
)
from chat_appliance.api.channel_folders import check_folder_id
from chat_appliance.web.context import limits

bp = Blueprint("channels", __name__)


def check_principals(var_name, value):
    """A JSON list of emails or of user ids, repeats dropped."""
    value = check_any_json(var_name, value)
    if not isinstance(value, list) or not all(
        isinstance(p, str) or (isinstance(p, int) and not isinstance(p, bool)) for p in value
    ):
        raise ParamError(f"{var_name} is not a list of strings or integers")
    return dedupe(value)


def principals_to_users(requester, principals):
    """Resolve emails or ids to active accounts of the organization (two queries, whatever
    their number)."""
    by_id = users_in_realm(requester.realm_id, [p for p in principals if isinstance(p, int)])
    by_email = find_users_by_emails(requester, [p for p in principals if isinstance(p, str)])
    users = []
    for principal in principals:
        target = by_id.get(principal) if isinstance(principal, int) else by_email[principal]
        if target is None or not target.is_active:
            raise UnauthorizedPrincipalError(principal)
        users.append(target)
    return users


def check_subscription_requests(var_name, value):
    """subscriptions=[{"name": ..., "description": ...}]"""
    items = list_of(check_dict)(var_name, value)
    specs = []
    for index, item in enumerate(items):
        name = item.get("name")
        if not isinstance(name, str):
            raise ParamError(f'{var_name}[{index}]["name"] is missing or not a string')
        description = item.get("description", "")
        if not isinstance(description, str):
            raise ParamError(f'{var_name}[{index}]["description"] is not a string')
        specs.append((name, description))
    return specs


def may_subscribe_self(user, stream, mine):
    """Public channels for members; private ones only for those already in them (`mine`: the
    ids of the user's channels)."""
    if stream.invite_only:
        return stream.id in mine
    return not user.is_guest


@bp.post("/users/me/subscriptions")
@endpoint(
    subscriptions=Param(check_subscription_requests),
    principals=Param(check_principals, default=None),
    authorization_errors_fatal=Param(check_bool, default=True),
    invite_only=Param(check_bool, default=False),
    history_public_to_subscribers=Param(check_bool, default=None),
    announce=Param(check_bool, default=False),
)
def subscribe(user, subscriptions, principals, authorization_errors_fatal, invite_only,
              history_public_to_subscribers, announce):
    """Subscribe the requester (or principals) to channels, creating missing ones."""
    targets = principals_to_users(user, principals) if principals else [user]
    acting_for_others = any(t.id != user.id for t in targets)
    if acting_for_others and not can_subscribe_other_users(user):
        raise JsonableError("Insufficient permission")
    authorized, unauthorized = [], []
    to_create = []
    existing = streams_by_names(user.realm_id, [name for name, _ in subscriptions])
    mine = subscribed_stream_ids(user)
    for name, description in subscriptions:
        stream = existing.get(name.strip().lower())
        if stream is None:
            to_create.append((name, description))
        elif may_subscribe_self(user, stream, mine) or (user.is_realm_admin and not stream.invite_only):
            authorized.append(stream)
        else:
            unauthorized.append(stream)
    if to_create:
        check_create_permission(user, invite_only=invite_only, is_web_public=False)
    if unauthorized and authorization_errors_fatal:
        raise JsonableError(f"Unable to access channel ({unauthorized[0].name}).")
    added, already = do_subscribe_creating_streams(user, targets, authorized, to_create, invite_only=invite_only,
                                                   history_public_to_subscribers=history_public_to_subscribers,
                                                   limits=limits())
    result = {"subscribed": {}, "already_subscribed": {}}
    for key, pairs in (("subscribed", added), ("already_subscribed", already)):
        for target, stream in pairs:
            result[key].setdefault(str(target.id), []).append(stream.name)
    if not authorization_errors_fatal:
        result["unauthorized"] = [s.name for s in unauthorized]
    return result


@bp.delete("/users/me/subscriptions")
@endpoint(subscriptions=Param(list_of(check_string)), principals=Param(check_principals, default=None))
def unsubscribe(user, subscriptions, principals):
    """Unsubscribe the requester (or, for administrators, principals) from channels."""
    targets = principals_to_users(user, principals) if principals else [user]
    if any(t.id != user.id for t in targets) and not user.is_realm_admin:
        raise JsonableError("Insufficient permission")
    streams = []
    existing = streams_by_names(user.realm_id, subscriptions)
    for name in subscriptions:
        stream = existing.get(name.strip().lower())
        if stream is None or not can_access_stream_metadata(user, stream):
            raise JsonableError(f"Channel(s) ({name}) do not exist")
        streams.append(stream)
    removed, not_removed = unsubscribe_users(streams, targets)
    return {"removed": [s.name for _u, s in removed], "not_removed": [s.name for _u, s in not_removed]}


def parse_include_subscribers(var_name, value):
    """true, false, or partial."""
    if value in ("true", "false", "partial"):
        return value
    raise ParamError(f"Invalid {var_name}")


@bp.get("/users/me/subscriptions")
@endpoint(include_subscribers=Param(parse_include_subscribers, default="false"))
def get_subscriptions(user, include_subscribers):
    """The requester's active subscriptions."""
    return {"subscriptions": subscription_list(user, include_subscribers=include_subscribers)}


@bp.get("/streams")
@endpoint(
    include_public=Param(check_bool, default=True),
    include_web_public=Param(check_bool, default=False),
    include_subscribed=Param(check_bool, default=True),
    include_all_active=Param(check_bool, default=False),
    include_all=Param(check_bool, default=False),
    include_default=Param(check_bool, default=False),
    include_owner_subscribed=Param(check_bool, default=False),
    include_can_access_content=Param(check_bool, default=False),
    exclude_archived=Param(check_bool, default=True),
)
def get_streams(user, include_public, include_web_public, include_subscribed, include_all_active, include_all,
                include_default, include_owner_subscribed, include_can_access_content, exclude_archived):
    """Channels the requester may see, filtered as asked."""
    if (include_all_active or include_all) and not user.is_realm_admin:
        raise JsonableError("User not authorized for this query")
    subscribed = subscribed_stream_ids(user)
    default_ids = set((user.realm.settings or {}).get("default_stream_ids", []))
    chosen = []
    for stream in realm_streams(user.realm_id, exclude_archived=exclude_archived):
        is_sub = stream.id in subscribed
        if not can_access_stream_metadata(user, stream, subscribed=is_sub):
            continue
        wanted = (
            include_all_active or include_all
            or (include_public and not stream.invite_only and not user.is_guest)
            or (include_subscribed and is_sub)
            or (include_default and stream.id in default_ids)
            or (include_web_public and stream.is_web_public)
            or (include_can_access_content and (is_sub or not stream.invite_only))
        )
        if wanted:
            chosen.append(stream)
    counts = subscriber_counts([s.id for s in chosen])
    return {"streams": [dict(stream_dict(s, subscriber_count=counts[s.id]), is_default=s.id in default_ids)
                        for s in chosen]}


@bp.get("/get_stream_id")
@endpoint(stream=Param())
def get_stream_id(user, stream):
    """A channel's id by name."""
    return {"stream_id": access_stream_by_name(user, stream).id}


@bp.get("/streams/<int:stream_id>")
@endpoint()
def get_stream(user, stream_id):
    """One channel by id."""
    stream = access_stream_by_id(user, stream_id)
    return {"stream": stream_dict(stream, subscriber_count=subscriber_counts([stream.id])[stream.id])}


UNSET = object()
STREAM_SETTING_PARAMS = {name: Param(check_group_id, default=None) for name in STREAM_GROUP_SETTINGS}


@bp.patch("/streams/<int:stream_id>")
@endpoint(description=Param(default=None), new_name=Param(default=None), is_private=Param(check_bool, default=None),
          history_public_to_subscribers=Param(check_bool, default=None),
          is_default_stream=Param(check_bool, default=None), folder_id=Param(check_folder_id, default=UNSET),
          is_archived=Param(check_bool, default=None), **STREAM_SETTING_PARAMS)
def update_stream(user, stream_id, description, new_name, is_private, history_public_to_subscribers,
                  is_default_stream, folder_id, is_archived, **group_settings):
    """Administrators rename, describe, make private or public, set default, file into a folder,
    and change a channel's permission groups."""

    require_realm_admin(user)
    stream = access_stream_by_id(user, stream_id)
    if is_archived is not None:

        check_archive_change(stream, is_archived)
    changes = {}
    if new_name is not None and new_name.strip() != stream.name:
        name = check_stream_name(new_name, limits())
        clash = get_stream_by_name(user.realm_id, name)
        if clash is not None and clash.id != stream.id:
            raise JsonableError(f"Channel '{name}' already exists")
        changes["name"] = name
    if description is not None and description != stream.description:
        limit = limits().max_stream_description_length
        if len(description) > limit:
            raise JsonableError(f"description is too long (limit: {limit} characters)")
        changes["description"] = description
    invite_only = stream.invite_only if is_private is None else is_private
    if invite_only != stream.invite_only:
        changes["invite_only"] = invite_only
    history = history_public_to_subscribers
    if not invite_only:
        history = True  # public channels always share their history (Zulip)
    if history is not None and history != stream.history_public_to_subscribers:
        changes["history_public_to_subscribers"] = history
    if is_default_stream is not None:
        if is_default_stream and invite_only:
            raise JsonableError("A default channel cannot be private.")
        if is_default_stream != (stream.id in (user.realm.settings or {}).get("default_stream_ids", [])):
            changes["is_default_stream"] = is_default_stream
    if folder_id is not UNSET and folder_id != stream.folder_id:
        if folder_id is not None:
            access_folder(user.realm_id, folder_id)
        changes["folder_id"] = folder_id
    for name, group_id in group_settings.items():
        if group_id is None:
            continue
        if group_in_realm(user.realm_id, group_id) is None:
            raise JsonableError(f"Invalid user group ID: {group_id}")
        if stream.settings.get(name) != group_id:
            changes[name] = group_id
    if is_archived is False:

        do_unarchive_stream(stream, user)
    if changes:
        do_update_stream(stream, changes)


@bp.get("/streams/<int:stream_id>/members")
@endpoint()
def get_subscribers(user, stream_id):
    """Ids of a channel's subscribers."""
    stream = access_stream_by_id(user, stream_id)
    return {"subscribers": sorted(subscriber_ids(stream))}


# The personal properties of a subscription a user may change, and each one's value parser.
# Colours are "#rgb" or "#rrggbb": zulip-terminal refuses to start on anything else.
HEX_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")


def check_color(var_name, value):
    """A hex colour code."""
    if not isinstance(value, str) or not HEX_COLOR.match(value):
        raise ParamError(f"{var_name} is not a valid hex color code")
    return value.lower()


def check_strict_bool(var_name, value):
    """A boolean inside a JSON object (already decoded)."""
    if not isinstance(value, bool):
        raise ParamError(f"{var_name} is not a boolean")
    return value


SUBSCRIPTION_PROPERTIES = {
    "color": check_color,
    "is_muted": check_strict_bool,
    "in_home_view": check_strict_bool,
    "pin_to_top": check_strict_bool,
    "desktop_notifications": check_strict_bool,
    "audible_notifications": check_strict_bool,
    "push_notifications": check_strict_bool,
    "email_notifications": check_strict_bool,
    "wildcard_mentions_notify": check_strict_bool,
}


def check_subscription_data(var_name, value):
    """A JSON list of {stream_id, property, value}."""
    value = check_json_list(var_name, value)
    items = []
    for i, item in enumerate(value):
        name = f"{var_name}[{i}]"
        if not isinstance(item, dict):
            raise ParamError(f"{name} is not a dict")
        for key in ("stream_id", "property", "value"):
            if key not in item:
                raise ParamError(f"{key} key is missing from {name}")
        if isinstance(item["stream_id"], bool) or not isinstance(item["stream_id"], int):
            raise ParamError(f'{name}["stream_id"] is not an integer')
        prop = item["property"]
        if prop not in SUBSCRIPTION_PROPERTIES:
            raise JsonableError(f"Unknown subscription property: {prop}")
        items.append((item["stream_id"], prop, SUBSCRIPTION_PROPERTIES[prop](prop, item["value"])))
    return items


@bp.post("/users/me/subscriptions/properties")
@endpoint(subscription_data=Param(check_subscription_data))
def update_subscription_properties(user, subscription_data):
    """Change personal properties (colour, muting, pinning, notifications) of the requester's
    subscriptions; all or nothing."""
    changes = []
    # Two queries for the whole list, however long (a query per item made a long list hold a worker for seconds).
    streams, subs = streams_and_subscriptions(user, {stream_id for stream_id, _prop, _value in subscription_data})
    for stream_id, prop, value in subscription_data:
        stream = streams.get(stream_id)
        sub = subs.get(stream_id)
        if stream is None or not can_access_stream_metadata(user, stream, subscribed=sub is not None):
            raise JsonableError("Invalid channel ID")
        if sub is None:
            raise JsonableError(f"Not subscribed to channel ID {stream_id}")
        changes.append((sub, prop, value))
    do_change_subscription_properties(changes)


@bp.get("/users/<int:user_id>/subscriptions/<int:stream_id>")
@endpoint()
def get_subscription_status(user, user_id, stream_id):
    """Whether a user is subscribed to a channel the requester may see."""
    target = access_user_by_id(user, user_id)
    stream = access_stream_by_id(user, stream_id)
    return {"is_subscribed": is_subscribed(target, stream)}


def check_add_requests(var_name, value):
    """add=[{"name": ..., "color": ..., "description": ...}]"""
    items = list_of(lambda name, item: item)(var_name, value)
    specs = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ParamError(f"{var_name}[{index}] is not a dict")
        name = item.get("name")
        if not isinstance(name, str):
            raise ParamError(f'{var_name}[{index}]["name"] is missing or not a string')
        description = item.get("description", "")
        if not isinstance(description, str):
            raise ParamError(f'{var_name}[{index}]["description"] is not a string')
        color = check_color(f'{var_name}[{index}]["color"]', item["color"]) if "color" in item else None
        specs.append((name, description, color))
    return specs


@bp.patch("/users/me/subscriptions")
@endpoint(add=Param(check_add_requests, default=[]), delete=Param(list_of(check_string), default=[]))
def update_subscriptions(user, add, delete):
    """Subscribe to (creating as needed) and unsubscribe from channels in one request, as POST and
    DELETE /users/me/subscriptions do; every channel to leave is checked before anything changes."""

    if not add and not delete:
        raise JsonableError('Nothing to do. Specify at least one of "add" or "delete".')
    for name in delete:
        stream = get_stream_by_name(user.realm_id, name)
        if stream is None or not can_access_stream_metadata(user, stream):
            raise JsonableError(f"Channel(s) ({name}) do not exist")
    result = {"subscribed": {}, "already_subscribed": {}, "removed": [], "not_removed": []}
    if add:
        # The views of POST and DELETE /users/me/subscriptions, called with their defaults.
        added = subscribe.__wrapped__(user, subscriptions=[(name, description) for name, description, _color in add],
                                      principals=None, authorization_errors_fatal=True, invite_only=False,
                                      history_public_to_subscribers=None, announce=False)
        result.update(subscribed=added["subscribed"], already_subscribed=added["already_subscribed"])
        newly = set(added["subscribed"].get(str(user.id), []))
        colors = []
        for name, _description, color in add:
            stream = get_stream_by_name(user.realm_id, name)
            if color is not None and stream is not None and stream.name in newly:
                sub = active_subscription(user, stream)
                colors.append((sub, "color", color))
        if colors:
            do_change_subscription_properties(colors)
    if delete:
        result.update(unsubscribe.__wrapped__(user, subscriptions=delete, principals=None))
    return result
