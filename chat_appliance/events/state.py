"""The initial state POST /register returns, by fetch type (Zulip's `fetch_event_types`).

Each `fetch_*` function fills the keys of one or more fetch types; the keys and their types
are those zulip-terminal reads at start-up (a missing one is a crash there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast

import sys
import time

from chat_appliance.lib.access import can_access_stream_metadata, can_see_real_email
from chat_appliance.lib.alert_words import user_alert_words
from chat_appliance.lib.bot_services import administered_bots, service_of
from chat_appliance.lib.custom_emoji import realm_emoji_state
from chat_appliance.lib.drafts import user_drafts
from chat_appliance.lib.groups import system_group_ids
from chat_appliance.lib.linkifiers import realm_linkifiers
from chat_appliance.lib.messages import display_topic
from chat_appliance.lib.message_permissions import realm_message_settings_state
from chat_appliance.lib.rendering import default_code_block_language
from chat_appliance.lib.muted_users import muted_users_list
from chat_appliance.lib.onboarding_settings import onboarding_settings_state
from chat_appliance.lib.playgrounds import realm_playgrounds
from chat_appliance.lib.realm_icon import realm_icon_source, realm_icon_url_path
from chat_appliance.lib.presence import (DEFAULT_HISTORY_LIMIT_DAYS, OFFLINE_THRESHOLD_SECONDS, PING_INTERVAL_SECONDS,
                                         realm_presences)
from chat_appliance.lib.saved_snippets import user_saved_snippets
from chat_appliance.lib.snapshots import read_through, snapshot_versions
from chat_appliance.lib.scheduled_messages import (
    MAX_REMINDER_NOTE_LENGTH,
    reminder_dict,
    scheduled_message_dict,
    user_scheduled_messages,
)
from chat_appliance.lib.serializers import (
    bot_dict,
    cross_realm_bot_dict,
    device_dict,
    draft_dict,
    field_dict,
    linkifier_dict,
    saved_snippet_dict,
    service_dicts,
    subscription_from_channel,
    user_dict,
    user_group_dict,
    user_group_setting_defaults,
    user_topic_dict,
)
from chat_appliance.lib.subscriptions import MAX_BULK_NEW_SUBSCRIPTION_MESSAGES
from chat_appliance.db import runtime
from chat_appliance.db.connection import backend
from chat_appliance.models.base import query_rows, raw_select
from chat_appliance.lib.subscriptions import (
    SubscriberLists,
    default_stream_ids,
    realm_channels,
    subscribed_stream_ids,
    subscription_list,
)
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS, all_user_settings, user_setting
from chat_appliance.lib.user_settings_defaults import realm_user_settings_defaults
from chat_appliance.lib.user_status import realm_user_statuses
from chat_appliance.lib.user_topics import user_topic_rows
from chat_appliance.models import (
    FLAG_BITS,
    GroupGroupMembership,
    ClientDevice,
    CustomProfileField,
    Subscription,
    UserGroup,
    UserGroupMembership,
    UserMessage,
    UserProfile,
    UserTopic,
    CONVERSATION_INDEX,
    unread_condition_sql,
)
from chat_appliance.models import (EMAIL_VISIBLE_EVERYONE, EMPTY_TOPIC_DISPLAY_NAME, REMINDER, TOPIC_FOLLOWED,
                                   TOPIC_INHERIT, TOPIC_MUTED, TOPIC_UNMUTED)

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

# Zulip sends these personal settings at the top level of /register too, unless the client
# declares the user_settings_object capability; zulip-terminal 0.7.0 reads them there.
LEGACY_TOP_LEVEL_SETTINGS = (
    "twenty_four_hour_time", "translate_emoticons", "enable_drafts_synchronization",
    "pm_content_in_desktop_notifications", "enable_desktop_notifications", "enable_sounds",
    "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications",
    "wildcard_mentions_notify", "presence_enabled", "starred_message_counts", "fluid_layout_width",
    "high_contrast_mode", "color_scheme", "default_language", "emojiset", "demote_inactive_streams",
    "web_home_view", "receives_typing_notifications",
)

# Zulip's message report types (key, display name); POST /messages/{id}/report takes the keys.
REPORT_MESSAGE_TYPES = (
    ("spam", "Spam"),
    ("harassment", "Harassment"),
    ("inappropriate", "Inappropriate content"),
    ("norms", "Violates community norms"),
    ("other", "Other reason"),
)

# Zulip's typing-notification timings, in milliseconds.
TYPING_STARTED_WAIT_MS = 10000
TYPING_STOPPED_WAIT_MS = 5000
TYPING_STARTED_EXPIRY_MS = 15000

# -1 is Zulip's "keep messages forever".
RETENTION_FOREVER = -1

# The legacy realm_wildcard_mention_policy (replaced by can_mention_many_users_group at Zulip
# feature level 352) that zulip-flutter still requires, derived from the group that replaced
# it: system group name -> Zulip's policy value. A custom group has no legacy equivalent; Zulip
# reports "admins" (5) then, the most restrictive value every client knows.
WILDCARD_POLICY_BY_GROUP = {
    "role:everyone": 1, "role:members": 2, "role:fullmembers": 3, "role:administrators": 5,
    "role:owners": 5, "role:nobody": 6, "role:moderators": 7,
}
WILDCARD_POLICY_ADMINS = 5

# The external-account kinds a custom profile field of type "external account" may name
# (Zulip's realm_default_external_accounts): kind -> display name, input hint, URL pattern.
DEFAULT_EXTERNAL_ACCOUNTS = {
    "github": ("GitHub", "Your GitHub username", "https://github.com/%(username)s"),
    "twitter": ("Twitter", "Your Twitter username", "https://twitter.com/%(username)s"),
}

# How many of the newest direct messages recent_private_conversations looks through (Zulip's
# limit): its conversations are those of these messages, so its cost stays bounded however long
# a person's history of direct messages grows.
RECENT_CONVERSATIONS_LIMIT = 1000

# Where the server's emoji data (Zulip's emoji_api.json format) is served, without credentials
# (webclient/views.py serves it; the organization's icon is in lib/realm_icon.py).
EMOJI_DATA_PATH = "/static/generated/emoji/emoji_api.json"


def fetch_realm(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm: organization settings and the server's limits."""
    realm = user.realm
    state.update({
        "realm_name": realm.name,
        "realm_description": realm.description,
        "realm_message_retention_days": RETENTION_FOREVER,
        "realm_allow_message_editing": realm.allow_message_editing,
        "realm_message_content_edit_limit_seconds": realm.message_content_edit_limit_seconds,
        "realm_allow_edit_history": realm.edit_history_policy_name() != "none",
        "realm_message_edit_history_visibility_policy": realm.edit_history_policy_name(),
        "realm_empty_topic_display_name": EMPTY_TOPIC_DISPLAY_NAME,
        "realm_default_code_block_language": default_code_block_language(realm),
        # The limits the server enforces (options["limits"], from the configuration).
        **options["limits"].as_register_state(),
        # Registered with Zulip's push notification service (clients/push_service.py); no end date
        # is known here (the service's plan decides).
        "realm_push_notifications_enabled": bool(options.get("push_notifications_enabled")),
        "realm_push_notifications_enabled_end_timestamp": None,
        "server_typing_started_wait_period_milliseconds": TYPING_STARTED_WAIT_MS,
        "server_typing_stopped_wait_period_milliseconds": TYPING_STOPPED_WAIT_MS,
        "server_typing_started_expiry_period_milliseconds": TYPING_STARTED_EXPIRY_MS,
        "server_report_message_types": [{"key": key, "name": name} for key, name in REPORT_MESSAGE_TYPES],
        "realm_can_mention_many_users_group": realm.can_mention_many_users_group_id,
        "realm_wildcard_mention_policy": legacy_wildcard_mention_policy(realm),
        # Accounts are usable at once: no waiting period before a member is a full member.
        "realm_waiting_period_threshold": 0,
        "realm_icon_url": options["base_url"] + realm_icon_url_path(realm),
        "realm_icon_source": realm_icon_source(realm),
        "realm_presence_disabled": False,
        "realm_default_external_accounts": {
            kind: {"name": name, "text": name, "hint": hint, "url_pattern": pattern}
            for kind, (name, hint, pattern) in DEFAULT_EXTERNAL_ACCOUNTS.items()},
        "server_emoji_data_url": options["base_url"] + EMOJI_DATA_PATH,
        # The longest a long poll waits before its heartbeat; clients time out a poll after it.
        "event_queue_longpoll_timeout_seconds": options["longpoll_timeout_seconds"],
    })
    state.update(realm_message_settings_state(realm))
    state.update(authentication_state(options.get("auth")))
    state.update(onboarding_settings_state(user))
    state["max_reminder_note_length"] = MAX_REMINDER_NOTE_LENGTH
    state["max_bulk_new_subscription_messages"] = MAX_BULK_NEW_SUBSCRIPTION_MESSAGES


