"""SQLite: WAL mode, foreign keys, a busy timeout; FTS5 for search. The only SQLite-only SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import sqlite3
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlparse

from peewee import Expression, SqliteDatabase, Table
from playhouse.pool import PooledSqliteDatabase

from chat_appliance.models.base import MAX_DATABASE_INT
from chat_appliance import models  # the message models load on first use (models/__init__.py)
from chat_appliance.db.backends.checkpointer import Checkpointer
from chat_appliance.db.backends.group_commit import GroupCommit
from chat_appliance.db.backends.text import html_to_text, words

if TYPE_CHECKING:
    import peewee
    from chat_appliance.models.base import RuntimeDatabase
    from sqlite3 import Cursor

NAME = "sqlite"

# Worker threads run the app in turns (lib/admission.py): queries run in this process, from
# its page cache, so a thread rarely waits on anything but the writer lock and COMMIT, which
# give the turn up.
WORKERS_TAKE_TURNS = True

# WAL lets readers run beside the one writer. synchronous=NORMAL in WAL mode keeps every
# committed transaction across a killed process (the WAL is written before COMMIT returns);
# only an operating-system crash can lose the last commits. cache_size is in KiB when negative,
# and it is per connection: a busy server has a pooled connection per active worker thread, and
# 1 MiB each keeps the process's memory within its budget, while the operating system's file
# cache (not counted in the process's memory) holds the rest of the hot pages. 4 MiB each cost
# 3 MiB more after 16 concurrent senders and bought no measurable speed: not in sends at 16
# threads (the writer's cache included), nor in fetches from 1,000,000 messages.
PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -1000,
    "busy_timeout": 10000,
    # The server checkpoints in a thread of its own (checkpointer.py). The automatic checkpoint,
    # which makes the commit that crosses it pay for the whole copy, is only a fallback, and for
    # other programs that write to the file: at 50,000 WAL pages (200 MB). At SQLite's default of
    # 1,000 pages a send (about 140 pages) paid a checkpoint every 7 sends; at 10,000, one single
    # client's send in 70 took 25-28 ms.
    "wal_autocheckpoint": 50000,
    # Statement journals (a savepoint's undo pages: every write transaction but the first of a
    # group commit runs in one) and sorts stay in memory instead of temporary files.
    "temp_store": "memory",
}

# The page size a new database file is created with (an existing file keeps its own; VACUUM
# would change it). A send writes one leaf of each per-user index (the primary key and the
# unread index) for every recipient, and its COMMIT copies each whole dirty page into the WAL:
# at 1 KiB instead of SQLite's default 4 KiB, one client's sends to a 53-member channel ran 13%
# faster, while the page cache holds the same bytes.
PAGE_SIZE = 1024


def path_from_url(database_url: str) -> str:
    """The file path of a sqlite:///path URL."""
    parsed = urlparse(database_url)
    return parsed.path if parsed.scheme else database_url


# SQLite integers are 64-bit and its driver raises OverflowError on a larger Python int. Ids from
# paths reach queries as sent (so that each endpoint answers its own "no such ..." error, as Zulip
# does for any id that matches no row), so bound parameters are clamped into range: a clamped id
# matches no row, and a clamped bound keeps its comparison's meaning.
_INT64_MAX = MAX_DATABASE_INT
_INT64_MIN = -MAX_DATABASE_INT - 1


def _clamp(value):
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        return _INT64_MAX if value > 0 else _INT64_MIN
    return value


class BoundedSqliteDatabase(PooledSqliteDatabase):
    """The pooled SQLite database, whose integer parameters never overflow the driver."""

    def execute_sql(self, sql: str, params: Any = None) -> Cursor:
        if params:
            params = [_clamp(value) for value in params]
        return super().execute_sql(sql, params)


