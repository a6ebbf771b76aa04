"""Soft deactivation: people idle for a long time cost a channel message nothing.

A send to a channel writes one per-user row for each subscriber: in an organization of
thousands, most of a database's rows are those of people who no longer come. Zulip's answer,
followed here: `soft-deactivate-users` (cli/admin.py) marks people who have neither connected a
client nor sent a message for SOFT_DEACTIVATION_DAYS as `long_term_idle`, noting the newest
message then (`last_active_message_id`). A channel message sent while they are idle writes no
row for them unless the row would say something: a flag (a mention, a wildcard mention, an
alert word, read because they mute the sender), or a notification that will read it (their
push notifications for the channel are on, or they follow the topic). Direct messages always
get their rows.

When they come back (any authenticated request: web/auth.py), their missing rows are added
before anything is answered: the messages after `last_active_message_id` in the channels they
are subscribed to, unread, as if they had been written at the send; then they are active again.
The same catch-up without reactivation (`catch_up_idle_users`, run by the command when
AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS is on, and before any change to an idle person's
subscriptions) keeps the backlog short. Because every subscription change of an idle person
catches them up first, their subscriptions are the same for the whole window a catch-up
covers, so their current channels say exactly which messages were theirs: Zulip reads its
subscription audit log for this; this server has none.

Races with sends. A send decides whom it skips before its write transaction (from kept reads)
and checks again inside it that they are still idle; a catch-up reads and writes inside write
transactions of a bounded batch each (catch_up), and makes the person active only in the last.
On SQLite write transactions take turns, so a send either commits before that last batch (whose
scan then sees its message) or checks after it (and writes the row). On
PostgreSQL both take an advisory lock before anything else: shared by sends that skip someone,
exclusive by a catch-up's batch, so the same two orders are the only ones possible; and a send that
skips takes the lock before its message gets an id, so every message a catch-up's window ends
before is visible to its scan.
"""

from __future__ import annotations

from typing import Any, Iterable

import time

from chat_appliance.db.connection import backend, bulk_insert, write_transaction
from chat_appliance.lib.snapshots import read_through
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import CONVERSATION_INDEX, TOPIC_FOLLOWED, UserProfile, database
from chat_appliance.models.base import query_rows

# The key of PostgreSQL's advisory lock between catch-ups and the sends that skip someone.
ADVISORY_LOCK_KEY = 0x50F7DEAC


def _lock(exclusive: bool) -> None:
    if backend().NAME == "postgres":
        function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        database.execute_sql(f"SELECT {function}(%s)", (ADVISORY_LOCK_KEY,))


# --- sends -------------------------------------------------------------------------------------


def quiet_idle_subscribers(stream_id: int, at: int | None = None) -> frozenset[int]:
    """The channel's idle subscribers whom a message there notifies by no channel setting (push
    notifications for the channel off, or the channel muted): those a plain message may skip.
    Kept with the configuration generation (accounts and subscriptions move it)."""

    def read() -> frozenset[int]:
        rows = query_rows(
            'SELECT s."user_profile_id", s."is_muted", s."push_notifications" FROM "subscription" s'
            ' JOIN "user_profile" u ON u."id" = s."user_profile_id"'
            ' WHERE s."stream_id" = {p} AND s."active" AND u."is_active" AND u."long_term_idle"', stream_id)
        if not rows:
            return frozenset()
        undecided = [uid for uid, muted, push in rows if not muted and push is None]
        default_on = set()
        if undecided:
            default_on = {user.id for user in UserProfile.select().where(UserProfile.id.in_(undecided))
                          if user_setting(user, "enable_stream_push_notifications")}
        return frozenset(uid for uid, muted, push in rows
                         if muted or (push is not None and not push) or (push is None and uid not in default_on))

    return read_through("quiet_idle_subscribers", stream_id, at, read)


