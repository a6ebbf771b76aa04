"""Database backends. Everything specific to one database engine (pragmas, full-text
search, upsert spelling) lives in one module per engine behind the same small interface:

    open_database(url_or_path, pool_size=, pool_timeout=) -> peewee.Database
    write_transaction(db) -> context manager for a transaction that will write
    create_search_index(db), index_messages(db, rows), unindex_messages(db, ids),
    search_condition(message_id_column, terms, prefixes) -> peewee expression matching message ids
    indexed_message_ids(db) -> set of the ids in the search index
    indexed_by(index) -> the clause after a table's name that reads it through that index
    migration_transaction(db) -> context manager for one migration; never_reuse_ids(db, table)
    clone_database(source_url, target_url): make target a copy of source (test templates)
    client_error(exc) -> the message of a 400 for a value only this engine refuses, else None
    unavailable(exc) -> whether exc means the database cannot be reached (503, not a bug)
    close_database(db): release the connection and whatever else the backend holds for it
    WORKERS_TAKE_TURNS: whether serve's worker threads run the app one at a time (lib/admission.py)

and, for `chat-appliance migrate-database` (chat_appliance/ops/migrate_database.py), on the source side
(sqlite) open_read_only, source_tables, source_columns, read_rows, id_high_water_marks, and on
the target side (postgres) existing_tables, insert_rows, advance_sequences.

The rest of the code never writes engine-specific SQL.
"""

from __future__ import annotations

from typing import Any

from urllib.parse import urlparse


def backend_for(database_url: str) -> Any:
    """The backend module for a database URL (`sqlite:///path` or `postgresql://...`)."""
    scheme = urlparse(database_url).scheme
    if scheme in ("postgres", "postgresql"):
        from chat_appliance.db.backends import postgres

        return postgres
    if scheme in ("sqlite", ""):
        from chat_appliance.db.backends import sqlite

        return sqlite
    raise ValueError(f"Unsupported database URL scheme {scheme!r}: use sqlite:/// or postgresql://")