def open_database(database_url: str, *, offline: bool = False, **_pool_options: int) -> BoundedSqliteDatabase:
    """A SqliteDatabase with our pragmas. Connections are per thread (worker threads) and close
    after each request; one more connection (`db.keeper`) stays open until close_database,
    because in WAL mode closing the *last* connection checkpoints and truncates the WAL, which
    would make every request pay a checkpoint (measured: about 7 ms per request).

    `offline`: for a new database that one process fills before anyone reads it (import-zulip).
    It keeps SQLite's rollback journal instead of the write-ahead log until a server opens it.
    A load of tens of millions of rows is one transaction, and in WAL mode each page it reads
    back (every index built at the end scans the whole table) is looked up through the log's
    index, at a cost that grows with the log: the five per-user indexes of a table of 68 million
    rows took 132 s to build inside such a transaction against 67 s with the journal. The
    journal of a new database holds only its few first pages, and a rollback (or the next open,
    after the process was killed) still leaves the database as it was before the load."""
    path = path_from_url(database_url)
    journal = "delete" if offline else "wal"
    # Pooled: closing a request's connection returns it for the next request on any thread, so
    # a request does not pay for opening a connection and setting its pragmas (measured: most of
    # a trivial request's database time). The pool has no upper bound of its own; the worker
    # pool's size bounds it.
    db = BoundedSqliteDatabase(path, pragmas={**PRAGMAS, "journal_mode": journal}, timeout=10, max_connections=None,
                               stale_timeout=300, check_same_thread=False)
    db.keeper = _keep_open(path, journal)
    db.versions_reader = Versions(db.keeper)
    db.group_commit = GroupCommit(db)
    if path != ":memory:" and not offline:
        db.checkpointer = Checkpointer(path, between_writes=db.group_commit.between_writes)
        db.group_commit.committed = db.checkpointer.wrote
    else:
        db.checkpointer = None
    # A send's unread rows wait outside the unread index (models/messages.py,
    # PENDING_UNREAD_INDEX) until a COMMIT puts all that waits into it at once.
    db.group_commit.before_commit = UnreadIndexer()
    db.defers_unread_index = True
    return db


# How long new messages' unread rows may wait outside the per-user indexes, the unread index
# and user_message_by_user (where readers find them by the list of their messages,
# pending_unread_message). The COMMIT that ends the wait carries all that waited: for one client
# sending to a 53-member channel, some fifty sends' rows, about 2,500, in a few milliseconds.
# Each recipient's leaves of those indexes are then written once per fifty sends instead of once
# per send; waiting longer would save little more, and make the COMMIT that ends the wait, and
# the answers held for it, longer.
INDEX_UNREAD_EVERY_SECONDS = 0.1


# How many user ids' rows one pass puts into the per-user indexes. A pass over everyone after a
# tenth of a second of sends to a 2,000-member channel moved some 15,000 rows into two indexes
# (3,000 leaves), and the send whose COMMIT ran it answered 170 ms late, one send in twelve. A
# slice of the ids bounds each pass; the passes take turns over the slices, so each recipient's
# leaves are still written once per round, for all the messages sent since. An organization with
# fewer ids than this is covered by every pass. One client's sends to that channel, at 50,000
# messages of history: 128 ids a pass gave p95 59 ms and p99 80 ms, 256 gave 82 and 137 ms.
USERS_PER_PASS = 128


class UnreadIndexer:
    """Run before a group COMMIT, in its transaction: at most every INDEX_UNREAD_EVERY_SECONDS,
    put unread rows that sends wrote into the per-user indexes, for the next USERS_PER_PASS user
    ids that have such rows. A send's COMMIT then writes no leaf of those, where it wrote two per
    recipient, and a pass writes each recipient's leaves once for all the messages since its last
    turn. In the writer's transaction, so the rows it moves and the list it shortens change
    together."""

    def __init__(self, every: float = INDEX_UNREAD_EVERY_SECONDS, users_per_pass: int = USERS_PER_PASS):
        self.every = every
        self.users_per_pass = users_per_pass
        self.last = 0.0
        self.next_user = 0  # where the next pass starts

    def __call__(self, connection: sqlite3.Connection) -> int:
        now = time.monotonic()
        if now - self.last < self.every:
            return 0
        self.last = now
        try:
            changed, self.next_user = index_pending_unread_slice(connection, self.next_user, self.users_per_pass)
            return changed
        except sqlite3.OperationalError as error:
            if "pending_unread_message" in str(error):  # a database before migration 115
                return 0
            raise


# The rows that wait for the per-user indexes: those of listed messages that carry the bit.
_WAITING = "message_id IN (SELECT message_id FROM pending_unread_message) AND (flags & ?) != 0"


def index_pending_unread(connection: sqlite3.Connection) -> int:
    """Clear PENDING_UNREAD_INDEX on the rows of every message in pending_unread_message and
    empty the list, in the connection's open transaction; how many rows changed."""
    return index_pending_unread_slice(connection, 0, 1 << 62)[0]


