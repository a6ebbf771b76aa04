"""PostgreSQL, for teams that outgrow one machine. Same interface as backends.sqlite.

Connections come from a pool (playhouse.pool) sized by DATABASE_POOL_SIZE: a request takes one
and gives it back at teardown; a long poll gives its back before it waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from contextlib import contextmanager
from urllib.parse import parse_qsl, urlparse

from playhouse.pool import PooledPostgresqlDatabase

from chat_appliance.db.drivers import load_psycopg2
from chat_appliance.db.backends.text import html_to_text, words as _words

if TYPE_CHECKING:
    import peewee

NAME = "postgres"

# Worker threads do not take turns (lib/admission.py): every query waits on the network, and a
# thread holding the turn through those waits would keep every other request waiting too.
WORKERS_TAKE_TURNS = False

# Text search configuration: 'english' stemming (the Snowball stemmer, Porter's successor) with no
# stop-word list, created by migration 50. SQLite's FTS5 porter tokenizer keeps stop words, so a
# search for "the" or "to be" finds the same messages on both engines.
SEARCH_CONFIG = "chat_english"

# Key of the transaction-level advisory lock taken by write_transaction (any constant: the
# ASCII of "chat").
WRITER_LOCK_KEY = 0x63686174


def open_database(database_url: str, pool_size: int = 20, pool_timeout: int = 30, *, offline: bool = False) -> Any:
    """A pooled PostgresqlDatabase from a postgresql://user:password@host:port/dbname URL
    (query parameters, e.g. ?sslmode=require, are passed to the driver). `offline` (a load
    before anyone reads the database) changes nothing here: PostgreSQL's log is not read back."""
    load_psycopg2()
    parsed = urlparse(database_url)
    options = dict(parse_qsl(parsed.query))
    return PooledPostgresqlDatabase(
        parsed.path.lstrip("/"),
        user=parsed.username,
        password=parsed.password,
        host=parsed.hostname,
        port=parsed.port or 5432,
        max_connections=pool_size,
        # A request waits this long for a free connection, then fails (instead of at once).
        timeout=pool_timeout,
        # Connections idle for 5 minutes are closed rather than reused.
        stale_timeout=300,
        **options,
    )


# SQLSTATEs of values PostgreSQL refuses where SQLite stores them: a number too large for its
# column (INTEGER is 32-bit here, 64-bit on SQLite), text longer than a VARCHAR's limit (SQLite
# ignores the limit), a character the encoding cannot hold.
_REFUSED_VALUES = {
    "22003": "Number out of range",
    "22001": "Value too long",
    "22P05": "Request contains characters that cannot be stored",
    "22021": "Request contains characters that cannot be stored",
}


def client_error(error: Any) -> Any:
    """The message of the 400 answer for an error that only PostgreSQL raises because of what a
    request sent, or None (app.py makes it Zulip's BAD_REQUEST). The parameter layer refuses NUL characters and out-of-range numbers it knows of;
    this is the net under it, so that a value reaching the database by another path (a header,
    a URL path, a JSON value) is a clear 400 and never a 500. The failed statement's transaction
    has been rolled back, so nothing changed."""
    if isinstance(error, ValueError) and "NUL (0x00)" in str(error):
        return "Request contains NULL (0x00) characters"
    code = getattr(getattr(error, "orig", None), "pgcode", None) or getattr(error, "pgcode", None)
    if code is None and error.__cause__ is not None:
        code = getattr(error.__cause__, "pgcode", None)
    if code in _REFUSED_VALUES:
        return _REFUSED_VALUES[code]
    return None


# SQLSTATEs that mean the database is not there to answer (an outage to wait out, not a bug):
# the server shutting down or starting (57P01-57P03), the database gone or renamed (3D000).
# Class 08 (connection exceptions) counts too, as does a driver error with no SQLSTATE at all:
# psycopg2 raises those when the connection fails, is refused or was closed under it.
_UNAVAILABLE = {"57P01", "57P02", "57P03", "3D000"}


def unavailable(error: Any) -> bool:
    """Whether an exception (or one it was raised from) means the database cannot be reached."""
    import psycopg2

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, (psycopg2.OperationalError, psycopg2.InterfaceError)):
            code = error.pgcode
            return code is None or code.startswith("08") or code in _UNAVAILABLE
        error = error.__cause__ or error.__context__ or getattr(error, "orig", None)
    return False


def autocommit_connection(database_url: str) -> Any:
    """A psycopg2 connection of its own (outside the pool), in autocommit, to the URL's database:
    a shard's LISTEN connection, its control notifications, the shared rate limits."""
    import psycopg2

    load_psycopg2()
    parsed = urlparse(database_url)
    options = dict(parse_qsl(parsed.query))
    conn = psycopg2.connect(dbname=parsed.path.lstrip("/"), user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432, **options)
    conn.autocommit = True
    return conn


