"""Read receipts (GET /messages/{id}/read_receipts): who has read a message.

Zulip's rules: refused while the organization's enable_read_receipts is off; never the sender;
never users who turned send_read_receipts off, nor users the requester muted or who muted the
requester (feature level 143); bots that marked the message read are included. Deactivated
accounts are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.onboarding_settings import realm_value_setting
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import FLAG_BITS, MutedUser, UserMessage, UserProfile

if TYPE_CHECKING:
    from chat_appliance.models import Message, Realm


def check_read_receipts_enabled(realm: Realm) -> None:
    if not realm_value_setting(realm, "enable_read_receipts"):
        raise JsonableError("Read receipts are disabled in this organization.")


def muted_either_way(user: UserProfile) -> set[int]:
    """Ids of the users the user muted and of those who muted the user."""
    rows = MutedUser.select(MutedUser.user_profile, MutedUser.muted_user).where(
        (MutedUser.user_profile == user.id) | (MutedUser.muted_user == user.id))
    return {row.muted_user_id if row.user_profile_id == user.id else row.user_profile_id for row in rows}


def read_receipt_user_ids(message: Message, requester: UserProfile) -> list[int]:
    """Ids of the users whose read receipt for this message the requester may see."""
    readers = (UserProfile.select()
               .join(UserMessage, on=(UserMessage.user_profile == UserProfile.id))
               .where((UserMessage.message == message.id) & (UserMessage.flags.bin_and(FLAG_BITS["read"]) != 0)
                      & (UserProfile.id != message.sender_id) & UserProfile.is_active))
    hidden = muted_either_way(requester)
    return sorted(user.id for user in readers
                  if user.id not in hidden and user_setting(user, "send_read_receipts"))