# Zulip's names for its backends in realm_authentication_methods.
AUTH_METHOD_NAMES = (("Email", "email"), ("LDAP", "ldap"), ("OpenID Connect", "openid connect"))


def authentication_state(auth: Any) -> JSONDict:
    """Which ways to sign in are on (the server's configuration decides: each is enabled exactly
    when available), and whether names are the directory's: Zulip's server_name_changes_disabled,
    which its clients read to lock the name field."""
    if auth is None:
        return {}
    methods = auth.authentication_methods()
    return {
        "realm_authentication_methods": {name: {"enabled": methods[key], "available": methods[key]}
                                         for name, key in AUTH_METHOD_NAMES},
        "realm_name_changes_disabled": False,
        "server_name_changes_disabled": bool(auth.ldap is not None and auth.ldap.manages_name),
    }


def legacy_wildcard_mention_policy(realm: Any) -> int:
    """Zulip's legacy policy number for the realm's can_mention_many_users_group."""
    group_id = realm.can_mention_many_users_group_id
    names = {group: name for name, group in system_group_ids(realm.id).items()}
    return WILDCARD_POLICY_BY_GROUP.get(names.get(group_id, ""), WILDCARD_POLICY_ADMINS)


def fetch_custom_profile_fields(user: UserProfile, state: JSONDict, options: Any) -> None:
    """custom_profile_fields: the organization's fields, in display order."""
    fields = (CustomProfileField.select().where(CustomProfileField.realm == user.realm_id)
              .order_by(CustomProfileField.order, CustomProfileField.id))
    state["custom_profile_fields"] = [field_dict(f) for f in fields]


