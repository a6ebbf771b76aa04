"""Reads of a user's saved snippets (actions/saved_snippets.py changes them)."""

from chat_appliance.models import SavedSnippet


def user_saved_snippets(user):
    """The user's snippets in the order they were created."""
    return list(SavedSnippet.select().where(SavedSnippet.user_profile == user).order_by(SavedSnippet.id))