def index_pending_unread_slice(connection: sqlite3.Connection, start: int, span: int) -> tuple[int, int]:
    """index_pending_unread() for the rows of user ids from the first one at or after `start` that
    has a waiting row, up to `span` ids on; (rows changed, where the next slice starts). After
    the last slice (the next one starts again at 0), the messages none of whose rows waits any
    more leave the list: only then, since a message listed in the middle of a round still has
    waiting rows below where that round had come."""
    pending = models.PENDING_UNREAD_INDEX
    if connection.execute("SELECT 1 FROM pending_unread_message LIMIT 1").fetchone() is None:
        return 0, 0
    # Per listed message, its first waiting row from `start` on (the key's order): a MIN over all
    # of their rows read every one of them.
    (first,) = connection.execute(
        "SELECT MIN((SELECT user_profile_id FROM user_message WHERE message_id = listed.message_id"
        " AND user_profile_id >= ? AND (flags & ?) != 0 ORDER BY user_profile_id LIMIT 1))"
        " FROM pending_unread_message AS listed", (start, pending)).fetchone()
    changed = 0
    if first is not None:
        changed = connection.execute(
            f"UPDATE user_message SET flags = flags & ? WHERE {_WAITING} AND user_profile_id >= ? AND user_profile_id < ?",
            (~pending, pending, first, first + span)).rowcount
        if connection.execute(f"SELECT 1 FROM user_message WHERE {_WAITING} AND user_profile_id >= ? LIMIT 1",
                              (pending, first + span)).fetchone() is not None:
            return changed, first + span
    connection.execute(
        "DELETE FROM pending_unread_message WHERE NOT EXISTS (SELECT 1 FROM user_message"
        " WHERE user_message.message_id = pending_unread_message.message_id AND (flags & ?) != 0)", (pending,))
    return changed, 0


def close_database(db: BoundedSqliteDatabase) -> None:
    """Close every pooled connection and the keeper (the app is done with the database)."""
    if not db.is_closed():
        db.close()
    db.close_all()
    db.group_commit.close()
    if db.checkpointer is not None:
        db.checkpointer.close()
    keeper = getattr(db, "keeper", None)
    if keeper is not None:
        db.versions_reader.close()
        keeper.close()
        db.keeper = None


class Versions:
    """Two numbers, read together on the keeper connection, which never writes: (data version,
    configuration generation), or (None, None) in memory (no keeper), where nothing is kept.

    The data version, SQLite's PRAGMA data_version, moves whenever a transaction is committed to
    the database, by any connection of any process. The configuration generation, the counter of
    config_generation (migration 117), moves whenever a transaction changes a row of the tables a
    send's configuration reads depend on (accounts, channels, subscriptions, groups, mutes), by
    any connection of any process, as triggers raise it; None on a database that lacks it. Caches
    of rows (web/auth.py, lib/snapshots.py) keep what they read with the number read before it,
    and trust it while the number has not moved. One statement on an idle connection, where
    reading the rows would cost a statement each and a connection from the pool; both numbers in
    that one statement cost about 5 microseconds more than the data version alone."""

    BOTH = "SELECT data_version, (SELECT value FROM config_generation WHERE id = 1) FROM pragma_data_version"

    def __init__(self, keeper):
        self.keeper = keeper
        self._lock = threading.Lock()

    def __call__(self) -> tuple[int | None, int | None]:
        keeper = self.keeper
        if keeper is None:
            return None, None
        with self._lock:
            try:
                return self._read(keeper)
            except sqlite3.Error:  # closed with the app: read the rows instead
                return None, None

    def _read(self, keeper: sqlite3.Connection) -> tuple[int, int | None]:
        try:
            # fetchall: the statement runs to its end, so the keeper keeps no read transaction open.
            ((data_version, generation),) = keeper.execute(self.BOTH).fetchall()
        except sqlite3.OperationalError as error:
            if "config_generation" not in str(error):
                raise
            return keeper.execute("PRAGMA data_version").fetchone()[0], None  # a database before migration 117
        return data_version, generation

    def close(self) -> None:
        with self._lock:
            self.keeper = None


def _keep_open(path, journal="wal"):
    """One idle connection to `path` (no transaction, so it blocks nobody); None in memory."""
    if path == ":memory:":
        return None
    keeper = sqlite3.connect(path, check_same_thread=False)
    # Only takes effect while the file is still empty, which is when this first connection
    # creates it; on an existing database it changes nothing.
    keeper.execute(f"PRAGMA page_size={PAGE_SIZE}")
    # A read maps the WAL index; only then does this connection count as open to the WAL.
    keeper.execute(f"PRAGMA journal_mode={journal}").fetchall()
    keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
    return keeper