def _maintenance_connection(database_url):
    """An autocommit psycopg2 connection to the server's `postgres` database, with the URL's
    credentials (CREATE and DROP DATABASE cannot run inside the database they name)."""
    import psycopg2

    parsed = urlparse(database_url)
    conn = psycopg2.connect(dbname="postgres", user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432)
    conn.autocommit = True
    return conn


def _quoted_name(database_url):
    name = urlparse(database_url).path.lstrip("/")
    return '"' + name.replace('"', '""') + '"'


def clone_database(source_url: str, target_url: str) -> None:
    """Make the database at target_url a copy of the one at source_url (CREATE DATABASE ...
    TEMPLATE: a file-level copy; the source must have no open session)."""
    conn = _maintenance_connection(source_url)
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {_quoted_name(target_url)} TEMPLATE {_quoted_name(source_url)}")
    finally:
        conn.close()


def close_database(db: Any) -> None:
    """The app is done with the database: give this thread's connection back and close the
    pool's idle connections (connections other threads still use close when given back)."""
    if not db.is_closed():
        db.close()
    db.close_idle()


@contextmanager
def write_transaction(db: Any, after_commit: Callable[..., Any] | None = None,
                      deferrable: bool = False) -> Iterator[Any]:
    """A transaction that writes; `after_commit` runs once it has committed. SQLite has one writer at a time (BEGIN IMMEDIATE), and the
    actions rely on it: check-then-insert for unique names, "largest order + 1", the send path's
    reads of subscriptions before its inserts. PostgreSQL allows many writers, so the outermost
    write transaction takes one transaction-level ADVISORY lock (pg_advisory_xact_lock, released
    at commit or rollback): writers queue on that one lock as they do on SQLite's, which cannot
    deadlock (a single lock has no ordering to get wrong), while readers never wait. Nested
    write_transactions are savepoints and take nothing more."""
    outermost = db.transaction_depth() == 0
    with db.atomic():
        if outermost:
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK_KEY,))
        yield
    if after_commit is not None:
        after_commit()


@contextmanager
def migration_transaction(db: Any) -> Iterator[Any]:
    """One migration's transaction (PostgreSQL's DDL is transactional as it is), holding the
    writer lock, so that two processes starting at once apply each migration once."""
    with db.atomic():
        db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK_KEY,))
        yield


def never_reuse_ids(db: Any, table: str) -> None:
    """Nothing to do: a SERIAL column's sequence never hands out a number twice, even after the
    newest row is deleted (migrate-database advances it past every id the source gave out)."""


# --- copying an instance in (chat-appliance migrate-database) ------------------------------------


def existing_tables(db: Any) -> list[Any]:
    """The tables of the database's public schema (a copy goes only into a database with none)."""
    cursor = db.execute_sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
    return [row[0] for row in cursor.fetchall()]


def insert_rows(db: Any, table: str, columns: Any, rows: list[tuple[Any, ...]]) -> None:
    """Insert rows read from another engine, ids included: SQLite's 0/1 become booleans where the
    column is boolean (the only type the two engines store differently here)."""
    from psycopg2.extras import execute_values

    types = dict(db.execute_sql(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'"
        " AND table_name = %s", (table,)).fetchall())
    booleans = [i for i, column in enumerate(columns) if types.get(column) == "boolean"]
    if booleans:
        rows = [tuple(bool(v) if i in booleans and v is not None else v for i, v in enumerate(row)) for row in rows]
    quoted = ", ".join(f'"{column}"' for column in columns)
    execute_values(db.cursor(), f'INSERT INTO "{table}" ({quoted}) VALUES %s', rows, page_size=1000)


