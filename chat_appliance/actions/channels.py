"""Channels: creation, subscriptions, default channels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.actions.soft_deactivation import catch_up_idle_users, idle_among
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import can_access_stream_metadata, get_stream_by_name
from chat_appliance.lib.audiences import non_guest_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import system_group
from chat_appliance.lib.serializers import STREAM_GROUP_SETTINGS, stream_dict, subscription_dict
from chat_appliance.lib.subscriptions import default_streams_event, subscriber_counts, subscriber_ids
from chat_appliance.models import RECIPIENT_STREAM, Recipient, Stream, Subscription, UserProfile
from chat_appliance.lib.rendering import render_plain
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm

# The colours Zulip hands out to new subscriptions, in order (#rrggbb: zulip-terminal
# refuses anything else at start-up).
STREAM_COLORS = [
    "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5",
    "#f5ce6e", "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063",
    "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
]


def check_stream_name(name: str, limits: Limits) -> str:
    """Zulip's channel-name rules, within limits.max_stream_name_length."""
    name = name.strip()
    if not name:
        raise JsonableError("Channel name can't be empty.")
    if len(name) > limits.max_stream_name_length:
        raise JsonableError(f"Channel name too long (limit: {limits.max_stream_name_length} characters).")
    for position, ch in enumerate(name, 1):
        if ord(ch) < 32 or 0xFDD0 <= ord(ch) <= 0xFDEF:
            raise JsonableError(f"Invalid character in channel name, at position {position}.")
    return name


def default_streams(realm: Realm) -> list[Stream]:
    """Channels every new account is subscribed to."""
    ids = (realm.settings or {}).get("default_stream_ids", [])
    return list(Stream.select().where(Stream.id.in_(ids) & ~Stream.deactivated)) if ids else []


def create_stream_row(realm: Realm, name: str, *, description: str = "", invite_only: bool = False,
                      history_public_to_subscribers: bool | None = None, creator: UserProfile | None = None) -> Stream:
    """Insert a channel with its recipient; the caller checked the name and description and
    holds the transaction."""
    if history_public_to_subscribers is None or not invite_only:
        # Zulip: public channels always share history; private ones share it unless told otherwise.
        history_public_to_subscribers = True if not invite_only else bool(history_public_to_subscribers)

    settings = {key: system_group(realm, group).id for key, group in STREAM_GROUP_SETTINGS.items()}
    return Stream.create(
        realm=realm,
        name=name,
        name_key=name.lower(),
        description=description,
        rendered_description=render_plain(description) if description else "",
        invite_only=invite_only,
        history_public_to_subscribers=history_public_to_subscribers,
        creator=creator,
        recipient=Recipient.create(type=RECIPIENT_STREAM),
        settings=settings,
    )


def stream_audience_ids(stream: Stream) -> list[int]:
    """Active users who may know the channel exists: the events audience for it."""
    users = UserProfile.select().where((UserProfile.realm == stream.realm_id) & UserProfile.is_active)
    subscribed = subscriber_ids(stream)
    return [u.id for u in users if can_access_stream_metadata(u, stream, subscribed=u.id in subscribed)]


def _pick_color(user):
    used = {s.color for s in Subscription.select(Subscription.color).where(Subscription.user_profile == user)}
    for color in STREAM_COLORS:
        if color not in used:
            return color
    return STREAM_COLORS[len(used) % len(STREAM_COLORS)]


def subscribe_users_to_streams(streams: list[Stream], users: list[UserProfile], *,
                               acting_user: UserProfile | None = None) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """Subscribe each user to each channel; returns (newly subscribed pairs, already subscribed
    pairs). In the caller's transaction or its own; the events go out when it commits."""
    with write_transaction():
        added, already = create_subscription_rows(streams, users)
        notify_subscribed(added)
    return added, already