def clone_database(source_url: str, target_url: str) -> None:
    """Make the database at target_url a copy of the one at source_url (tests build their
    database once per session and copy it per test). SQLite's online backup copies a consistent
    snapshot, the write-ahead log included, while other connections stay open."""
    source = sqlite3.connect(path_from_url(source_url))
    target = sqlite3.connect(path_from_url(target_url))
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


# SQLite has one writer at a time. Without a lock (one per open database, so apps on different
# files do not wait for each other), concurrent writers in this process queue inside SQLite's
# busy handler, which sleeps and retries with growing pauses: sixteen concurrent senders gave
# no more throughput than one and a p99 of seconds. Waiting on a lock instead wakes the next
# writer the moment the previous one is done, and writers that queued share one COMMIT
# (group_commit.py says how and why). Other processes (the CLI beside a running server) still
# meet the busy handler.


@contextmanager
def write_transaction(db: RuntimeDatabase, after_commit: Callable[..., Any] | None = None,
                      deferrable: bool = False) -> Iterator[None]:
    """A write transaction under the process's writer lock, on the shared write connection:
    writers take turns in order, never deadlock upgrading from read to write, and those queued
    together commit together. `after_commit` runs once the changes are committed. Nested, a
    savepoint."""
    with db.group_commit.transaction(after_commit, deferrable):
        yield


# --- reading an instance out (chat-appliance migrate-database) -----------------------------------


def open_read_only(database_url: str) -> Any:
    """A sqlite3 connection that cannot write (the source of a copy stays as it was)."""
    import os
    import sqlite3
    from urllib.parse import quote

    path = os.path.abspath(path_from_url(database_url))
    if not os.path.exists(path):
        raise FileNotFoundError(f"no SQLite database at {path}")
    return sqlite3.connect(f"file:{quote('/' + path.lstrip('/'))}?mode=ro", uri=True)


