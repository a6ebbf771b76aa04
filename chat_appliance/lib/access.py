"""Permission checks: `access_*` fetch an object the requester may see, or raise.

Rules (Zulip's): a public channel is visible to every member, but to a guest only when the
guest is subscribed; a private channel is visible to its subscribers and to administrators
(who may see that it exists, not read it). Nobody learns that an invisible channel exists:
invisible and missing channels give the same error.
"""

from __future__ import annotations

from typing import Any, Iterable

from chat_appliance.models import (EMAIL_VISIBLE_ADMINS, EMAIL_VISIBLE_EVERYONE, EMAIL_VISIBLE_MEMBERS,
                                   EMAIL_VISIBLE_MODERATORS, ROLE_OWNER, Message, Realm, Stream, Subscription,
                                   UserGroup, UserMessage, UserProfile)
from chat_appliance.models.base import instance_from_row, query_rows, raw_select, raw_select_rows
from chat_appliance.lib.errors import JsonableError, OrganizationAdministratorRequiredError
from chat_appliance.lib.snapshots import read_through
from chat_appliance.lib.validators import is_id_string


def require_realm_admin(user: UserProfile) -> None:
    """Administrators and owners only."""
    if not user.is_realm_admin:
        raise OrganizationAdministratorRequiredError()


def can_see_real_email(requester: UserProfile, target: UserProfile) -> bool:
    """Whether the requester may see the target's delivery_email."""
    return (requester.id == target.id or target.is_bot
            or target.email_address_visibility in visible_email_settings(requester))


def visible_email_settings(requester: UserProfile) -> frozenset[int]:
    """The values of email_address_visibility whose accounts' real addresses the requester may
    see (besides their own, and bots'): asked once for a page of messages by many senders."""
    if requester.is_realm_admin:
        return _EMAIL_SEEN_BY_ADMINS
    if requester.is_moderator:
        return _EMAIL_SEEN_BY_MODERATORS
    return _EMAIL_SEEN_BY_GUESTS if requester.is_guest else _EMAIL_SEEN_BY_MEMBERS


_EMAIL_SEEN_BY_GUESTS = frozenset({EMAIL_VISIBLE_EVERYONE})
_EMAIL_SEEN_BY_MEMBERS = _EMAIL_SEEN_BY_GUESTS | {EMAIL_VISIBLE_MEMBERS}
_EMAIL_SEEN_BY_MODERATORS = _EMAIL_SEEN_BY_MEMBERS | {EMAIL_VISIBLE_MODERATORS}
_EMAIL_SEEN_BY_ADMINS = _EMAIL_SEEN_BY_MODERATORS | {EMAIL_VISIBLE_ADMINS}


def access_user_by_id(requester: UserProfile, user_id: int, *, allow_deactivated: bool = True,
                      allow_bots: bool = True) -> UserProfile:
    """A user of the requester's organization by id, or BAD_REQUEST 'No such user'."""
    target = UserProfile.get_or_none((UserProfile.id == user_id) & (UserProfile.realm == requester.realm_id))
    return _accessible_user(target, allow_deactivated=allow_deactivated, allow_bots=allow_bots)


def _accessible_user(target: UserProfile | None, *, allow_deactivated: bool, allow_bots: bool) -> UserProfile:
    """`target` (None: not in the organization) if the caller may name it, else Zulip's error."""
    if target is None or target.is_system_bot and not allow_bots:
        raise JsonableError("No such user")
    if not allow_deactivated and not target.is_active:
        raise JsonableError("User is deactivated")
    if not allow_bots and target.is_bot:
        raise JsonableError("No such user")
    return target