def rows_to_skip(stream_id: int, topic_key: str, flags_by_user: dict[int, int], sender_id: int,
                 at: int | None = None) -> set[int]:
    """Before a channel send's transaction: the recipients whose rows it may leave out (idle,
    no flag, no notification to come, not the sender)."""
    quiet = quiet_idle_subscribers(stream_id, at)
    if not quiet:
        return set()
    skip = {uid for uid in quiet if flags_by_user.get(uid) == 0 and uid != sender_id}
    if skip:
        # Followers of the topic get a notification (push or mail) that reads their row.
        skip -= {uid for (uid,) in query_rows(
            'SELECT "user_profile_id" FROM "user_topic" WHERE "stream_id" = {p} AND "topic_key" = {p}'
            ' AND "visibility_policy" = {p}', stream_id, topic_key, TOPIC_FOLLOWED)}
    return skip


def still_idle(realm_id: int, skip: set[int]) -> set[int]:
    """Inside a send's write transaction, before its message is inserted: those of `skip` who are
    still idle (a catch-up may have committed since the send looked)."""
    _lock(exclusive=False)
    idle = {uid for (uid,) in query_rows(
        'SELECT "id" FROM "user_profile" WHERE "realm_id" = {p} AND "long_term_idle"', realm_id)}
    return skip & idle


# --- deactivation ------------------------------------------------------------------------------


def users_idle_for(days: float, realm_id: int | None = None, now: float | None = None) -> list[int]:
    """Active human accounts, not idle yet, that have neither connected a client (presence) nor
    sent a message nor joined in the last `days` days."""
    cutoff = int((now if now is not None else time.time()) - days * 86400)
    realm_clause = ' AND u."realm_id" = {p}' if realm_id is not None else ""
    params = [cutoff, cutoff, cutoff] + ([realm_id] if realm_id is not None else [])
    return [uid for (uid,) in query_rows(
        'SELECT u."id" FROM "user_profile" u WHERE u."is_active" AND NOT u."is_bot" AND NOT u."long_term_idle"'
        ' AND u."date_joined" < {p}'
        ' AND NOT EXISTS (SELECT 1 FROM "user_presence" p WHERE p."user_profile_id" = u."id"'
        ' AND (p."last_connected_time" >= {p} OR p."last_active_time" >= {p}))'
        + realm_clause, *params)
        if not _sent_since(uid, cutoff)]


def _sent_since(user_id: int, cutoff: int) -> bool:
    # The (sender, id) index finds their newest message; ids grow with time.
    row = query_rows('SELECT "date_sent" FROM "message" WHERE "sender_id" = {p} ORDER BY "id" DESC LIMIT 1', user_id)
    return bool(row) and row[0][0] >= cutoff


def soft_deactivate_users(user_ids: Iterable[int]) -> list[int]:
    """Mark these accounts idle (active humans not idle already); returns those marked. Their
    window starts after the newest message now: every message of their channels up to it has
    its row (or was sent before they subscribed)."""
    ids = sorted(set(user_ids))
    done: list[int] = []
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        with write_transaction():
            newest = query_rows('SELECT MAX("id") FROM "message"')[0][0] or 0
            marked = [uid for (uid,) in query_rows(
                'SELECT "id" FROM "user_profile" WHERE "id" IN {ids} AND "is_active" AND NOT "is_bot"'
                ' AND NOT "long_term_idle"', ids=batch)]
            if marked:
                UserProfile.update(long_term_idle=True, last_active_message_id=newest).where(
                    UserProfile.id.in_(marked)).execute()
        done += marked
    return done


# --- catch-up ----------------------------------------------------------------------------------


# The most rows one write transaction of a catch-up adds. A person idle for a long time in a big
# organization is owed tens of thousands of rows, each on a page of the per-user table's key of
# its own. Added by one INSERT ... SELECT, every such page went into that statement's undo
# journal, which SQLite holds in memory here (temp_store): at a million messages one return of
# 90,000-100,000 rows took the process's peak from 46 to about 150 MiB. A batch's ids are few
# enough to hold in a list, and go in a few hundred rows a statement; the person's peak stays
# within a few MiB, and no single transaction's length grows with the absence.
CATCH_UP_BATCH = 5000

