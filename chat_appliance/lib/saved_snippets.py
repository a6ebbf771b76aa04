"""Reads of a user's saved snippets (actions/saved_snippets.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import SavedSnippet

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_saved_snippets(user: UserProfile) -> list[SavedSnippet]:
    """The user's snippets in the order they were created."""
    return list(SavedSnippet.select().where(SavedSnippet.user_profile == user).order_by(SavedSnippet.id))