def find_user_by_email(requester: UserProfile, email: str) -> UserProfile | None:
    """The organization's account an address names, as the requester may name it: its API email
    (the placeholder user{id}@{host} when its real address is hidden), or its real address only
    when the requester may see that. None otherwise, so that nobody confirms a hidden address or
    ties it to a user id by trying it in a narrow, a recipient list or a principal."""
    target = UserProfile.get_by_login_email(email)
    if target is None or target.realm_id != requester.realm_id:
        return None
    if target.email.lower() != email.strip().lower() and not can_see_real_email(requester, target):
        return None
    return target


def access_user_by_email(requester: UserProfile, email: str) -> UserProfile:
    """A user by the placeholder `user{id}@{realm host}` (any user), or by real address when the
    target's email visibility lets the requester see it; else BAD_REQUEST 'No such user'."""
    from peewee import fn

    local, _, host = email.strip().lower().rpartition("@")
    if host == requester.realm.host.lower() and local.startswith("user") and is_id_string(local[4:]):
        return access_user_by_id(requester, int(local[4:]))
    target = UserProfile.get_or_none((UserProfile.realm == requester.realm_id)
                                     & (fn.LOWER(UserProfile.delivery_email) == email.strip().lower()))
    if target is None or target.is_system_bot or not can_see_real_email(requester, target):
        raise JsonableError("No such user")
    return target


def is_subscribed(user: UserProfile, stream: Stream, at: int | None = None) -> bool:
    """Whether the user has an active subscription to the channel. `at`, here and below: the
    configuration generation to keep the read with (lib/snapshots.py), for a caller that read it
    before anything it read or wrote; None reads."""
    user_id, stream_id = getattr(user, "id", user), getattr(stream, "id", stream)
    return read_through("subscribed", (user_id, stream_id), at, lambda: bool(query_rows(
        'SELECT 1 FROM "subscription" WHERE "user_profile_id" = {p} AND "stream_id" = {p} AND "active" LIMIT 1',
        user_id, stream_id)))


def can_access_stream_metadata(user: UserProfile, stream: Stream, subscribed: bool | None = None) -> bool:
    """May the user know the channel exists (name, description, subscribers)?"""
    if stream.realm_id != user.realm_id:
        return False
    if subscribed is None:
        subscribed = is_subscribed(user, stream)
    if subscribed:
        return True
    if stream.invite_only:
        return user.is_realm_admin
    return not user.is_guest


def can_read_stream_history(user: UserProfile, stream: Stream, subscribed: bool | None = None) -> bool:
    """May the user read the channel's messages, including those from before they joined?"""
    if stream.realm_id != user.realm_id:
        return False
    if subscribed is None:
        subscribed = is_subscribed(user, stream)
    if stream.invite_only or user.is_guest:
        return subscribed and stream.history_public_to_subscribers
    return True


def access_stream_by_id(user: UserProfile, stream_id: int | None) -> Stream:
    """A channel the user may see, or BAD_REQUEST 'Invalid channel ID'."""
    stream = next(iter(raw_select(Stream, '"id" = {p} AND "realm_id" = {p}', stream_id, user.realm_id)), None)
    if stream is None or not can_access_stream_metadata(user, stream):
        raise JsonableError("Invalid channel ID")
    return stream


def access_stream_for_topic_deletion(user: Any, stream_id: int | None) -> Any:
    """(channel, received_by) for an administrator deleting a topic: administrators see that
    private channels exist, but only subscribers reach their content (Zulip's access_stream_by_id
    without allow_realm_admin), so a private channel they are not in is 'Invalid channel ID';
    where history is protected, only the messages the administrator received are theirs to delete
    (received_by is their id, else None for every message)."""
    stream = access_stream_by_id(user, stream_id)
    subscribed = is_subscribed(user, stream)
    if stream.invite_only and not subscribed:
        raise JsonableError("Invalid channel ID")
    received_by = None if can_read_stream_history(user, stream, subscribed) else user.id
    return stream, received_by


