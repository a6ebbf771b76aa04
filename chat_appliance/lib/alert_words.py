"""Reads of a user's alert words (actions/alert_words.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import AlertWord

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_alert_words(user: UserProfile) -> list[str]:
    """The user's words, as typed, in the order they were added."""
    return [row.word for row in AlertWord.select(AlertWord.word).where(AlertWord.user_profile == user)
            .order_by(AlertWord.id)]