# The conversations of the user's newest direct-message rows, each with its newest message: the
# rows are read newest first from the partial index user_message_private (migration 120), whose
# condition is written out the same, so that it reads those rows alone and not the whole history;
# each row's conversation comes from the conversation index, as for the unread rows below, since
# through the message table's key each of the thousand would read a page of bodies of its own.
RECENT_CONVERSATIONS_SQL = (
    'SELECT m."recipient_id", MAX(m."id") FROM (SELECT um."message_id" FROM "user_message" um'
    f' WHERE um."user_profile_id" = {{{{p}}}} AND (um."flags" & {FLAG_BITS["is_private"]}) != 0'
    ' ORDER BY um."message_id" DESC LIMIT {{p}}) recent'
    ' JOIN "message" m{hint} ON m."id" = recent."message_id" GROUP BY m."recipient_id"')


def recent_conversations_sql() -> str:
    """RECENT_CONVERSATIONS_SQL as query_rows takes it."""
    return RECENT_CONVERSATIONS_SQL.format(hint=backend().indexed_by(CONVERSATION_INDEX))


def fetch_recent_private_conversations(user: UserProfile, state: JSONDict, options: Any) -> None:
    """recent_private_conversations: the requester's direct-message conversations, most recent
    first, each with its latest message id and the other members (none for one with oneself)."""
    latest = dict(query_rows(recent_conversations_sql(), user.id, RECENT_CONVERSATIONS_LIMIT))
    conversations = sorted(latest.items(), key=lambda item: -item[1])
    members = dm_members_by_recipient({recipient for recipient, _max_id in conversations})
    state["recent_private_conversations"] = [
        {"max_message_id": max_id, "user_ids": [i for i in members.get(recipient, []) if i != user.id]}
        for recipient, max_id in conversations]


def fetch_streams(user: UserProfile, state: JSONDict, options: Any) -> None:
    """streams: every channel the requester can see the metadata of (Zulip's `stream` fetch type),
    by id. The channel objects are the organization's, shared while its configuration is unchanged."""
    subscribed = subscribed_stream_ids(user)
    archived = options["client_capabilities"].get("archived_channels", False)
    visible = [channel for channel in realm_channels(user.realm_id)
               if (archived or not channel.deactivated)
               and can_access_stream_metadata(user, cast(Any, channel), subscribed=channel.id in subscribed)]
    state["streams"] = [channel.api for channel in sorted(visible, key=lambda channel: channel.id)]


def fetch_devices(user: UserProfile, state: JSONDict, options: Any) -> None:
    """devices: {device id: push state} of the requester's registered app installations."""
    rows = ClientDevice.select().where(ClientDevice.user_profile == user).order_by(ClientDevice.id)
    state["devices"] = {str(d.id): device_dict(d) for d in rows}


# The account columns a user object is made of (serializers.user_dict): the rest of the row (its
# personal settings above all) is not read for the thousands of people of an organization.
USER_OBJECT_COLUMNS = (UserProfile.id, UserProfile.realm, UserProfile.email, UserProfile.delivery_email,
                       UserProfile.full_name, UserProfile.role, UserProfile.is_active, UserProfile.is_bot,
                       UserProfile.bot_type, UserProfile.bot_owner, UserProfile.is_system_bot, UserProfile.date_joined,
                       UserProfile.timezone, UserProfile.email_address_visibility, UserProfile.avatar_version,
                       UserProfile.avatar_source)


class Viewer(NamedTuple):
    """What of a requester whose real emails it sees depends on (lib/access.can_see_real_email):
    its role, never its identity (id 0 is no account; the requester's own object is made apart)."""

    id: int
    is_guest: bool
    is_realm_admin: bool
    is_moderator: bool


class RealmPerson(NamedTuple):
    """One account of the organization for realm_users and its kin: what can_see_real_email reads
    of it, where it is listed, and its user object as a viewer who may see its real email sees it
    and as one who may not (the same object where everyone may)."""

    id: int
    is_bot: bool
    email_address_visibility: int
    listed_in: int  # 0: realm_users, 1: realm_non_active_users, 2: cross_realm_bots
    visible: JSONDict
    hidden: JSONDict


