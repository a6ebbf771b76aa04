"""Alert words: words or phrases that flag a message `has_alert_word` for the user who chose them.

Matching ignores case and needs a word boundary on both sides, where Zulip's boundaries are
whitespace and the punctuation around words (its list). The raw Markdown is searched, so a word
inside a code block or a link also matches: a simplification of Zulip, which looks only at
rendered text outside code.

Why the limits: 100,000 words added in one request held the writer for 40 s, and made every send
to that user's channels 8 times slower (one regular expression per word, per recipient, per
send). Now a user has at most MAX_ALERT_WORDS_PER_USER words of at most ALERT_WORD_MAX_LENGTH
characters (Zulip's), added in one statement, and each user's words are one compiled expression
shaped as a trie (a character at a time, so its cost per position of the message does not grow
with the number of words), kept per app until the user's words change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re

from chat_appliance.db import runtime
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import AlertWord
from chat_appliance.models.base import query_rows
from chat_appliance.lib.alert_words import user_alert_words
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile

ALERT_WORD_MAX_LENGTH = 100
# Ours: Zulip sets no limit on the number.
MAX_ALERT_WORDS_PER_USER = 1000
BEFORE = r"(?:^|(?<=[\s(\"'.,;\[*`>]))"
AFTER = r"(?=$|[\s)\"'?:.,;\]!*`])"


def clean_alert_words(words: list[str]) -> list[str]:
    """Stripped, empty ones dropped (Zulip's cleaning)."""
    return [w.strip() for w in words if w.strip()]


def do_add_alert_words(user: UserProfile, words: list[str]) -> list[str]:
    """Add the words not already there (case-insensitively); return the full list. Refused
    whole when the user would have more than MAX_ALERT_WORDS_PER_USER."""
    with write_transaction():
        existing = {row.word_key for row in AlertWord.select(AlertWord.word_key).where(AlertWord.user_profile == user)}
        new: dict[str, str] = {}
        for word in words:
            if word.lower() not in existing:
                new.setdefault(word.lower(), word)
        if len(existing) + len(new) > MAX_ALERT_WORDS_PER_USER:
            raise JsonableError(f"You can have at most {MAX_ALERT_WORDS_PER_USER} alert words.")
        if new:
            AlertWord.insert_many([{"user_profile": user.id, "word": word, "word_key": key}
                                   for key, word in new.items()]).execute()
    _forget(user.id)
    return _announce(user)


def do_remove_alert_words(user: Any, words: list[str]) -> Any:
    """Remove these words (any case); words not there are ignored; return the full list."""
    keys = [w.lower() for w in words]
    with write_transaction():
        if keys:
            AlertWord.delete().where((AlertWord.user_profile == user) & AlertWord.word_key.in_(keys)).execute()
    _forget(user.id)
    return _announce(user)


def _announce(user):
    words = user_alert_words(user)
    publish(event_catalogue.alert_words(words), [user.id])
    return words


def _forget(user_id):
    """After a change has committed: the next send builds the user's matcher afresh."""
    active = runtime.current()
    if active is not None:
        active.alert_word_matchers.discard(user_id)


def _trie(words):
    """A regular expression matching exactly these words, shared prefixes factored out:
    ["cat", "car"] -> "ca(?:r|t)". At each position at most one branch per next character is
    tried, so matching does not slow down with the number of words."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = None  # a word ends here

    def build(node):
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(root)


def _compile(word_keys):
    return re.compile(BEFORE + "(?:" + _trie(word_keys) + ")" + AFTER)


def users_with_alert_word_in(content: str, user_ids: Any) -> set[Any]:
    """Which of these users have an alert word in the content."""
    if not user_ids:
        return set()
    active = runtime.current()
    cache = active.alert_word_matchers if active is not None else None
    # Matchers by user id; False for a user with no words (the cache keeps no None).
    known = cache.get_many(user_ids) if cache is not None else {}
    generation = cache.generation if cache is not None else 0
    missing = [uid for uid in user_ids if uid not in known]
    if missing:
        # The SQL is built once per number of users.
        rows = query_rows('SELECT "user_profile_id", "word_key" FROM "alert_word" WHERE "user_profile_id" IN {ids}',
                          ids=missing)
        words: dict[int, list[str]] = {}
        for user_id, word_key in rows:
            words.setdefault(user_id, []).append(word_key)
        loaded = {uid: _compile(words[uid]) if uid in words else False for uid in missing}
        if cache is not None:
            cache.put_many(loaded.items(), generation)
        known.update(loaded)
    lowered = content.lower()
    return {uid for uid, matcher in known.items() if matcher and matcher.search(lowered)}
