"""SQLite: WAL mode, foreign keys, a busy timeout; FTS5 for search. The only SQLite-only SQL."""

from contextlib import contextmanager
from urllib.parse import urlparse

from peewee import SqliteDatabase

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


def open_database(database_url):
    """A SqliteDatabase with our pragmas. Connections are per thread (waitress threads)."""
    return SqliteDatabase(path_from_url(database_url), pragmas=PRAGMAS, timeout=10)


@contextmanager
def write_transaction(db):
    """BEGIN IMMEDIATE: take the write lock at the start, so two writers never deadlock
    upgrading from read to write (SQLite would answer SQLITE_BUSY at once)."""
    with db.atomic("IMMEDIATE") as txn:
        yield txn