def realm_people(realm_id: int, client_gravatar: bool, generation: int | None) -> tuple[RealmPerson, ...]:
    """Every account of the organization with both its user objects, by id. Kept while the
    configuration is unchanged (a change to any account moves it); shared by every requester."""

    def read() -> tuple[RealmPerson, ...]:
        people = []
        for u in (UserProfile.select(*USER_OBJECT_COLUMNS).where(UserProfile.realm == realm_id)
                  .order_by(UserProfile.id)):
            shape = cross_realm_bot_dict if u.is_system_bot else user_dict
            visible = shape(u, None, client_gravatar=client_gravatar, email_visible=True)
            hidden = visible if u.is_bot or u.email_address_visibility == EMAIL_VISIBLE_EVERYONE else \
                shape(u, None, client_gravatar=client_gravatar, email_visible=False)
            listed_in = 2 if u.is_system_bot else 0 if u.is_active else 1
            people.append(RealmPerson(u.id, u.is_bot, u.email_address_visibility, listed_in, visible, hidden))
        return tuple(people)

    return read_through("realm_people", (realm_id, client_gravatar), generation, read)


def realm_user_objects(user: UserProfile, client_gravatar: bool) -> tuple[tuple[JSONDict, ...], ...]:
    """(active users, deactivated users, system bots) as the requester's role sees them, the
    requester's own object included as another member of that role would see it. Kept while the
    configuration is unchanged, per role; the objects are realm_people's, shared by every role
    (those of a person whose email a role may not see apart): never changed in place."""
    viewer = Viewer(0, user.is_guest, user.is_realm_admin, user.is_moderator)
    _data, generation = snapshot_versions()

    def read() -> tuple[tuple[JSONDict, ...], ...]:
        lists: tuple[list[JSONDict], ...] = ([], [], [])
        as_viewer = cast(Any, viewer)
        for person in realm_people(user.realm_id, client_gravatar, generation):
            sees_email = person.visible is person.hidden or can_see_real_email(as_viewer, cast(Any, person))
            lists[person.listed_in].append(person.visible if sees_email else person.hidden)
        return tuple(tuple(objects) for objects in lists)

    return read_through("realm_user_objects", (user.realm_id, viewer, client_gravatar), generation, read)