def do_subscribe_creating_streams(acting_user: UserProfile, targets: list[UserProfile], streams: list[Stream],
                                  to_create: list[tuple[str, str]], *, invite_only: bool,
                                  history_public_to_subscribers: bool | None,
                                  limits: Limits) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Create the channels of `to_create` [(name, description)], then subscribe `targets` to
    them and to `streams`, in one transaction. Returns (added pairs, already subscribed pairs)."""
    with write_transaction():
        created_map, created = do_create_streams(acting_user.realm, to_create, invite_only=invite_only,
                                                 history_public_to_subscribers=history_public_to_subscribers,
                                                 creator=acting_user, limits=limits)
        streams = streams + [s for s in created_map.values() if s not in streams]
        added, already = create_subscription_rows(streams, targets)
        # Announced once the subscribers exist: a new private channel's audience is its subscribers.
        notify_streams_created(created)
        notify_subscribed(added)
    return added, already


def create_subscription_rows(streams: list[Stream],
                             users: list[UserProfile]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The subscription rows alone, with no events: for accounts being created, whose
    realm_user add event announces them. The caller holds the transaction. Returns (added
    pairs, already subscribed pairs)."""
    added, already = [], []
    # An idle person's rows are worked out from their channels: catch them up to now first.
    catch_up_idle_users(idle_among([user.id for user in users]))
    # Each channel and user once (a request may name one twice), and one query for every pair,
    # however many channels (a query per pair made a long list hold a worker for seconds).
    streams = list({stream.id: stream for stream in streams}.values())
    users = list({user.id: user for user in users}.values())
    existing = {
        (s.stream_id, s.user_profile_id): s
        for s in Subscription.select().where(
            Subscription.stream.in_([s.id for s in streams]) & Subscription.user_profile.in_([u.id for u in users])
        )
    } if streams and users else {}
    for stream in streams:
        for user in users:
            sub = existing.get((stream.id, user.id))
            if sub is not None and sub.active:
                already.append((user, stream))
                continue
            if sub is None:
                Subscription.create(user_profile=user, stream=stream, color=_pick_color(user))
            else:
                Subscription.update(active=True).where(Subscription.id == sub.id).execute()
            added.append((user, stream))
    return added, already


def notify_subscribed(added: list[tuple[UserProfile, Stream]]) -> None:
    streams = {stream.id: stream for _user, stream in added}
    counts = subscriber_counts(list(streams))
    by_user: dict[int, list[Stream]] = {}
    for user, stream in added:
        by_user.setdefault(user.id, []).append(stream)
    for user_id, user_streams in by_user.items():
        subs = []
        for stream in user_streams:
            sub = Subscription.get((Subscription.user_profile == user_id) & (Subscription.stream == stream))
            subs.append(subscription_dict(sub, stream, subscriber_count=counts[stream.id],
                                          subscribers=sorted(subscriber_ids(stream))))
        publish(event_catalogue.subscription_add(subs), [user_id])
    for stream in streams.values():
        new_ids = sorted(u.id for u, s in added if s.id == stream.id)
        others = [uid for uid in stream_audience_ids(stream) if uid not in new_ids]
        publish(event_catalogue.subscription_peer_add(stream.id, new_ids), others)


