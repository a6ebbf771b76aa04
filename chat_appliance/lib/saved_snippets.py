"""Reads of a user's saved snippets (actions/saved_snippets.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import SavedSnippet
from chat_appliance.models.base import raw_select

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_saved_snippets(user: UserProfile) -> list[SavedSnippet]:
    """The user's snippets in the order they were created."""
    return raw_select(SavedSnippet, '"user_profile_id" = {p} ORDER BY "id"', user.id)