def fetch_realm_users(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_user: the people of the organization, and who the requester is. Every one of them:
    Zulip leaves out of realm_users only the people a guest may not see where the organization
    limits that (can_access_all_users_group), which this server does not do, so that the
    user_list_incomplete capability changes nothing here."""
    gravatar = options["client_gravatar"]
    active, deactivated, system_bots = realm_user_objects(user, gravatar)
    own = user_dict(user, user, client_gravatar=gravatar)
    state["realm_users"] = [own if entry["user_id"] == user.id else entry for entry in active]
    state["realm_non_active_users"] = list(deactivated)
    state["cross_realm_bots"] = list(system_bots)
    state.update({"user_id": user.id, "email": user.email, "delivery_email": user.delivery_email,
                  "full_name": user.full_name, "is_admin": user.is_realm_admin, "is_owner": user.is_owner,
                  "is_moderator": user.is_moderator, "is_guest": user.is_guest})


def fetch_subscriptions(user: UserProfile, state: JSONDict, options: Any) -> None:
    """subscription: subscribed, formerly subscribed, and never subscribed visible channels, by name."""
    # Archived channels only for clients that declared they handle them (Zulip feature level 315).
    archived = options["client_capabilities"].get("archived_channels", False)
    channels = realm_channels(user.realm_id)
    state["subscriptions"] = subscription_list(user, include_subscribers=options["include_subscribers"],
                                               include_archived=archived, channels=channels)
    former = {s.stream_id: s for s in raw_select(Subscription, '"user_profile_id" = {p} AND NOT "active"', user.id)}
    subscribed = subscribed_stream_ids(user)
    lists = SubscriberLists(user.realm_id, options["include_subscribers"])
    unsubscribed, never = [], []
    for channel in channels:
        if channel.id in subscribed or (channel.deactivated and not archived):
            continue
        if not can_access_stream_metadata(user, cast(Any, channel), subscribed=False):
            continue
        fields = lists.fields(channel.id)
        sub = former.get(channel.id)
        if sub is not None:
            unsubscribed.append(subscription_from_channel(sub, channel.api, fields))
        else:
            never.append(dict(channel.api, **fields) if fields else channel.api)
    state["unsubscribed"] = unsubscribed
    state["never_subscribed"] = never


# Tuples, not models: a member of a hundred conversations made peewee build 200 rows of two
# models for every /register, 2 ms of a big organization's 25.
DM_MEMBERS_SQL = ('SELECT g."recipient_id", m."user_profile_id" FROM "direct_message_group_member" m'
                  ' JOIN "direct_message_group" g ON g."id" = m."group_id" WHERE g."recipient_id" IN {ids}')


def dm_members_by_recipient(recipient_ids: set[int]) -> dict[int, list[int]]:
    """{recipient_id: sorted member ids} for direct-message recipients."""
    if not recipient_ids:
        return {}
    members: dict[int, list[int]] = {}
    for recipient_id, user_id in query_rows(DM_MEMBERS_SQL, ids=sorted(recipient_ids)):
        members.setdefault(recipient_id, []).append(user_id)
    return {rid: sorted(ids) for rid, ids in members.items()}


# The most unread messages unread_msgs describes (Zulip's MAX_UNREAD_MESSAGES): the newest ones,
# with old_unreads_missing set when there were more. A person with years of unread messages
# gets the conversations of the recent ones, not a payload that grows without end.
MAX_UNREAD_MESSAGES = 50_000

MENTION_BITS = FLAG_BITS["mentioned"] | FLAG_BITS["group_mentioned"]
WILDCARD_MENTION_BITS = FLAG_BITS["stream_wildcard_mentioned"] | FLAG_BITS["topic_wildcard_mentioned"]


# The user's unread rows, newest first, with their messages' conversations: each of
# unread_condition_sql("um") is served by an index of (user, message id), so the read stops at
# the limit instead of reading every unread row of years, and each conversation comes from the
# conversation index (migration 123) rather than the message table, whose bodies put each message
# on pages of its own. SQLite's planner would take the message table's key for an id: the index
# is named (backend().indexed_by).
UNREAD_ROWS_SQL = ('SELECT um."message_id", um."flags", m."stream_id", m."topic", m."recipient_id"'
                   ' FROM "user_message" um JOIN "message" m{hint} ON m."id" = um."message_id"'
                   ' WHERE um."user_profile_id" = {{p}} AND {condition} ORDER BY um."message_id" DESC LIMIT {{p}}')

# The same rows without their conversations: the unread index holds the flags too, so nothing
# else is read.
UNREAD_IDS_SQL = ('SELECT um."message_id", um."flags" FROM "user_message" um'
                  ' WHERE um."user_profile_id" = {{p}} AND {condition} ORDER BY um."message_id" DESC LIMIT {{p}}')

# Messages' conversations by id, from the conversation index.
CONVERSATIONS_SQL = 'SELECT "id", "stream_id", "topic", "recipient_id" FROM "message"{hint} WHERE "id" IN {{ids}}'


def unread_rows_sql(condition: str, *, with_conversations: bool = True) -> str:
    """UNREAD_ROWS_SQL (or UNREAD_IDS_SQL) for one of unread_condition_sql("um"), as query_rows takes it."""
    if not with_conversations:
        return UNREAD_IDS_SQL.format(condition=condition)
    return UNREAD_ROWS_SQL.format(hint=backend().indexed_by(CONVERSATION_INDEX), condition=condition)


def conversations_sql() -> str:
    """CONVERSATIONS_SQL as query_rows takes it."""
    return CONVERSATIONS_SQL.format(hint=backend().indexed_by(CONVERSATION_INDEX))


def newest_unread_rows(user: UserProfile, limit: int) -> tuple[list[tuple[Any, ...]], bool]:
    """(message id, flags, channel id, topic, recipient id) of the user's `limit` newest unread
    messages, oldest first, and whether there were more.

    The conversations are kept (the runtime's cache of conversations, which lib/cache_events.py
    empties after a move or a deletion): at a million messages each unread message's conversation
    was a descent into an index of a million entries, most of whose pages were not in SQLite's
    cache, and /register grew with the history. A person's first /register (or the first since
    the cache was emptied) reads them with the rows, as before, and keeps them; the next ones read
    the unread index alone and look the conversations up, reading only those of messages new
    since. The unread messages of an organization's people are mostly the same newest ones."""
    cache = runtime.current().conversations
    generation = cache.generation
    known = cache.entries()
    marker = ("unread of", user.id)
    # Asked once: another request may store this person's conversations into `known` meanwhile.
    warm = marker in known
    # Tuples as the cursor gives them (thousands of them), not through peewee's row processing.
    parts = [query_rows(unread_rows_sql(condition, with_conversations=not warm), user.id, limit + 1)
             for condition in unread_condition_sql("um")]
    if len(parts) == 1:  # no new message waits for the unread index: the rows are in order, once each
        rows = parts[0]
    else:
        found = {row[0]: row for part in parts for row in part}
        rows = [found[message_id] for message_id in sorted(found, reverse=True)]
    more = len(rows) > limit
    del rows[limit:]
    rows.reverse()
    if not warm:
        read: dict[Any, Any] = {row[0]: (row[2], sys.intern(row[3]), row[4]) for row in rows}
        read[marker] = True
        cache.put_many(read, generation)
        return rows, more
    read = read_conversations([message_id for message_id, _flags in rows if message_id not in known], generation)
    result = []
    for message_id, flags in rows:
        conversation = known.get(message_id) or read.get(message_id)
        if conversation is not None:  # None: the message was deleted since its row was read
            result.append((message_id, flags, *conversation))
    return result, more


# Ids per query of read_conversations: lists are padded to a power of two up to this, so that a
# few statements' text serve every length.
_CONVERSATION_BATCH = 512