def get_stream_by_name(realm_id: int, name: str, at: int | None = None) -> Stream | None:
    """A channel by name, without regard to case; None if there is none. A new instance per call
    (a send sets its first_message_id), made from the row kept `at`."""
    name_key = name.strip().lower()
    rows = read_through("stream_by_name", (realm_id, name_key), at, lambda: tuple(
        raw_select_rows(Stream, '"realm_id" = {p} AND "name_key" = {p}', realm_id, name_key)))
    return instance_from_row(Stream, rows[0]) if rows else None


def get_realm(realm_id: int, at: int | None = None) -> Realm:
    """The organization's row, as a new instance made from the row kept `at`."""
    (row,) = read_through("realm", realm_id, at, lambda: tuple(raw_select_rows(Realm, '"id" = {p}', realm_id)))
    return instance_from_row(Realm, row)


def access_stream_by_name(user: UserProfile, name: str) -> Stream:
    """A channel the user may see, by name, or BAD_REQUEST "Invalid channel name 'X'"."""
    stream = get_stream_by_name(user.realm_id, name)
    if stream is None or not can_access_stream_metadata(user, stream):
        raise JsonableError(f"Invalid channel name '{name}'")
    return stream


def user_can_access_message(user: UserProfile, message: Message) -> bool:
    """Whether the user received the message or may read its channel's history."""
    if UserMessage.select().where((UserMessage.user_profile == user) & (UserMessage.message == message.id)).exists():
        return True
    if message.stream_id is None:
        return False
    stream = Stream.get_by_id(message.stream_id)
    return can_read_stream_history(user, stream)


def access_message(user: UserProfile, message_id: int) -> tuple[Message, int | None]:
    """A message the user may read, with their flag bits, or BAD_REQUEST 'Invalid message(s)'."""
    message = Message.get_or_none(Message.id == message_id)
    if message is None or message.realm_id != user.realm_id or not user_can_access_message(user, message):
        raise JsonableError("Invalid message(s)")
    row = UserMessage.get_or_none((UserMessage.user_profile == user) & (UserMessage.message == message_id))
    return message, (row.flags if row else None)


def only_owner(target: UserProfile) -> bool:
    """Whether the target is the organization's only active human owner."""
    owners = UserProfile.select().where(
        (UserProfile.realm == target.realm_id) & (UserProfile.role == ROLE_OWNER) & UserProfile.is_active
        & ~UserProfile.is_bot
    )
    return owners.count() == 1 and owners.first().id == target.id


def group_in_realm(realm_id: int, group_id: int) -> UserGroup | None:
    """The organization's user group with this id, or None."""
    return UserGroup.get_or_none((UserGroup.id == group_id) & (UserGroup.realm == realm_id))


def stream_in_realm(realm_id: int, stream_id: int | None, at: int | None = None) -> Stream | None:
    """The organization's channel with this id, or None (SQL built once: a channel narrow's
    lookup through peewee's query builder was a third of a fetch). A new instance per call, made
    from the row kept `at` (as get_stream_by_name)."""
    rows = read_through("stream_by_id", (realm_id, stream_id), at, lambda: tuple(
        raw_select_rows(Stream, '"id" = {p} AND "realm_id" = {p}', stream_id, realm_id)))
    return instance_from_row(Stream, rows[0]) if rows else None


def user_in_realm(realm_id: int, user_id: int) -> UserProfile | None:
    """The organization's account with this id, or None."""
    return UserProfile.get_or_none((UserProfile.id == user_id) & (UserProfile.realm == realm_id))


def active_subscription(user: UserProfile, stream: Stream) -> Subscription | None:
    """The user's active subscription to the channel, or None."""
    return Subscription.get_or_none((Subscription.user_profile == user) & (Subscription.stream == stream)
                                    & Subscription.active)


def realm_accounts(realm_id: int) -> list[UserProfile]:
    """Every account of the organization but its system bots, by id (GET /users)."""
    return list(UserProfile.select().where((UserProfile.realm == realm_id) & ~UserProfile.is_system_bot)
                .order_by(UserProfile.id))


