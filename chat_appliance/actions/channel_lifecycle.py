"""A channel's life: creation with its settings and subscribers (POST /channels/create), archiving
and unarchiving, the organization's default channels, and a channel's email address.

Zulip's rules (facts, not code):
- Creating needs can_create_public_channel_group or can_create_private_channel_group (web-public
  channels: can_create_web_public_channel_group); subscribing others needs can_add_subscribers_group;
  only administrators make a channel default, and a private channel cannot be default.
- Archiving (administrators, or the channel's can_administer_channel_group) keeps subscriptions, takes
  the channel out of the default channels and off the moderation-request setting, and Notification
  Bot notes it in the channel's "channel events" topic. Clients that declared the
  `archived_channels` capability get stream update is_archived; others get stream delete (and
  stream create on unarchiving), since Zulip feature level 378.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re
import secrets

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import non_guest_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import is_user_in_group
from chat_appliance.lib.onboarding_settings import user_has_realm_permission
from chat_appliance.lib.serializers import stream_dict
from chat_appliance.lib.subscriptions import default_streams_event
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.models import FLAG_BITS, ChannelEmailAddress, Realm, Stream, UserMessage
from chat_appliance.actions.channels import (
    create_stream_row,
    create_subscription_rows,
    notify_streams_created,
    notify_subscribed,
    stream_audience_ids,
    subscriber_counts,
    subscriber_ids,
)
from chat_appliance.actions.messages import check_send_message, internal_send_direct_message
from chat_appliance.actions.users import active_user_ids
from chat_appliance.lib.subscriptions import MAX_BULK_NEW_SUBSCRIPTION_MESSAGES
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's topic for Notification Bot's notes about a channel.
CHANNEL_EVENTS_TOPIC = "channel events"

# The capability that decides which events a client gets for archiving (see module doc).
ARCHIVED_CHANNELS = "archived_channels"


def capability_gated(event: JSONDict, capability: str, declared: bool) -> Any:
    """The event for queues whose client declared (or did not declare) a capability; the queue
    manager drops the marker before delivery."""
    return dict(event, _capability=(capability, declared))


def can_administer_channel(user: UserProfile, stream: Stream) -> bool:
    """Administrators, and members of the channel's can_administer_channel_group."""
    return user.is_realm_admin or is_user_in_group(user, (stream.settings or {}).get("can_administer_channel_group"))


def set_default_stream(realm: Realm, stream_id: int, is_default: bool) -> bool:
    """Add or remove a channel from the stored default set; the caller holds the transaction.
    Returns whether anything changed."""
    ids = set((realm.settings or {}).get("default_stream_ids", []))
    new_ids = ids | {stream_id} if is_default else ids - {stream_id}
    if new_ids == ids:
        return False
    realm.settings = dict(realm.settings or {}, default_stream_ids=sorted(new_ids))
    realm.save()
    return True


def do_change_default_stream(realm: Realm, stream: Stream, is_default: bool) -> None:
    """POST/DELETE /default_streams: change the default set and tell everyone but guests."""
    if is_default and stream.invite_only:
        raise JsonableError("Private channels cannot be made default.")
    with write_transaction():
        realm = Realm.get_by_id(realm.id)
        changed = set_default_stream(realm, stream.id, is_default)
    if changed:
        publish(default_streams_event(realm), non_guest_user_ids(realm.id))


def check_create_permission(user: UserProfile, *, invite_only: bool, is_web_public: bool) -> None:
    """The organization's channel-creation settings."""
    if user.is_guest:
        raise JsonableError("Insufficient permission")
    if is_web_public:
        setting = "can_create_web_public_channel_group"
    elif invite_only:
        setting = "can_create_private_channel_group"
    else:
        setting = "can_create_public_channel_group"
    if not user_has_realm_permission(user, setting):
        raise JsonableError("Insufficient permission")


def do_create_channel(creator: UserProfile, name: str, *, description: str, invite_only: bool,
                      history_public_to_subscribers: bool | None, is_web_public: bool, is_default_stream: bool,
                      folder_id: int | None, group_settings: JSONDict, subscribers: list[UserProfile],
                      send_new_subscription_messages: bool) -> Stream:
    """Create a channel with its settings and subscribers in one transaction; then stream create
    to those who may see it, subscription events, default_streams when it is default, and
    Notification Bot's note to each other new subscriber when asked for (and they are few)."""
    with write_transaction():
        stream = create_stream_row(creator.realm, name, description=description, invite_only=invite_only,
                                   history_public_to_subscribers=history_public_to_subscribers, creator=creator)
        stream.is_web_public = is_web_public and not invite_only
        stream.folder_id = folder_id
        stream.settings = dict(stream.settings, **group_settings)
        stream.save()
        added, _already = create_subscription_rows([stream], subscribers)
        realm = Realm.get_by_id(creator.realm_id)
        if is_default_stream:
            set_default_stream(realm, stream.id, True)
    notify_streams_created([stream])
    notify_subscribed(added)
    if is_default_stream:
        publish(default_streams_event(realm), non_guest_user_ids(realm.id))
    others = [user for user, _stream in added if user.id != creator.id]
    if send_new_subscription_messages and len(others) <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES:
        tell_new_subscribers(creator, stream, others)
    return stream