def read_conversations(message_ids: list[int], generation: int) -> dict[int, tuple[int | None, str, int]]:
    """{message id: (channel id, topic, recipient id)} of these messages (those that exist), read
    and kept in the cache of conversations (as of `generation`)."""
    read: dict[Any, Any] = {}
    for start in range(0, len(message_ids), _CONVERSATION_BATCH):
        batch = message_ids[start:start + _CONVERSATION_BATCH]
        padded = batch + [batch[-1]] * (_padded_length(len(batch)) - len(batch))
        for message_id, stream_id, topic, recipient_id in query_rows(conversations_sql(), ids=padded):
            read[message_id] = (stream_id, sys.intern(topic), recipient_id)
    if read:
        runtime.current().conversations.put_many(read, generation)
    return read


def _padded_length(length: int) -> int:
    padded = 16
    while padded < length:
        padded *= 2
    return min(padded, _CONVERSATION_BATCH)


def muted_conversations(user: UserProfile) -> tuple[set[int], dict[tuple[int, str], int]]:
    """The channels the user muted, and {(channel id, topic key): policy} of the topics
    whose visibility they changed."""
    # Hand-written: peewee's building of these two small queries cost more than running them.
    muted_streams = {stream_id for (stream_id,) in query_rows(
        'SELECT "stream_id" FROM "subscription" WHERE "user_profile_id" = {p} AND "active" AND "is_muted"', user.id)}
    policies = {(stream_id, topic_key): policy for stream_id, topic_key, policy in query_rows(
        'SELECT "stream_id", "topic_key", "visibility_policy" FROM "user_topic"'
        ' WHERE "user_profile_id" = {p} AND "visibility_policy" != {p}', user.id, TOPIC_INHERIT)}
    return muted_streams, policies


def fetch_unread_msgs(user: UserProfile, state: JSONDict, options: Any) -> None:
    """unread_msgs: the requester's unread messages (the newest MAX_UNREAD_MESSAGES), grouped as
    Zulip groups them; it must agree with the `read` flags GET /messages serves (zulip-terminal
    shows negative counts otherwise). As Zulip's: `count` leaves out the channel messages of muted
    channels and topics (those of a muted channel count in a topic unmuted or followed there),
    and `mentions` their wildcard mentions; `streams` lists them all."""
    # Plain tuples, not models: with thousands of unread messages, building a UserMessage and a
    # Message object per row was half of /register's time.
    rows, truncated = newest_unread_rows(user, MAX_UNREAD_MESSAGES)
    dm_recipients = {recipient_id for _id, _flags, stream_id, _topic, recipient_id in rows if stream_id is None}
    members = dm_members_by_recipient(dm_recipients)
    muted_streams, policies = muted_conversations(user) if rows else (set(), {})
    pms, streams, huddles, mentions = {}, {}, {}, []  # type: dict[Any, Any], dict[Any, Any], dict[Any, Any], list[int]
    count = 0
    any_mention = MENTION_BITS | WILDCARD_MENTION_BITS
    # Thousands of rows: the loop does per row only what the person's muting settings need.
    mutes = bool(muted_streams or policies)
    for message_id, flags, stream_id, topic, recipient_id in rows:
        if stream_id is not None:
            topic_ids = streams.get((stream_id, topic))
            if topic_ids is None:
                streams[(stream_id, topic)] = [message_id]
            else:
                topic_ids.append(message_id)
            if not mutes:
                count += 1
                if flags & any_mention:
                    mentions.append(message_id)
                continue
            policy = policies.get((stream_id, topic.casefold()), TOPIC_INHERIT) if policies else TOPIC_INHERIT
            muted = (policy not in (TOPIC_UNMUTED, TOPIC_FOLLOWED)) if stream_id in muted_streams \
                else policy == TOPIC_MUTED
            if not muted:
                count += 1
            if flags & MENTION_BITS or flags & WILDCARD_MENTION_BITS and not muted:
                mentions.append(message_id)
            continue
        count += 1
        if flags & any_mention:
            mentions.append(message_id)
        ids = members.get(recipient_id, [])
        if len(ids) <= 2:
            others = [i for i in ids if i != user.id] or [user.id]
            pms.setdefault(others[0], []).append(message_id)
        else:
            huddles.setdefault(",".join(str(i) for i in ids), []).append(message_id)
    empty_topic = options["client_capabilities"].get("empty_topic_name", False)
    state["unread_msgs"] = {
        "count": count,
        "pms": [{"other_user_id": uid, "sender_id": uid, "unread_message_ids": ids} for uid, ids in pms.items()],
        "streams": [{"stream_id": sid, "topic": display_topic(topic, empty_topic), "unread_message_ids": ids}
                    for (sid, topic), ids in streams.items()],
        "huddles": [{"user_ids_string": key, "unread_message_ids": ids} for key, ids in huddles.items()],
        "mentions": mentions,
        "old_unreads_missing": truncated,
    }


def fetch_starred_messages(user: UserProfile, state: JSONDict, options: Any) -> None:
    """starred_messages: ids of the requester's starred messages."""
    starred = FLAG_BITS["starred"]
    state["starred_messages"] = [
        row.message_id for row in UserMessage.select(UserMessage.message)
        .where((UserMessage.user_profile == user) & (UserMessage.flags.bin_and(starred) != 0))
        .order_by(UserMessage.message)
    ]


