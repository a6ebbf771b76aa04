"""Typing notifications: nothing is stored; events go to the conversation's participants."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.events.bus import publish
from chat_appliance.lib.messages import message_audience_ids
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.lib import event_catalogue
from chat_appliance.models import UserProfile
from chat_appliance.actions.channels import subscriber_ids

if TYPE_CHECKING:
    from chat_appliance.models import Message, Stream


def _person(user):
    return {"user_id": user.id, "email": user.email}


def _listening(user_ids):
    """Those who have not turned typing notifications off (receives_typing_notifications)."""
    users = UserProfile.select().where(UserProfile.id.in_(list(user_ids)) & UserProfile.is_active)
    return [u.id for u in users if user_setting(u, "receives_typing_notifications")]


def do_send_direct_typing(sender: UserProfile, op: str, recipients: list[UserProfile]) -> None:
    """typing to every participant of a direct conversation, the sender included (Zulip does)."""
    participants = {sender.id: sender, **{u.id: u for u in recipients}}
    event = event_catalogue.typing_direct(op, _person(sender),
                                          [_person(u) for u in sorted(participants.values(), key=lambda u: u.id)])
    publish(event, _listening(participants))


def do_send_stream_typing(sender: UserProfile, op: str, stream: Stream, topic: str) -> None:
    """typing to a channel's subscribers; only queues that declared the stream_typing_notifications
    capability receive it (the queue manager filters)."""

    event = event_catalogue.typing_stream(op, _person(sender), stream.id, topic)
    publish(event, _listening(subscriber_ids(stream) | {sender.id}))


def do_send_message_edit_typing(sender: UserProfile, op: str, message: Message, stream: Stream | None) -> None:
    """typing_edit_message to those who would be notified of the edit: the channel's subscribers
    or the conversation's participants, among those receiving typing notifications."""

    if stream is not None:

        recipient = {"type": "channel", "channel_id": stream.id, "topic": message.topic}
        audience = subscriber_ids(stream) | {sender.id}
    else:
        audience = set(message_audience_ids([message.id]))
        recipient = {"type": "direct", "user_ids": sorted(audience)}
    publish(event_catalogue.typing_edit_message(op, sender.id, message.id, recipient), _listening(audience))