# The messages of an idle person's window that their channels hold and that have no row for
# them, in id order: from the conversation index (its (id, recipient) pairs, hundreds a page),
# which reads the window in id order without a sort and without the messages' bodies.
_MISSING_ROWS_SQL = (
    'SELECT m."id" FROM "message" m{hint}'
    ' WHERE m."id" > {{p}} AND m."id" <= {{p}}'
    ' AND m."recipient_id" IN (SELECT st."recipient_id" FROM "subscription" s'
    ' JOIN "stream" st ON st."id" = s."stream_id" WHERE s."user_profile_id" = {{p}} AND s."active")'
    ' AND NOT EXISTS (SELECT 1 FROM "user_message" um'
    ' WHERE um."message_id" = m."id" AND um."user_profile_id" = {{p}})'
    ' ORDER BY m."id" LIMIT {{p}}')


def catch_up(user_id: int, *, reactivate: bool) -> int | None:
    """Add an idle person's missing rows: each message after their last_active_message_id in the
    channels they are subscribed to that has no row for them, unread. With `reactivate` they are
    active again; without, they stay idle with their window moved on. Returns the rows added, or
    None when they were not idle. Idempotent: a second call finds nothing missing.

    The rows go in CATCH_UP_BATCH at a time, each batch a write transaction (a savepoint, inside
    another one) that moves the window's start past what it added: each is a catch-up of its
    own, of a shorter window, so the argument above holds for each; the person stays idle
    (sends skip them, and the next batch adds those rows) until the last batch, which reaches
    the newest message and only then makes them active."""
    total: int | None = None
    while True:
        added, finished = _catch_up_batch(user_id, reactivate)
        if added is None:
            return total
        total = (total or 0) + added
        if finished:
            return total


def _catch_up_batch(user_id: int, reactivate: bool) -> tuple[int | None, bool]:
    """One write transaction of catch_up: (rows added, or None when the person is not idle;
    whether the window reached the newest message)."""
    with write_transaction():
        _lock(exclusive=True)
        row = query_rows('SELECT "long_term_idle", "last_active_message_id" FROM "user_profile" WHERE "id" = {p}',
                         user_id)
        if not row or not row[0][0]:
            return None, True
        last = row[0][1] or 0
        newest = query_rows('SELECT MAX("id") FROM "message"')[0][0] or 0
        missing: list[int] = []
        if newest > last:
            sql = _MISSING_ROWS_SQL.format(hint=backend().indexed_by(CONVERSATION_INDEX))
            missing = [message_id for (message_id,) in query_rows(
                sql, last, newest, user_id, user_id, CATCH_UP_BATCH)]
        finished = len(missing) < CATCH_UP_BATCH
        bulk_insert('"user_message"', ('"user_profile_id"', '"message_id"', '"flags"'),
                    [(user_id, message_id, 0) for message_id in missing])
        # A batch that stopped at its limit moves the window to its last message: the rest of
        # the window, and what is sent meanwhile, is the next batch's.
        changes: dict[str, Any] = {"last_active_message_id": max(newest if finished else missing[-1], last)}
        if reactivate and finished:
            changes["long_term_idle"] = False
        UserProfile.update(**changes).where(UserProfile.id == user_id).execute()
    return len(missing), finished


def reactivate_if_idle(user: UserProfile) -> None:
    """The authenticated person's missing rows, before their request is answered (web/auth.py)."""
    if getattr(user, "long_term_idle", False):
        catch_up(user.id, reactivate=True)
        user.long_term_idle = False


def catch_up_idle_users(user_ids: Iterable[int]) -> int:
    """Catch these idle people up without reactivating them (before a change to their
    subscriptions, and AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS); returns the rows added."""
    return sum(catch_up(uid, reactivate=False) or 0 for uid in user_ids)


def idle_among(user_ids: Iterable[int]) -> list[int]:
    """Which of these accounts are idle (one query)."""
    ids = sorted(set(user_ids))
    found: list[int] = []
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        found += [uid for (uid,) in query_rows(
            'SELECT "id" FROM "user_profile" WHERE "id" IN {ids} AND "long_term_idle"', ids=batch)]
    return found


def idle_user_ids(realm_id: int | None = None) -> list[int]:
    """Every idle account (of one organization)."""
    if realm_id is None:
        return [uid for (uid,) in query_rows('SELECT "id" FROM "user_profile" WHERE "long_term_idle"')]
    return [uid for (uid,) in query_rows(
        'SELECT "id" FROM "user_profile" WHERE "realm_id" = {p} AND "long_term_idle"', realm_id)]
