"""Read receipts (GET /messages/{id}/read_receipts): who has read a message.

Zulip's rules: refused while the organization's enable_read_receipts is off; never the sender;
never users who turned send_read_receipts off; bots that marked the message read are included.
Deactivated accounts are left out.
"""

from ..lib.errors import JsonableError
from ..lib.onboarding_settings import realm_value_setting
from ..lib.user_settings import user_setting
from ..models import FLAG_BITS, UserMessage, UserProfile


def check_read_receipts_enabled(realm):
    if not realm_value_setting(realm, "enable_read_receipts"):
        raise JsonableError("Read receipts are disabled in this organization.")


def read_receipt_user_ids(message):
    """Ids of the users whose read receipt for this message may be shown."""
    readers = (UserProfile.select()
               .join(UserMessage, on=(UserMessage.user_profile == UserProfile.id))
               .where((UserMessage.message == message.id) & (UserMessage.flags.bin_and(FLAG_BITS["read"]) != 0)
                      & (UserProfile.id != message.sender_id) & UserProfile.is_active))
    return sorted(user.id for user in readers if user_setting(user, "send_read_receipts"))
