"""Reads of bots and their services (actions/bot_services.py changes them)."""

from __future__ import annotations

from chat_appliance.models import BotService, UserProfile
from chat_appliance.models.base import raw_select


def service_of(bot: UserProfile) -> BotService | None:
    """The bot's service row, or None."""
    return BotService.get_or_none(BotService.bot == bot.id)


def administered_bots(user: UserProfile) -> list[UserProfile]:
    """Bots `user` administers: every bot of the organization for administrators, else their own.
    System bots are nobody's to administer."""
    # SQL written once (raw_select): /register asks, and peewee's building cost more than the query.
    if user.is_realm_admin:
        return raw_select(UserProfile, '"realm_id" = {p} AND "is_bot" AND NOT "is_system_bot" ORDER BY "id"',
                          user.realm_id)
    return raw_select(UserProfile, '"realm_id" = {p} AND "is_bot" AND NOT "is_system_bot" AND "bot_owner_id" = {p}'
                                   ' ORDER BY "id"', user.realm_id, user.id)
