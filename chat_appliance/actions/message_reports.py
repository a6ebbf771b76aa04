"""Reporting a message to the organization's moderators (POST /messages/{id}/report).

The report is a Notification Bot message in the moderation request channel, in one topic per
reported user ("NAME moderation", as Zulip names it), quoting the message and linking to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import re

from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.markdown.urls import topic_narrow
from chat_appliance.models import Stream
from chat_appliance.actions.messages import check_send_message

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.models import Message, Realm, UserProfile


def check_report(user: UserProfile, report_type: str, description: str | None) -> Stream:
    """The moderation channel; 'other' needs an explanation."""
    if report_type == "other" and not (description or "").strip():
        raise JsonableError("An explanation is required.")
    channel_id = user.realm.moderation_request_channel_id
    stream = Stream.get_or_none((Stream.id == channel_id) & (Stream.realm == user.realm_id)) if channel_id else None
    if stream is None or stream.deactivated:
        raise JsonableError("Message reporting is not enabled in this organization.")
    return stream


def unused_fence(content: str) -> str:
    """A backtick fence longer than any in the content, so the quote cannot be closed early."""
    longest = max((len(run) for run in re.findall(r"`{3,}", content)), default=0)
    return "`" * max(4, longest + 1)


def message_link(realm: Realm, message: Message) -> str:
    """A link that opens the reported message in its conversation."""
    if message.stream_id is not None:
        return f"{realm.url}{topic_narrow(message.stream_id, message.stream.name, message.topic)}/near/{message.id}"
    return f"{realm.url}/#narrow/id/{message.id}"


def do_report_message(user: UserProfile, message: Message, report_name: str, description: str | None,
                      moderation_stream: Stream, limits: Limits) -> None:
    """Post the report as the Notification Bot."""
    sender = message.sender
    lines = [f"@_**{user.full_name}|{user.id}** reported [this message]({message_link(user.realm, message)}) "
             f"sent by @_**{sender.full_name}|{sender.id}**.",
             f"- Reason: **{report_name}**"]
    if (description or "").strip():
        fence = unused_fence(description)  # type: ignore[arg-type]  # not None: checked above
        lines += ["- Notes:", f"{fence}quote", description.strip(), fence]  # type: ignore[union-attr]  # as above
    fence = unused_fence(message.content)
    lines += ["", f"**Message sent by @_**{sender.full_name}|{sender.id}**:**", f"{fence}quote", message.content, fence]
    bot = system_bot(user.realm, NOTIFICATION_BOT[0])
    check_send_message(bot, message_type="stream", to=moderation_stream.id,
                       topic=f"{sender.full_name} moderation"[:limits.max_topic_length], content="\n".join(lines),
                       client_name="Internal", limits=limits)
