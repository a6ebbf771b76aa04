"""Saved snippets: titled Markdown a user keeps for inserting into messages. Only the owner's
queues hear of changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.serializers import saved_snippet_dict
from chat_appliance.lib import event_catalogue
from chat_appliance.models import MAX_DATABASE_INT, SavedSnippet

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile


def check_title(title: str) -> str:
    """Stripped; never empty (Zulip's text)."""
    title = title.strip()
    if not title:
        raise JsonableError("Title cannot be empty.")
    return title


def check_snippet_content(content: str, limits: Limits) -> str:
    """Kept as sent, but not blank (Zulip's text), and no longer than a message
    (limits.max_message_length)."""
    if not content.strip():
        raise JsonableError("Content cannot be empty.")
    limit = limits.max_message_length
    if len(content) > limit:
        raise JsonableError(f"content is too long (limit: {limit} characters)")
    return content


def access_saved_snippet(user: UserProfile, snippet_id: int) -> SavedSnippet:
    """One of the user's own snippets; anyone else's, like a missing one, gives Zulip's
    'Saved snippet does not exist.' (HTTP 404, code BAD_REQUEST)."""
    snippet = None
    if snippet_id <= MAX_DATABASE_INT:
        snippet = SavedSnippet.get_or_none((SavedSnippet.id == snippet_id) & (SavedSnippet.user_profile == user))
    if snippet is None:
        raise JsonableError("Saved snippet does not exist.", http_status=404)
    return snippet


def do_create_saved_snippet(user: UserProfile, title: str, content: str) -> SavedSnippet:
    """Store a validated snippet; return it."""
    with write_transaction():
        snippet = SavedSnippet.create(user_profile=user, title=title, content=content)
    publish(event_catalogue.saved_snippets_add(saved_snippet_dict(snippet)), [user.id])
    return snippet


def do_edit_saved_snippet(snippet: SavedSnippet, changes: JSONDict) -> None:
    """Apply validated title/content changes (none is allowed: the event still tells the state)."""
    with write_transaction():
        for key, value in changes.items():
            setattr(snippet, key, value)
        snippet.save()
    publish(event_catalogue.saved_snippets_update(saved_snippet_dict(snippet)), [snippet.user_profile_id])


def do_delete_saved_snippet(snippet: SavedSnippet) -> None:
    """Delete a snippet."""
    snippet_id = snippet.id
    with write_transaction():
        snippet.delete_instance()
    publish(event_catalogue.saved_snippets_remove(snippet_id), [snippet.user_profile_id])
