"""Alert words: words or phrases that flag a message `has_alert_word` for the user who chose them.

Matching ignores case and needs a word boundary on both sides, where Zulip's boundaries are
whitespace and the punctuation around words (its list). The raw Markdown is searched, so a word
inside a code block or a link also matches: a simplification of Zulip, which looks only at
rendered text outside code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.models import AlertWord
from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile

ALERT_WORD_MAX_LENGTH = 100
BEFORE = r"(?:^|(?<=[\s(\"'.,;\[*`>]))"
AFTER = r"(?=$|[\s)\"'?:.,;\]!*`])"


def user_alert_words(user: UserProfile) -> list[str]:
    """The user's words, as typed, in the order they were added."""
    return [row.word for row in AlertWord.select(AlertWord.word).where(AlertWord.user_profile == user)
            .order_by(AlertWord.id)]


def clean_alert_words(words: list[str]) -> list[str]:
    """Stripped, empty ones dropped (Zulip's cleaning)."""
    return [w.strip() for w in words if w.strip()]


def do_add_alert_words(user: UserProfile, words: list[str]) -> list[str]:
    """Add the words not already there (case-insensitively); return the full list."""
    with write_transaction():
        existing = {row.word_key for row in AlertWord.select(AlertWord.word_key).where(AlertWord.user_profile == user)}
        for word in words:
            key = word.lower()
            if key not in existing:
                AlertWord.create(user_profile=user, word=word, word_key=key)
                existing.add(key)
    return _announce(user)


def do_remove_alert_words(user: Any, words: list[str]) -> Any:
    """Remove these words (any case); words not there are ignored; return the full list."""
    keys = [w.lower() for w in words]
    with write_transaction():
        if keys:
            AlertWord.delete().where((AlertWord.user_profile == user) & AlertWord.word_key.in_(keys)).execute()
    return _announce(user)


def _announce(user):
    words = user_alert_words(user)
    publish({"type": "alert_words", "alert_words": words}, [user.id])
    return words


def users_with_alert_word_in(content: str, user_ids: Any) -> set[Any]:
    """Which of these users have an alert word in the content."""
    if not user_ids:
        return set()
    # Every send asks, so the SQL is built once per number of recipients.
    rows = query_rows('SELECT "user_profile_id", "word_key" FROM "alert_word" WHERE "user_profile_id" IN {ids}',
                      ids=list(user_ids))
    lowered = content.lower()
    found = set()
    for user_id, word_key in rows:
        if user_id in found or word_key not in lowered:
            continue
        if re.search(BEFORE + re.escape(word_key) + AFTER, lowered):
            found.add(user_id)
    return found
