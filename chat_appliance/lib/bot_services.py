"""Reads of bots and their services (actions/bot_services.py changes them)."""

from __future__ import annotations

from chat_appliance.models import BotService, UserProfile


def service_of(bot: UserProfile) -> BotService | None:
    """The bot's service row, or None."""
    return BotService.get_or_none(BotService.bot == bot.id)


def administered_bots(user: UserProfile) -> list[UserProfile]:
    """Bots `user` administers: every bot of the organization for administrators, else their own.
    System bots are nobody's to administer."""
    query = UserProfile.select().where((UserProfile.realm == user.realm_id) & UserProfile.is_bot
                                       & ~UserProfile.is_system_bot)
    if not user.is_realm_admin:
        query = query.where(UserProfile.bot_owner == user.id)
    return list(query.order_by(UserProfile.id))