def advance_sequences(db: Any, floors: dict[str, int]) -> None:
    """Move each table's id sequence past its largest id, and past `floors[table]` (the highest id
    the source ever gave out, deleted rows included), so that no id is handed out twice."""
    for table, column in db.execute_sql(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND column_default LIKE %s", ("nextval(%",)).fetchall():
        (largest,) = db.execute_sql(f'SELECT COALESCE(MAX("{column}"), 0) FROM "{table}"').fetchone()
        value = max(largest, floors.get(table, 0))
        if value > 0:
            db.execute_sql("SELECT setval(pg_get_serial_sequence(%s, %s), %s)", (f'"{table}"', column, value))


# --- full-text search (tsvector + GIN) ---------------------------------------------------------
# One row per message in message_search(message_id, document), maintained by the send, edit and
# delete actions through index_messages / unindex_messages, as on SQLite. Text is split into
# words the way FTS5's unicode61 tokenizer does (backends/text.py), so that both engines see the
# same words; PostgreSQL then stems them.


def create_search_index(db: Any) -> None:
    """The text search configuration, the index table and its GIN index."""
    db.execute_sql(f"CREATE TEXT SEARCH DICTIONARY {SEARCH_CONFIG}_stem (TEMPLATE = snowball, LANGUAGE = english)")
    db.execute_sql(f"CREATE TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} (COPY = english)")
    db.execute_sql(
        f"ALTER TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} ALTER MAPPING FOR asciiword, asciihword,"
        f" hword_asciipart, word, hword, hword_part WITH {SEARCH_CONFIG}_stem"
    )
    db.execute_sql(
        "CREATE TABLE message_search (message_id INTEGER PRIMARY KEY REFERENCES message (id) ON DELETE CASCADE,"
        " document TSVECTOR NOT NULL)"
    )
    db.execute_sql("CREATE INDEX message_search_document ON message_search USING GIN (document)")


def index_messages(db: Any, rows: list[tuple[Any, ...]], new: bool = False) -> None:
    """(Re)index messages given as (id, topic, rendered_html); an upsert, so `new` changes nothing."""
    rows = list(rows)
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        values = ",".join(
            [f"(%s, setweight(to_tsvector('{SEARCH_CONFIG}', %s), 'A') || to_tsvector('{SEARCH_CONFIG}', %s))"]
            * len(chunk))
        params = [value for mid, topic, html in chunk
                  for value in (mid, " ".join(_words(topic)), " ".join(_words(html_to_text(html))))]
        db.execute_sql(
            f"INSERT INTO message_search (message_id, document) VALUES {values}"
            " ON CONFLICT (message_id) DO UPDATE SET document = EXCLUDED.document",
            params,
        )


def unindex_messages(db: Any, message_ids: Any) -> None:
    """Remove messages from the index (the foreign key's cascade does it too on delete)."""
    ids = list(message_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        db.execute_sql(f"DELETE FROM message_search WHERE message_id IN ({','.join(['%s'] * len(chunk))})", chunk)


def indexed_message_ids(db: Any) -> set[Any]:
    """The ids of the messages in the search index (checks and tests)."""
    return {row[0] for row in db.execute_sql("SELECT message_id FROM message_search")}


def indexed_by(index: str) -> str:
    """Nothing: PostgreSQL's planner takes no hints, and reads an index alone when it covers the
    query (see the SQLite backend's)."""
    return ""


def ts_query(terms: list[str], prefixes: bool = False) -> Any:
    """A to_tsquery expression: every term must appear, a word by its stem (or, with `prefixes`,
    as the start of a word's stem, as FTS5's "word"*), a quoted phrase as its words in order.
    Built only from words (letters and digits, each quoted) so that no user input can be a
    syntax error. None when no term has a word in it."""
    parts = []
    for term in terms:
        words = _words(term)
        if not words:
            continue
        phrase = " <-> ".join(f"'{word}'" for word in words)
        parts.append(f"({phrase}:*)" if prefixes and " " not in term else f"({phrase})")
    return " & ".join(parts) or None


def search_condition(message_id_column: peewee.AutoField, terms: list[str], prefixes: bool = False) -> Any:
    """A peewee expression true for messages matching every search term (ts_query)."""
    from peewee import SQL

    query = ts_query(terms, prefixes)
    if query is None:
        return SQL("1 = 0")
    return message_id_column.in_(SQL(
        f"(SELECT message_id FROM message_search WHERE document @@ to_tsquery('{SEARCH_CONFIG}', %s))", (query,)))


# --- an offline load (import-zulip) --------------------------------------------------------------

@contextmanager
def bulk_load(db: Any) -> Iterator[None]:
    """Settings for loading a new database offline: none are needed beyond what the load's one
    transaction and COPY (copy_rows) give."""
    yield


def secondary_indexes(db: Any, table: str) -> list[tuple[str, str]]:
    """(name, CREATE statement) of the table's indexes that back no key or constraint."""
    return [(name, sql) for name, sql in db.execute_sql(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = %s"
        " AND indexname NOT IN (SELECT conname FROM pg_constraint) ORDER BY indexname", (table,)).fetchall()]


def copy_rows(db: Any, table: str, columns: Any, values: Sequence[Any]) -> None:
    """Rows of integers (None for NULL), given flattened (the first row's values, then the
    second's, ...), into a table with COPY: for a load of millions of per-user rows, several
    times the rate of multi-row INSERTs, which PostgreSQL parses and plans statement by
    statement."""
    import io

    if not values:
        return
    width = len(columns)
    texts = ["\\N" if value is None else str(int(value)) for value in values]
    text = "\n".join("\t".join(texts[start:start + width]) for start in range(0, len(texts), width))
    db.cursor().copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN", io.StringIO(text + "\n"))