def shown_empty_topic(entries: list[JSONDict], options: Any) -> None:
    """The empty topic of channel drafts and scheduled messages as the organization's display
    name, for clients without the empty_topic_name capability (Zulip: wherever a topic name
    appears in the register response)."""
    if options["client_capabilities"].get("empty_topic_name", False):
        return
    for entry in entries:
        if entry.get("topic") == "" and entry.get("type") in ("stream", "channel"):
            entry["topic"] = EMPTY_TOPIC_DISPLAY_NAME


def fetch_muted_topics(user: UserProfile, state: JSONDict, options: Any) -> None:
    """muted_topics: Zulip's legacy [channel name, topic, timestamp] triples (zulip-terminal reads them)."""
    empty_topic = options["client_capabilities"].get("empty_topic_name", False)
    state["muted_topics"] = [[t.stream_name, display_topic(t.topic, empty_topic), t.last_updated]
                             for t in user_topic_rows(user) if t.visibility_policy == TOPIC_MUTED]


def fetch_user_topics(user: UserProfile, state: JSONDict, options: Any) -> None:
    """user_topic: every topic whose visibility the requester changed."""
    empty_topic = options["client_capabilities"].get("empty_topic_name", False)
    state["user_topics"] = [user_topic_dict(t) for t in user_topic_rows(user)]
    if not empty_topic:
        for entry in state["user_topics"]:
            entry["topic_name"] = display_topic(entry["topic_name"], False)


def fetch_presence(user: UserProfile, state: JSONDict, options: Any) -> None:
    """presence: keyed by email in the legacy format (zulip-terminal reads it so), or by user id
    in the modern one when the client asked for slim_presence."""

    slim = options.get("slim_presence", False)
    days = options.get("presence_history_limit_days")
    state["presences"], state["presence_last_update_id"] = realm_presences(
        user, slim=slim, history_limit_days=DEFAULT_HISTORY_LIMIT_DAYS if days is None else days)
    state["server_timestamp"] = time.time()
    state["server_presence_ping_interval_seconds"] = PING_INTERVAL_SECONDS
    state["server_presence_offline_threshold_seconds"] = OFFLINE_THRESHOLD_SECONDS


