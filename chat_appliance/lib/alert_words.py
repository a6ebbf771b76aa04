"""Reads of a user's alert words (actions/alert_words.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_alert_words(user: UserProfile) -> list[str]:
    """The user's words, as typed, in the order they were added."""
    return [word for (word,) in query_rows(
        'SELECT "word" FROM "alert_word" WHERE "user_profile_id" = {p} ORDER BY "id"', user.id)]