def source_tables(conn: Any) -> list[Any]:
    """The tables of a read-only connection's database, without SQLite's own and FTS5's."""
    return [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND name NOT LIKE 'message_search%' ORDER BY name")]


def source_columns(conn: Any, table: str) -> list[Any]:
    """A table's column names, in order."""
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def read_rows(conn: Any, table: str, columns: Any, batch: Any) -> Iterator[Any]:
    """A table's rows in insertion order (a WITHOUT ROWID table's in key order), `batch` at a time."""
    quoted = ", ".join(f'"{column}"' for column in columns)
    (create_sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    without_rowid = create_sql.upper().replace(" ", "").endswith(")WITHOUTROWID")
    cursor = conn.execute(f'SELECT {quoted} FROM "{table}"' + ("" if without_rowid else " ORDER BY rowid"))
    while True:
        rows = cursor.fetchmany(batch)
        if not rows:
            return
        yield rows


def id_high_water_marks(conn: Any) -> Any:
    """{table: the largest id ever given out}, from AUTOINCREMENT's bookkeeping (deleted rows too)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone()
    return dict(conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall()) if exists else {}


def client_error(error: Any) -> None:
    """The message of the 400 answer for an engine error caused by what a request sent, or None
    (SQLite stores what PostgreSQL refuses; see backends.postgres)."""
    return None


def unavailable(error: Any) -> bool:
    """Whether an exception (or one it was raised from) means the database file cannot be opened
    (gone, unreadable, its folder unmounted): an outage to wait out, not a bug."""
    import sqlite3

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, sqlite3.Error):
            # SQLITE_CANTOPEN (14); Python names the code and sets sqlite_errorcode only from 3.11,
            # so on 3.10 the message tells it.
            return getattr(error, "sqlite_errorcode", None) == 14 or "unable to open database file" in str(error)
        error = error.__cause__ or error.__context__ or getattr(error, "orig", None)
    return False


@contextmanager
def migration_transaction(db: RuntimeDatabase) -> Iterator[None]:
    """One migration's transaction, with foreign keys off as SQLite's documented way to rebuild a
    table requires (the pragma cannot change inside a transaction): dropping a parent table would
    otherwise cascade to its children. The keys are checked before commit."""
    import sqlite3

    db.execute_sql("PRAGMA foreign_keys = OFF")
    try:
        with db.atomic("IMMEDIATE"):  # the write lock first: another process may be migrating too
            yield
            problems = db.execute_sql("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise sqlite3.IntegrityError(f"migration left broken foreign keys: {problems[:5]}")
    finally:
        db.execute_sql("PRAGMA foreign_keys = ON")


def advance_sequences(db: Any, floors: dict[str, int]) -> None:
    """Nothing to do: a rowid table gives the next row max(id) + 1 by itself, and AUTOINCREMENT
    tables keep their own high-water mark."""


def never_reuse_ids(db: Any, table: str) -> None:
    """Make `table`'s ids AUTOINCREMENT: SQLite otherwise gives the next row max(id) + 1, so the id
    of a deleted newest row would come back (and clients holding it would see another message
    under it). Rebuilds the table, as SQLite cannot add AUTOINCREMENT in place; its indexes are
    made again from their own SQL. Run inside migration_transaction."""
    import re

    (create_sql,) = db.execute_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                                   (table,)).fetchone()
    if "AUTOINCREMENT" in create_sql.upper():
        return
    new_sql, count = re.subn(r'("id" INTEGER NOT NULL PRIMARY KEY)', r"\1 AUTOINCREMENT", create_sql, count=1)
    if count != 1:
        raise RuntimeError(f"unexpected schema of {table}: {create_sql}")
    index_sqls = [row[0] for row in db.execute_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (table,))]
    new_sql = re.sub(rf'^CREATE TABLE (IF NOT EXISTS )?"?{table}"?', f'CREATE TABLE "{table}_rebuilt"', new_sql)
    db.execute_sql(new_sql)
    db.execute_sql(f'INSERT INTO "{table}_rebuilt" SELECT * FROM "{table}"')
    db.execute_sql(f'DROP TABLE "{table}"')
    db.execute_sql(f'ALTER TABLE "{table}_rebuilt" RENAME TO "{table}"')
    for sql in index_sqls:
        db.execute_sql(sql)


# --- full-text search (FTS5) -------------------------------------------------------------------
# One row per message, rowid = message id; the body is the rendered HTML's text, as Zulip
# searches what readers see. Porter stemming finds "sending" for "send".


def create_search_index(db: Any) -> None:
    """The FTS5 table."""
    db.execute_sql(
        "CREATE VIRTUAL TABLE message_search USING fts5(topic, body, tokenize='porter unicode61')"
    )


def index_messages(db: RuntimeDatabase, rows: list[tuple[int, str, str]], new: bool = False) -> None:
    """(Re)index messages given as (id, topic, rendered_html); `new` skips removing old rows."""
    rows = list(rows)
    if not rows:
        return
    if not new:
        unindex_messages(db, [row[0] for row in rows])
    db.execute_sql(
        "INSERT INTO message_search (rowid, topic, body) VALUES " + ",".join(["(?, ?, ?)"] * len(rows)),
        [value for mid, topic, html in rows for value in (mid, topic, html_to_text(html))],
    )


def unindex_messages(db: RuntimeDatabase, message_ids: list[int]) -> None:
    """Remove messages from the index (deleted, or about to be re-indexed)."""
    ids = list(message_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        db.execute_sql(f"DELETE FROM message_search WHERE rowid IN ({','.join('?' * len(chunk))})", chunk)


def indexed_message_ids(db: RuntimeDatabase) -> set[int]:
    """The ids of the messages in the search index (checks and tests)."""
    return {row[0] for row in db.execute_sql("SELECT rowid FROM message_search")}


def indexed_by(index: str) -> str:
    """The clause, after a table's name in FROM, that makes the planner read it through this
    index (SQLite reads a rowid table by its key whenever a query gives the key)."""
    return f' INDEXED BY "{index}"'


def fts_query(terms: list[str], prefixes: bool = False) -> str:
    """An FTS5 MATCH expression: every term must appear, a word by its stem (or, with `prefixes`,
    as the start of a word's stem), phrases kept together.

    Why words are whole by default: FTS5 (SQLite 3.40) answers a prefix term by first merging
    the match lists of every word it starts, whatever the LIMIT: 16 ms for a common word over a
    million messages, against 0.13 ms for the word alone, read newest first until the page is
    full. lib/narrow.py falls back to prefixes when whole words find nothing."""
    parts = []
    for term in terms:
        if not words(term):
            continue  # nothing FTS5 would index (punctuation only): as on PostgreSQL, no condition
        escaped = term.replace("\x00", " ").replace('"', '""')
        parts.append(f'"{escaped}"*' if prefixes and " " not in term else f'"{escaped}"')
    return " AND ".join(parts)


def search_condition(message_id_column: peewee.AutoField, terms: list[str], prefixes: bool = False) -> Any:
    """A peewee expression true for messages matching every search term (fts_query)."""
    from peewee import SQL

    query = fts_query(terms, prefixes)
    if not query:
        return SQL("1 = 0")
    return message_id_column.in_(SQL("(SELECT rowid FROM message_search WHERE message_search MATCH ?)",
                                     (query,)))


# The full-text table as a source of rows: "message_search" is also the name of its hidden
# column that MATCH takes on the left, which stays valid when the query aliases the table.
_SEARCH_TABLE = Table("message_search", ("rowid", "message_search"))


def search_source(terms: list[str], prefixes: bool = False) -> Any:
    """(the full-text table, its rowid column, the MATCH condition) for a fetch that reads a
    search's matches from the newest (or oldest) on and stops at its limit, where
    search_condition's subquery collects every match first: a common word matches a share of
    all messages, a cost that grew with the organization's history. None when no term has
    anything to match."""
    query = fts_query(terms, prefixes)
    if not query:
        return None
    return _SEARCH_TABLE, _SEARCH_TABLE.rowid, Expression(_SEARCH_TABLE.message_search, "MATCH", query)


# --- an offline load (import-zulip) --------------------------------------------------------------

# The page cache of the load's write connection: the per-user rows' table and the indexes rebuilt
# at the end go through it. SQLite sorts an index being built within this much memory, and in
# temporary files beyond it. (Counted in the import's memory; the server's own is 1 MiB.)
BULK_LOAD_CACHE_KIB = 32 * 1024
# Threads besides the connection's own that sort an index being built (PRAGMA threads), each
# within a page cache's worth of memory of its own. By the time the indexes are built the
# message files are read and any helper process has exited, so a second core is free. What it
# bought was small and noisy: the per-user index of 24.6 million rows took 10.2-14.6 s with one
# against 14.2-15.1 s without; the index builds of an import of 100,000 messages, 5.4-8.1 s
# against 7.0-7.2 s.
BULK_LOAD_SORT_THREADS = 1


@contextmanager
def bulk_load(db: RuntimeDatabase) -> Iterator[None]:
    """Settings for loading a new database offline, on the write connection, restored after.
    A bigger page cache; sorts in temporary files (not memory: building an index of a hundred
    million rows would sort gigabytes), with a thread to help; no sync until the end, and no
    per-row foreign-key lookups (the import checked every reference before writing). Then the
    log is checkpointed into the database file, synced (or the file synced, for a database
    opened `offline`): a crash during the load leaves a database that is discarded anyway (the
    instance is new), and one after it loses nothing."""
    group = db.group_commit

    def configure(pragmas: dict[str, Any]) -> None:
        if group.connection is None:
            group.connection = SqliteDatabase._connect(group.db)
        for name, value in pragmas.items():
            group.connection.execute(f"PRAGMA {name} = {value}")

    group.between_writes(lambda: configure({"cache_size": -BULK_LOAD_CACHE_KIB, "temp_store": "file",
                                            "synchronous": "off", "foreign_keys": 0,
                                            "threads": BULK_LOAD_SORT_THREADS}))
    try:
        yield
    finally:
        def restore() -> None:
            configure({**{name: PRAGMAS[name] for name in ("cache_size", "temp_store", "synchronous", "foreign_keys")},
                       "threads": 0})
            (journal,) = group.connection.execute("PRAGMA journal_mode").fetchone()
            if journal == "wal":
                group.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            else:
                # Committed with no sync (an offline load keeps the rollback journal): the
                # database file is synced here instead of by a checkpoint (an in-memory
                # database has no file).
                path = group.connection.execute("PRAGMA database_list").fetchone()[2]
                if path:
                    _sync_file(path)
            # The cache's pages go with the connection: the server's own starts small.
            group.connection.close()
            group.connection = None

        group.between_writes(restore)


def _sync_file(path: str) -> None:
    """Write a file's data through to the disk."""
    import os

    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def secondary_indexes(db: RuntimeDatabase, table: str) -> list[tuple[str, str]]:
    """(name, CREATE statement) of the table's indexes that back no key or constraint."""
    return [(name, sql) for name, sql in db.execute_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
        " ORDER BY name", (table,)).fetchall()]
