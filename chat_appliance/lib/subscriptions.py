"""Who is subscribed where: read-only queries shared by actions, views and /register."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from peewee import fn

from chat_appliance.models import Stream, Subscription, UserProfile
from chat_appliance.models.base import now, query_rows, raw_select
from chat_appliance.lib.snapshots import read_through, snapshot_versions
from chat_appliance.lib.serializers import stream_dict, subscription_from_channel
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


class ChannelRow(NamedTuple):
    """A channel as /register and GET /users/me/subscriptions read it: what the access checks read
    (lib/access.py: realm_id, invite_only), and its API object with its subscriber count. Shared
    by every request of the same configuration: the API object is never changed in place."""

    id: int
    realm_id: int
    invite_only: bool
    deactivated: bool
    api: JSONDict


# The number of active subscribers who are active users, of each channel of an organization that
# has any, in one statement. The few deactivated accounts are left out as a list the statement
# makes once, rather than by a lookup of each subscriber's account (a third less time).
_ACTIVE_SUBSCRIPTIONS_OF_REALM = (
    ' FROM "subscription" s JOIN "stream" c ON c."id" = s."stream_id"'
    ' WHERE c."realm_id" = {p} AND s."active" AND s."user_profile_id" NOT IN'
    ' (SELECT "id" FROM "user_profile" WHERE "realm_id" = {p} AND NOT "is_active")')
REALM_SUBSCRIBER_COUNTS_SQL = ('SELECT s."stream_id", COUNT(*)' + _ACTIVE_SUBSCRIPTIONS_OF_REALM
                               + ' GROUP BY s."stream_id"')
# And who they are, by channel.
REALM_SUBSCRIBERS_SQL = ('SELECT s."stream_id", s."user_profile_id"' + _ACTIVE_SUBSCRIPTIONS_OF_REALM
                         + ' ORDER BY s."stream_id", s."user_profile_id"')


def realm_subscribers(realm_id: int) -> dict[int, tuple[int, ...]]:
    """{channel id: ids of its active subscribers who are active users, ascending} for every
    channel of the organization that has any. Kept while the configuration is unchanged (lib/
    snapshots.py: a change to any subscription or account moves it); never change it in place."""
    _data, generation = snapshot_versions()
    return read_through("realm_subscribers", realm_id, generation, lambda: _read_realm_subscribers(realm_id))


def _read_realm_subscribers(realm_id: int) -> dict[int, tuple[int, ...]]:
    lists: dict[int, list[int]] = {}
    for stream_id, user_id in query_rows(REALM_SUBSCRIBERS_SQL, realm_id, realm_id):
        lists.setdefault(stream_id, []).append(user_id)
    return {stream_id: tuple(ids) for stream_id, ids in lists.items()}


def realm_channels(realm_id: int) -> tuple[ChannelRow, ...]:
    """Every channel of the organization, archived ones included, by name, each with its
    subscriber count. Kept while the configuration is unchanged (a change to a channel, a
    subscription or an account moves it)."""
    _data, generation = snapshot_versions()
    return read_through("realm_channels", realm_id, generation, lambda: _read_realm_channels(realm_id))


def _read_realm_channels(realm_id: int) -> tuple[ChannelRow, ...]:
    counts = dict(query_rows(REALM_SUBSCRIBER_COUNTS_SQL, realm_id, realm_id))
    return tuple(ChannelRow(s.id, s.realm_id, s.invite_only, s.deactivated,
                            stream_dict(s, subscriber_count=counts.get(s.id, 0)))
                 for s in Stream.select().where(Stream.realm == realm_id).order_by(Stream.name_key))


# include_subscribers=partial (Zulip feature level 412): a channel with at least this many
# subscribers gets `partial_subscribers` (its bots and the people active in the last
# RECENTLY_ACTIVE_DAYS days) instead of the whole `subscribers` list; a smaller one the whole list.
PARTIAL_SUBSCRIBERS_THRESHOLD = 250
RECENTLY_ACTIVE_DAYS = 14


def recently_active_ids(realm_id: int) -> frozenset[int]:
    """The organization's bots, and the people whose clients reported their presence in the last
    RECENTLY_ACTIVE_DAYS days or who joined in that time: the subscribers partial_subscribers
    always lists."""
    since = now() - RECENTLY_ACTIVE_DAYS * 86400
    return frozenset(user_id for (user_id,) in query_rows(
        'SELECT u."id" FROM "user_profile" u LEFT JOIN "user_presence" p ON p."user_profile_id" = u."id"'
        ' WHERE u."realm_id" = {p} AND u."is_active"'
        ' AND (u."is_bot" OR u."date_joined" >= {p} OR p."last_connected_time" >= {p})', realm_id, since, since))


class SubscriberLists:
    """The subscriber fields of channel objects for an include_subscribers value ("true", "false"
    or "partial"): read once per response, then asked per channel."""

    def __init__(self, realm_id: int, include_subscribers: str, *, lists: dict[int, tuple[int, ...]] | None = None):
        self.mode = include_subscribers
        self.lists = {} if include_subscribers == "false" else lists if lists is not None else \
            realm_subscribers(realm_id)
        self.realm_id = realm_id
        self._recent: frozenset[int] | None = None

    def fields(self, stream_id: int) -> JSONDict | None:
        """{"subscribers": [...]} or {"partial_subscribers": [...]}, or None for "false"."""
        if self.mode == "false":
            return None
        ids = self.lists.get(stream_id, ())
        if self.mode != "partial" or len(ids) < PARTIAL_SUBSCRIBERS_THRESHOLD:
            return {"subscribers": list(ids)}
        if self._recent is None:
            self._recent = recently_active_ids(self.realm_id)
        recent = self._recent
        return {"partial_subscribers": [user_id for user_id in ids if user_id in recent]}


def subscription_list(user: UserProfile, *, include_subscribers: str, include_archived: bool = False,
                      channels: tuple[ChannelRow, ...] | None = None) -> list[JSONDict] | None:
    """Subscription objects of the user's active subscriptions, by channel name (shared with
    /register, which passes every channel of the organization as realm_channels() gives them, and
    lists those of archived channels to clients with the archived_channels capability). Without
    `channels`, only the user's channels are read. `include_subscribers`: "true", "false" or
    "partial"."""
    if channels is None:
        query = (Subscription.select(Subscription, Stream).join(Stream)
                 .where((Subscription.user_profile == user) & Subscription.active))
        rows = list(query.order_by(Stream.name_key))
        counts = subscriber_counts([row.stream.id for row in rows])
        subscriptions = {row.stream.id: row for row in rows}
        channels = tuple(ChannelRow(row.stream.id, row.stream.realm_id, row.stream.invite_only, row.stream.deactivated,
                                    stream_dict(row.stream, subscriber_count=counts[row.stream.id])) for row in rows)
        lists = SubscriberLists(user.realm_id, include_subscribers, lists={
            row.stream.id: tuple(sorted(subscriber_ids(row.stream))) for row in rows
        } if include_subscribers != "false" else {})
    else:
        # raw_select: peewee's query and its per-row model building were a tenth of /register.
        subscriptions = {sub.stream_id: sub for sub in raw_select(
            Subscription, '"user_profile_id" = {p} AND "active"', user.id)}
        lists = SubscriberLists(user.realm_id, include_subscribers if subscriptions else "false")
    return [
        subscription_from_channel(subscriptions[channel.id], channel.api, lists.fields(channel.id))
        for channel in channels
        if channel.id in subscriptions and (include_archived or not channel.deactivated)
    ]


def subscribed_stream_ids(user: UserProfile) -> frozenset[int]:
    """Ids of the channels the user is subscribed to, kept while the configuration is unchanged
    (/register asks twice, and every subscription change moves the generation)."""
    _data, generation = snapshot_versions()
    return read_through("subscribed_stream_ids", user.id, generation, lambda: frozenset(
        stream_id for (stream_id,) in query_rows(
            'SELECT "stream_id" FROM "subscription" WHERE "user_profile_id" = {p} AND "active"', user.id)))


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
