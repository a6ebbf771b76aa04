"""PostgreSQL, for teams that outgrow one machine. Same interface as backends.sqlite."""

from contextlib import contextmanager
from urllib.parse import urlparse

from peewee import PostgresqlDatabase

NAME = "postgres"


def open_database(database_url):
    """A PostgresqlDatabase from a postgresql://user@host:port/dbname URL."""
    parsed = urlparse(database_url)
    return PostgresqlDatabase(
        parsed.path.lstrip("/"),
        user=parsed.username,
        password=parsed.password,
        host=parsed.hostname,
        port=parsed.port or 5432,
    )


def close_database(db):
    """Close this thread's connection (the app is done with the database)."""
    if not db.is_closed():
        db.close()


@contextmanager
def write_transaction(db):
    """A plain transaction; row locks are taken by the statements themselves."""
    with db.atomic() as txn:
        yield txn


def _not_yet(*_args, **_kwargs):
    raise NotImplementedError("Full-text search is not implemented on PostgreSQL yet; use SQLite.")


# Full-text search on PostgreSQL (a tsvector table) is not written yet: these say so loudly.
create_search_index = index_messages = unindex_messages = search_condition = _not_yet
