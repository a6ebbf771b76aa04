"""Flags a new message gets from its recipients' own choices: read for those who muted the
sender, has_alert_word for those whose alert words it contains. The sender is left alone."""

from __future__ import annotations

from chat_appliance.models import FLAG_BITS
from chat_appliance.actions.alert_words import users_with_alert_word_in
from chat_appliance.actions.muted_users import muter_ids


def apply_personal_flags(flags: dict[int, int], sender_id: int, content: str, at: int | None = None) -> dict[int, int]:
    """Add the bits to `flags` ({user id: bits}) in place. `at`: as muter_ids takes it."""
    others = [uid for uid in flags if uid != sender_id]
    for uid in muter_ids(sender_id, others, at):
        flags[uid] |= FLAG_BITS["read"]
    for uid in users_with_alert_word_in(content, others):
        flags[uid] |= FLAG_BITS["has_alert_word"]
    return flags