def tell_new_subscribers(acting_user: UserProfile, stream: Stream, users: list[UserProfile]) -> None:
    """A direct message from Notification Bot to each user someone else subscribed."""
    bot = notification_bot(acting_user.realm)
    for user in users:
        if not user.is_bot:
            internal_send_direct_message(bot, user, f"@_**{acting_user.full_name}|{acting_user.id}** added you "
                                                    f"to the channel #**{stream.name}**.")


def notify_archive_state(stream: Stream, audience: list[int]) -> None:
    """stream update is_archived to clients with the archived_channels capability; stream delete
    (archived) or create (unarchived) to the others."""
    count = subscriber_counts([stream.id])[stream.id]
    publish(capability_gated(event_catalogue.stream_update(stream.id, stream.name, "is_archived", stream.deactivated),
                             ARCHIVED_CHANNELS, True),
            audience)
    if stream.deactivated:
        legacy = event_catalogue.stream_delete(stream.id)
    else:
        legacy = event_catalogue.stream_create([stream_dict(stream, subscriber_count=count)])
    publish(capability_gated(legacy, ARCHIVED_CHANNELS, False), audience)


def notification_bot(realm: Realm) -> UserProfile:

    return system_bot(realm, NOTIFICATION_BOT[0])


def post_channel_note(stream: Stream, text: str) -> int:
    """Notification Bot's note in the channel's "channel events" topic; returns its message id."""
    bot = notification_bot(stream.realm)
    message_id, _policy = check_send_message(bot, message_type="stream", to=stream.id, topic=CHANNEL_EVENTS_TOPIC,
                                             content=text, client_name="Internal", limits=None)
    return message_id


def do_archive_stream(stream: Stream, acting_user: UserProfile) -> None:
    """Archive a channel; see the module's rules."""
    if stream.deactivated:
        raise JsonableError("Channel is already deactivated")
    audience = stream_audience_ids(stream)
    # The note is posted first (archived channels refuse messages) and starts read for everyone,
    # as Zulip's archive notice does.
    note_id = post_channel_note(stream, f"@_**{acting_user.full_name}|{acting_user.id}** archived this channel.")
    realm_changes = {}
    with write_transaction():
        UserMessage.update(flags=UserMessage.flags.bin_or(FLAG_BITS["read"])).where(
            UserMessage.message == note_id).execute()
        Stream.update(deactivated=True).where(Stream.id == stream.id).execute()
        stream.deactivated = True
        realm = Realm.get_by_id(stream.realm_id)
        was_default = set_default_stream(realm, stream.id, False)
        if realm.moderation_request_channel_id == stream.id:
            Realm.update(moderation_request_channel_id=None).where(Realm.id == realm.id).execute()
            realm_changes["moderation_request_channel_id"] = -1
    notify_archive_state(stream, audience)
    if was_default:
        publish(default_streams_event(realm), non_guest_user_ids(realm.id))
    if realm_changes:
        publish(event_catalogue.realm_update_dict("default", realm_changes), active_user_ids(realm.id))


def do_unarchive_stream(stream: Stream, acting_user: UserProfile) -> None:
    """Bring an archived channel back, subscriptions as they were; Notification Bot says so."""
    check_archive_change(stream, False)
    with write_transaction():
        Stream.update(deactivated=False).where(Stream.id == stream.id).execute()
        stream.deactivated = False
    notify_archive_state(stream, stream_audience_ids(stream))
    post_channel_note(stream, f"@_**{acting_user.full_name}|{acting_user.id}** brought this channel back from "
                              "the archive.")


def email_slug(name: str) -> str:
    """The readable part of a channel's address: its name, lower-cased, with runs of other
    characters than letters and digits turned into a hyphen."""
    return re.sub(r"[^0-9a-z]+", "-", name.lower()).strip("-") or "channel"


def do_get_channel_email_address(requester: UserProfile, stream: Stream, sender: UserProfile) -> str:
    """The channel's address for this sender, creating its token on first use."""
    with write_transaction():
        row = ChannelEmailAddress.get_or_none((ChannelEmailAddress.stream == stream.id)
                                              & (ChannelEmailAddress.sender == sender.id))
        if row is None:
            row = ChannelEmailAddress.create(realm=stream.realm_id, stream=stream.id, sender=sender.id,
                                             creator=requester.id, email_token=secrets.token_hex(16))
    return f"{email_slug(stream.name)}.{row.email_token}.show-sender@{stream.realm.host}"


def check_archive_change(stream: Stream, is_archived: bool) -> None:
    """PATCH /streams/{id} is_archived: only unarchiving an archived channel (Zulip feature level
    388); archiving is DELETE /streams/{id}."""
    if is_archived and not stream.deactivated:
        raise JsonableError("Use DELETE /streams/{stream_id} to archive a channel")
    if not is_archived:

        if not stream.deactivated:
            raise JsonableError("Channel is not currently deactivated")
        if stream.invite_only and not subscriber_ids(stream):
            raise JsonableError("Channel is private and have no subscribers")
