"""SQLite: WAL mode, foreign keys, a busy timeout; FTS5 for search. The only SQLite-only SQL."""

from contextlib import contextmanager
from urllib.parse import urlparse

from peewee import SqliteDatabase

from .text import words

NAME = "sqlite"

# WAL lets readers run beside the one writer. synchronous=NORMAL in WAL mode keeps every
# committed transaction across a killed process (the WAL is written before COMMIT returns);
# only an operating-system crash can lose the last commits. cache_size is in KiB when negative.
PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -64000,
    "busy_timeout": 10000,
}


def path_from_url(database_url):
    """The file path of a sqlite:///path URL."""
    parsed = urlparse(database_url)
    return parsed.path if parsed.scheme else database_url


def open_database(database_url, **_pool_options):
    """A SqliteDatabase with our pragmas. Connections are per thread (waitress threads) and close
    after each request; one more connection stays open for the life of the process, because in
    WAL mode closing the *last* connection checkpoints and truncates the WAL, which would make
    every request pay a checkpoint (measured: about 7 ms per request)."""
    path = path_from_url(database_url)
    db = SqliteDatabase(path, pragmas=PRAGMAS, timeout=10)
    _keep_open(path)
    return db


_keepers = {}


def _keep_open(path):
    """Hold one idle connection to `path` (no transaction, so it blocks nobody)."""
    import sqlite3

    if path != ":memory:" and path not in _keepers:
        keeper = sqlite3.connect(path, check_same_thread=False)
        # A read maps the WAL index; only then does this connection count as open to the WAL.
        keeper.execute("PRAGMA journal_mode=wal").fetchall()
        keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
        _keepers[path] = keeper


@contextmanager
def write_transaction(db):
    """BEGIN IMMEDIATE: take the write lock at the start, so two writers never deadlock
    upgrading from read to write (SQLite would answer SQLITE_BUSY at once)."""
    with db.atomic("IMMEDIATE") as txn:
        yield txn


# --- full-text search (FTS5) -------------------------------------------------------------------
# One row per message, rowid = message id; the body is the rendered HTML's text, as Zulip
# searches what readers see. Porter stemming finds "sending" for "send".


def create_search_index(db):
    """The FTS5 table."""
    db.execute_sql(
        "CREATE VIRTUAL TABLE message_search USING fts5(topic, body, tokenize='porter unicode61')"
    )


def index_messages(db, rows, new=False):
    """(Re)index messages given as (id, topic, rendered_html); `new` skips removing old rows."""
    from ..lib.text import html_to_text

    rows = list(rows)
    if not rows:
        return
    if not new:
        unindex_messages(db, [row[0] for row in rows])
    db.execute_sql(
        "INSERT INTO message_search (rowid, topic, body) VALUES " + ",".join(["(?, ?, ?)"] * len(rows)),
        [value for mid, topic, html in rows for value in (mid, topic, html_to_text(html))],
    )


def unindex_messages(db, message_ids):
    """Remove messages from the index (deleted, or about to be re-indexed)."""
    ids = list(message_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        db.execute_sql(f"DELETE FROM message_search WHERE rowid IN ({','.join('?' * len(chunk))})", chunk)


def indexed_message_ids(db):
    """The ids of the messages in the search index (checks and tests)."""
    return {row[0] for row in db.execute_sql("SELECT rowid FROM message_search")}


def fts_query(terms):
    """An FTS5 MATCH expression: every term must appear (prefix match), phrases kept together."""
    parts = []
    for term in terms:
        if not words(term):
            continue  # nothing FTS5 would index (punctuation only): as on PostgreSQL, no condition
        escaped = term.replace('"', '""')
        parts.append(f'"{escaped}"' if " " in term else f'"{escaped}"*')
    return " AND ".join(parts)


def search_condition(message_id_column, terms):
    """A peewee expression true for messages matching every search term."""
    from peewee import SQL

    query = fts_query(terms)
    if not query:
        return SQL("1 = 0")
    return message_id_column.in_(SQL("(SELECT rowid FROM message_search WHERE message_search MATCH ?)",
                                     (query,)))