# --- many at once: one query for a whole list parameter, however long (not one per item) -------


def users_in_realm(realm_id: int, user_ids: Iterable[int]) -> dict[int, UserProfile]:
    """{id: account} for the organization's accounts among these ids, in one query."""
    ids = list(dict.fromkeys(user_ids))
    if not ids:
        return {}
    return {u.id: u for u in UserProfile.select().where(UserProfile.id.in_(ids) & (UserProfile.realm == realm_id))}


def access_users_by_ids(requester: UserProfile, user_ids: Iterable[int], *, allow_deactivated: bool = True,
                        allow_bots: bool = True) -> list[UserProfile]:
    """access_user_by_id for each id, in order and without repeats, with one query; the first
    id that fails gives its error."""
    found = users_in_realm(requester.realm_id, user_ids)
    users = []
    for user_id in dict.fromkeys(user_ids):
        users.append(_accessible_user(found.get(user_id), allow_deactivated=allow_deactivated, allow_bots=allow_bots))
    return users


def find_users_by_emails(requester: UserProfile, emails: Iterable[str]) -> dict[str, UserProfile | None]:
    """{address as given: account or None}: find_user_by_email for each, in one query."""
    from peewee import fn

    keys = {email: email.strip().lower() for email in emails}
    if not keys:
        return {}
    wanted = sorted(set(keys.values()))
    rows = (UserProfile.select().where(fn.LOWER(UserProfile.email).in_(wanted) | fn.LOWER(UserProfile.delivery_email).in_(wanted))
            .order_by(UserProfile.id))
    by_key: dict[str, UserProfile] = {}
    for row in rows:  # the lowest id first, as UserProfile.get_by_login_email
        for key in (row.email.lower(), (row.delivery_email or "").lower()):
            by_key.setdefault(key, row)
    found = {}
    for email, key in keys.items():
        target = by_key.get(key)
        if target is not None and (target.realm_id != requester.realm_id
                                   or target.email.lower() != key and not can_see_real_email(requester, target)):
            target = None
        found[email] = target
    return found


def streams_by_names(realm_id: int, names: Iterable[str]) -> dict[str, Stream]:
    """{lower-cased stripped name: channel} for the organization's channels among these names, in one query."""
    keys = sorted({name.strip().lower() for name in names})
    if not keys:
        return {}
    return {s.name_key: s for s in Stream.select().where((Stream.realm == realm_id) & Stream.name_key.in_(keys))}


def streams_and_subscriptions(user: UserProfile,
                              stream_ids: Iterable[int]) -> tuple[dict[int, Stream], dict[int, Subscription]]:
    """({id: channel} of the organization's channels among these ids, {channel id: the user's
    active subscription}), in two queries."""
    ids = sorted(set(stream_ids))
    streams = {s.id: s for s in Stream.select().where(Stream.id.in_(ids) & (Stream.realm == user.realm_id))} if ids else {}
    subs = {sub.stream_id: sub for sub in Subscription.select().where(
        (Subscription.user_profile == user) & Subscription.active & Subscription.stream.in_(sorted(streams)))} if streams else {}
    return streams, subs


def may_follow_image_url(user: UserProfile, url: str) -> bool:
    """Whether /thumbnail may send `user` to `url` (without this check it would send a signed-in
    browser anywhere): only when an image preview of exactly this URL is in a message the user may read.
    Image messages are few, and the newest 50 holding the preview are looked at."""
    from urllib.parse import urlencode

    needle = "/thumbnail?" + urlencode({"url": url}) + "&amp;size="
    candidates = (Message.select().where((Message.realm == user.realm_id) & Message.has_image
                                         & Message.rendered_content.contains(needle))
                  .order_by(Message.id.desc()).limit(50))
    return any(needle in message.rendered_content and user_can_access_message(user, message)
               for message in candidates)
