"""Muted users (Zulip's rules): the muter's copies of a muted user's messages are marked read,
at once for what was sent before and on arrival for what comes after, so they count in no unread
total and trigger no notification. Clients hide them; the server still delivers them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from peewee import IntegrityError

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import Message, MutedUser, UserMessage, now, unread_conditions
from chat_appliance.models.base import query_rows
from chat_appliance.actions.message_flags import do_update_message_flags
from chat_appliance.lib.muted_users import muted_users_list
from chat_appliance.lib.snapshots import read_through
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def muter_ids(sender_id: int, user_ids: list[int], at: int | None = None) -> set[Any]:
    """Which of these users muted the sender. `at`: the configuration generation to keep the
    sender's muters with (lib/snapshots.py); None reads them."""
    if not user_ids:
        return set()
    # Every send asks: the sender's muters by the muted_user index, then those among the recipients.
    muters = read_through("muters", sender_id, at, lambda: frozenset(user_id for (user_id,) in query_rows(
        'SELECT "user_profile_id" FROM "muted_user" WHERE "muted_user_id" = {p}', sender_id)))
    return set(user_ids).intersection(muters)


def check_mute_target(user: UserProfile, target: UserProfile) -> None:
    """Zulip's refusals for muting."""
    if target.id == user.id:
        raise JsonableError("Cannot mute self")


def do_mute_user(user: UserProfile, target: UserProfile) -> None:
    """Mute, then mark everything the target sent as read for the muter."""
    try:
        with write_transaction():
            MutedUser.create(user_profile=user, muted_user=target, date_muted=now())
    except IntegrityError:
        raise JsonableError("User already muted") from None
    publish(event_catalogue.muted_users(muted_users_list(user)), [user.id])
    unread = sorted({row.message_id for part in unread_conditions() for row in
                     UserMessage.select(UserMessage.message).join(Message)
                     .where((UserMessage.user_profile == user) & (Message.sender == target) & part)})
    if unread:
        do_update_message_flags(user, "add", "read", unread)


def do_unmute_user(user: Any, target: UserProfile) -> None:
    """Unmute; messages already marked read stay read (as in Zulip)."""
    with write_transaction():
        deleted = MutedUser.delete().where((MutedUser.user_profile == user)
                                           & (MutedUser.muted_user == target)).execute()
    if not deleted:
        raise JsonableError("User is not muted")
    publish(event_catalogue.muted_users(muted_users_list(user)), [user.id])
