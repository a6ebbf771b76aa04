"""Who is subscribed where: read-only queries shared by actions, views and /register."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import fn

from chat_appliance.models import Stream, Subscription, UserProfile
from chat_appliance.models.base import query_rows
from chat_appliance.lib.snapshots import read_through
from chat_appliance.lib.serializers import subscription_dict
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm


def subscriber_ids(stream: Stream | int, at: int | None = None) -> set[int]:
    """Ids of the channel's active subscribers who are active users. `at`: the configuration
    generation to keep the read with (lib/snapshots.py), for a send that read it before anything
    it read or wrote; None reads. Every send asks, so the SQL is written out, not built."""
    stream_id = getattr(stream, "id", stream)
    return set(read_through("subscribers", stream_id, at, lambda: frozenset(user_id for (user_id,) in query_rows(
        'SELECT s."user_profile_id" FROM "subscription" s JOIN "user_profile" u ON u."id" = s."user_profile_id"'
        ' WHERE s."stream_id" = {p} AND s."active" AND u."is_active"', stream_id))))


def subscriber_counts(stream_ids: list[int]) -> dict[int, int]:
    """{stream_id: number of active subscribers} for these channels."""
    if not stream_ids:
        return {}
    rows = (
        Subscription.select(Subscription.stream, fn.COUNT(Subscription.id).alias("n"))
        .join(UserProfile)
        .where(Subscription.stream.in_(list(stream_ids)) & Subscription.active & UserProfile.is_active)
        .group_by(Subscription.stream)
    )
    counts = {row.stream_id: row.n for row in rows}
    return {sid: counts.get(sid, 0) for sid in stream_ids}


def subscription_list(user: UserProfile, *, include_subscribers: bool,
                      include_archived: bool = False) -> list[JSONDict] | None:
    """Subscription objects of the user's active subscriptions (shared with /register, which lists
    those of archived channels to clients with the archived_channels capability)."""
    query = (Subscription.select(Subscription, Stream).join(Stream)
             .where((Subscription.user_profile == user) & Subscription.active))
    if not include_archived:
        query = query.where(~Stream.deactivated)
    rows = list(query.order_by(Stream.name_key))
    counts = subscriber_counts([row.stream.id for row in rows])
    return [
        subscription_dict(row, row.stream, subscriber_count=counts[row.stream.id],
                          subscribers=sorted(subscriber_ids(row.stream)) if include_subscribers else None)
        for row in rows
    ]


def subscribed_stream_ids(user: UserProfile) -> set[int]:
    """Ids of the channels the user is subscribed to."""
    return {s.stream_id for s in Subscription.select(Subscription.stream).where(
        (Subscription.user_profile == user) & Subscription.active)}


def realm_streams(realm_id: int, *, exclude_archived: bool) -> list[Stream]:
    """The organization's channels by name, archived ones unless excluded."""
    query = Stream.select().where(Stream.realm == realm_id)
    if exclude_archived:
        query = query.where(~Stream.deactivated)
    return list(query.order_by(Stream.name_key))


def default_stream_ids(realm: Realm) -> list[int]:
    """Ids of the organization's default channels, active ones only."""
    ids = (realm.settings or {}).get("default_stream_ids", [])
    if not ids:
        return []
    return sorted(s.id for s in Stream.select(Stream.id).where(Stream.id.in_(ids) & ~Stream.deactivated))


def default_streams_event(realm: Realm) -> JSONDict:
    """default_streams with the ids of the default channels (Zulip feature level 330)."""
    return event_catalogue.default_streams(default_stream_ids(realm))


# Notification Bot tells new subscribers of their subscription only when a request subscribes at
# most this many (Zulip's max_bulk_new_subscription_messages).
MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100