def unsubscribe_users(streams: list[Stream],
                      users: list[UserProfile]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Remove subscriptions; returns (removed pairs, not-subscribed pairs). Publishes after commit."""
    removed: list[tuple[UserProfile, Stream]] = []
    not_removed: list[tuple[UserProfile, Stream]] = []
    with write_transaction():
        # As in create_subscription_rows: the rows of the channels they are leaving first.
        catch_up_idle_users(idle_among([user.id for user in users]))
        for stream in streams:
            for user in users:
                updated = (
                    Subscription.update(active=False)
                    .where((Subscription.stream == stream) & (Subscription.user_profile == user) & Subscription.active)
                    .execute()
                )
                (removed if updated else not_removed).append((user, stream))
    for user, stream in removed:
        publish(event_catalogue.subscription_remove(stream.id, stream.name), [user.id])
        publish(event_catalogue.subscription_peer_remove(stream.id, [user.id]),
                [uid for uid in stream_audience_ids(stream) if uid != user.id])
    return removed, not_removed


def do_create_streams(realm: Realm, specs: list[tuple[str, str]], *, invite_only: bool,
                      history_public_to_subscribers: bool | None, creator: UserProfile,
                      limits: Limits) -> tuple[JSONDict, list[Stream]]:
    """Create the channels named in specs [(name, description)] that do not exist yet.

    Returns {name_key: Stream} for every spec, existing ones included. The caller holds the
    transaction; creation events are returned for publishing after commit.
    """
    streams, created = {}, []
    for name, description in specs:
        name = check_stream_name(name, limits)
        if len(description) > limits.max_stream_description_length:
            raise JsonableError("Channel description too long "
                                f"(limit: {limits.max_stream_description_length} characters).")
        stream = get_stream_by_name(realm.id, name)
        if stream is None:
            stream = create_stream_row(realm, name, description=description, invite_only=invite_only,
                                       history_public_to_subscribers=history_public_to_subscribers,
                                       creator=creator)
            created.append(stream)
        streams[name.lower()] = stream
    return streams, created


def notify_streams_created(created: list[Stream]) -> None:
    """stream create events, to those who may see each new channel."""
    for stream in created:
        publish(event_catalogue.stream_create([stream_dict(stream, subscriber_count=0)]), stream_audience_ids(stream))


def do_change_subscription_properties(changes: list[tuple[Subscription, str, Any]]) -> None:
    """Apply [(subscription, property, value)] in one transaction, then tell the user's clients.
    `in_home_view` is the legacy inverse of `is_muted`: it is stored as is_muted, and every muting
    change sends both events, since zulip-terminal 0.7.0 reads only in_home_view."""
    changes = [(sub, "is_muted", not value) if prop == "in_home_view" else (sub, prop, value)
               for sub, prop, value in changes]
    with write_transaction():
        for sub, prop, value in changes:
            # One column at a time: several changes may name the same subscription.
            Subscription.update({getattr(Subscription, prop): value}).where(Subscription.id == sub.id).execute()
    for sub, prop, value in changes:
        publish(event_catalogue.subscription_update(sub.stream_id, prop, value), [sub.user_profile_id])
        if prop == "is_muted":
            publish(event_catalogue.subscription_update(sub.stream_id, "in_home_view", not value), [sub.user_profile_id])


def do_update_stream(stream: Stream, changes: JSONDict) -> None:
    """Apply validated channel changes (name, description, privacy, default, group settings) in
    one transaction, then tell everyone who may see the channel, one stream update event per
    property. Users who could see it before but not after (it became private) get stream delete."""

    audience_before = set(stream_audience_ids(stream))
    realm_changes = {}
    with write_transaction():
        for key, value in changes.items():
            if key == "is_default_stream":
                ids = set((stream.realm.settings or {}).get("default_stream_ids", []))
                ids = ids | {stream.id} if value else ids - {stream.id}
                stream.realm.settings = dict(stream.realm.settings or {}, default_stream_ids=sorted(ids))
                stream.realm.save()
                realm_changes[key] = value
            elif key in STREAM_GROUP_SETTINGS:
                stream.settings = dict(stream.settings or {}, **{key: value})
            elif key == "name":
                stream.name, stream.name_key = value, value.lower()
            elif key == "description":
                stream.description, stream.rendered_description = value, render_plain(value) if value else ""
            else:
                setattr(stream, key, value)
        stream.save()
    audience_after = set(stream_audience_ids(stream))
    for key, value in changes.items():
        extra = {}
        if key == "description":
            extra["rendered_description"] = stream.rendered_description
        if key == "invite_only":
            extra["history_public_to_subscribers"] = stream.history_public_to_subscribers
        event = event_catalogue.stream_update(stream.id, stream.name, key, value, **extra)
        if key == "is_default_stream":

            publish(default_streams_event(stream.realm), non_guest_user_ids(stream.realm_id))
            continue
        publish(event, audience_after)
    lost = audience_before - audience_after
    if lost:
        publish(event_catalogue.stream_delete(stream.id), lost)