def fetch_user_groups(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_user_groups, with direct members and direct subgroups; deactivated groups only for
    clients that declared include_deactivated_groups (Zulip feature level 294). The group objects
    are the organization's, shared while its configuration is unchanged."""
    include_deactivated = bool(options["client_capabilities"].get("include_deactivated_groups", False))
    _data, generation = snapshot_versions()
    state["realm_user_groups"] = list(read_through(
        "realm_user_groups", (user.realm_id, include_deactivated), generation,
        lambda: realm_user_group_objects(user.realm_id, include_deactivated)))


def realm_user_group_objects(realm_id: int, include_deactivated: bool) -> tuple[JSONDict, ...]:
    """The organization's user groups as /register lists them."""
    groups = UserGroup.select().where(UserGroup.realm == realm_id)
    if not include_deactivated:
        groups = groups.where(~UserGroup.deactivated)
    groups = list(groups.order_by(UserGroup.id))
    ids = [g.id for g in groups]
    members, subgroups = {}, {}  # type: dict[int, list[int]], dict[int, list[int]]
    memberships = (UserGroupMembership.select(UserGroupMembership.user_group, UserGroupMembership.user_profile)
                   .join(UserProfile).where(UserGroupMembership.user_group.in_(ids) & UserProfile.is_active))
    for group_id, user_id in memberships.tuples():
        members.setdefault(group_id, []).append(user_id)
    for supergroup_id, subgroup_id in (GroupGroupMembership.select(GroupGroupMembership.supergroup,
                                                                   GroupGroupMembership.subgroup)
                                       .where(GroupGroupMembership.supergroup.in_(ids)).tuples()):
        subgroups.setdefault(supergroup_id, []).append(subgroup_id)
    defaults = user_group_setting_defaults(realm_id)
    return tuple(
        user_group_dict(g, members=sorted(members.get(g.id, [])), direct_subgroup_ids=sorted(subgroups.get(g.id, [])),
                        setting_defaults=defaults)
        for g in groups
    )


def fetch_user_settings(user: UserProfile, state: JSONDict, options: Any) -> None:
    """user_settings (always), and the legacy top-level copies unless the client declared
    user_settings_object."""
    values = all_user_settings(user)
    state["user_settings"] = values
    if not options["client_capabilities"].get("user_settings_object", False):
        state.update({name: values[name] for name in LEGACY_TOP_LEVEL_SETTINGS if name in USER_SETTING_DEFAULTS})


def fetch_drafts(user: UserProfile, state: JSONDict, options: Any) -> None:
    """drafts: the requester's drafts, none while synchronization is off (Zulip's rule)."""
    enabled = user_setting(user, "enable_drafts_synchronization")
    state["drafts"] = [draft_dict(d) for d in user_drafts(user)] if enabled else []
    shown_empty_topic(state["drafts"], options)


def fetch_saved_snippets(user: UserProfile, state: JSONDict, options: Any) -> None:
    """saved_snippets: the requester's snippets."""
    state["saved_snippets"] = [saved_snippet_dict(s) for s in user_saved_snippets(user)]


def fetch_realm_bots(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_bots: the bots the requester administers (every bot, for administrators)."""
    state["realm_bots"] = [bot_dict(bot, services=service_dicts(bot, service_of(bot))) for bot in administered_bots(user)]


def fetch_empty_lists(*keys: tuple[str, list[Any]]) -> Callable[..., Any]:
    """Fetch types whose state this server does not keep yet."""
    def fetch(user, state, options):
        for key, empty in keys:
            state[key] = type(empty)()

    return fetch


def fetch_linkifiers(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_linkifiers, in priority order."""
    state["realm_linkifiers"] = [linkifier_dict(row) for row in realm_linkifiers(user.realm_id)]


def fetch_scheduled_messages(user: UserProfile, state: JSONDict, options: Any) -> None:
    """scheduled_messages: the requester's undelivered scheduled messages."""
    state["scheduled_messages"] = [scheduled_message_dict(sm) for sm in user_scheduled_messages(user)]
    shown_empty_topic(state["scheduled_messages"], options)


def fetch_reminders(user: UserProfile, state: JSONDict, options: Any) -> None:
    """reminders: the requester's pending reminders."""
    state["reminders"] = [reminder_dict(sm) for sm in user_scheduled_messages(user, REMINDER)]


def fetch_default_streams(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_default_streams: ids of the default channels; none for guests (Zulip's rule)."""
    state["realm_default_streams"] = [] if user.is_guest else default_stream_ids(user.realm)


def fetch_people_state(user: UserProfile, state: JSONDict, options: Any) -> None:
    """alert_words, muted_users: the requester's own lists."""
    state["alert_words"] = user_alert_words(user)
    state["muted_users"] = muted_users_list(user)


def fetch_user_status(user: UserProfile, state: JSONDict, options: Any) -> None:
    """user_status: {user id: status} for those who set one."""
    state["user_status"] = realm_user_statuses(user.realm_id)


def fetch_realm_emoji(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_emoji: every custom emoji, deactivated ones included."""
    state["realm_emoji"] = realm_emoji_state(user.realm_id)


def fetch_realm_playgrounds(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_playgrounds."""
    state["realm_playgrounds"] = realm_playgrounds(user.realm_id)


def fetch_realm_user_settings_defaults(user: UserProfile, state: JSONDict, options: Any) -> None:
    """realm_user_settings_defaults: what new users start with."""
    state["realm_user_settings_defaults"] = realm_user_settings_defaults(user.realm)


# fetch type -> how to fill it. A fetcher listed under several types runs once.
FETCHERS = {
    "realm": fetch_realm,
    "realm_user": fetch_realm_users,
    "custom_profile_fields": fetch_custom_profile_fields,
    "recent_private_conversations": fetch_recent_private_conversations,
    "stream": fetch_streams,
    "device": fetch_devices,
    "subscription": fetch_subscriptions,
    "starred_messages": fetch_starred_messages,
    "muted_topics": fetch_muted_topics,
    "user_topic": fetch_user_topics,
    "presence": fetch_presence,
    "realm_user_groups": fetch_user_groups,
    "user_settings": fetch_user_settings,
    "update_display_settings": fetch_user_settings,
    "update_global_notifications": fetch_user_settings,
    "realm_emoji": fetch_realm_emoji,
    "alert_words": fetch_people_state,
    "muted_users": fetch_people_state,
    "user_status": fetch_user_status,
    "realm_playgrounds": fetch_realm_playgrounds,
    "realm_user_settings_defaults": fetch_realm_user_settings_defaults,
    "realm_linkifiers": fetch_linkifiers,
    "realm_filters": fetch_empty_lists(("realm_filters", [])),
    "drafts": fetch_drafts,
    "default_streams": fetch_default_streams,
    "scheduled_messages": fetch_scheduled_messages,
    "reminders": fetch_reminders,
    "default_stream_groups": fetch_empty_lists(("realm_default_stream_groups", [])),
    "realm_bot": fetch_realm_bots,
    "saved_snippets": fetch_saved_snippets,
}


def fetch_initial_state(user: UserProfile, fetch_event_types: list[str] | None, options: Any) -> JSONDict:
    """The /register state for these fetch types (None = every type). `options` holds the
    client's register options and the server's `limits` (config.Limits)."""
    wanted = set(FETCHERS) | {"message", "update_message_flags"} if fetch_event_types is None \
        else set(fetch_event_types)
    state: JSONDict = {}
    done = set()
    for fetch_type, fetcher in FETCHERS.items():
        if fetch_type in wanted and fetcher not in done:
            fetcher(user, state, options)
            done.add(fetcher)
    # Zulip computes unread_msgs only when both message and update_message_flags are wanted.
    if "message" in wanted and "update_message_flags" in wanted:
        fetch_unread_msgs(user, state, options)
    return state
