"""The database handle: late initialisation, per-request connections, transactions, migrations.

The models are bound to `models.database`, a proxy to the current runtime's database
(runtime.py): `init_database` opens one once the configuration is known (scout and peewee's
FlaskDB initialise late too). Engine-specific SQL lives in `backends/`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import logging
import sys
import threading
from contextlib import contextmanager

from peewee import IntegerField, Model

from chat_appliance.db import backends
from chat_appliance.db.admission import turns

from chat_appliance.db import runtime
from chat_appliance import migrations
from chat_appliance.models import database, now

if TYPE_CHECKING:
    from chat_appliance.db.runtime import Runtime

log = logging.getLogger(__name__)


def init_database(database_url: str, pool_size: int = 20, pool_timeout: int = 30, *,
                  inline_image_preview: bool = True, offline: bool = False) -> Runtime:
    """Open the configured database in a new Runtime, installed as the one in use outside
    requests; returns the Runtime (create_app keeps it, and makes it current per request). The
    pool options size the PostgreSQL connection pool (SQLite ignores them); the runtime renders
    messages with INLINE_IMAGE_PREVIEW `inline_image_preview`. `offline`: a new database that
    this process fills before anyone reads it (backends.sqlite.open_database)."""
    backend = backends.backend_for(database_url)
    opened = runtime.Runtime(backend.open_database(database_url, pool_size=pool_size, pool_timeout=pool_timeout,
                                                   offline=offline),
                             backend, inline_image_preview=inline_image_preview)
    runtime.install(opened)
    return opened


def backend() -> Any:
    """The module of the engine in use (backends.sqlite or backends.postgres)."""
    return runtime.current().backend


# Callbacks waiting for the commit of this thread's outermost write_transaction (None outside one).
_transaction_local = threading.local()


@contextmanager
def write_transaction(deferrable: bool = False) -> Iterator[None]:
    """A transaction that will write: atomic, and on SQLite taking the write lock up front.

    Nested, it is a savepoint. Callbacks given to `on_commit` inside it run after the outermost
    transaction commits, in order; those of a transaction (or savepoint) that rolls back are
    dropped. On SQLite the callbacks of transactions committed together run in the thread that
    commits them, in commit order (backends/group_commit.py)."""
    pending: Any = getattr(_transaction_local, "pending", None)
    outermost = pending is None
    if outermost:
        pending = _transaction_local.pending = []
    mark = len(pending)

    def run_pending():
        saved = getattr(_transaction_local, "pending", None)
        _transaction_local.pending = None  # a callback publishing more delivers at once
        try:
            for callback in pending:
                callback()
        finally:
            _transaction_local.pending = saved

    try:
        with backend().write_transaction(database, after_commit=run_pending if outermost else None,
                                         deferrable=deferrable):
            yield
    except BaseException:
        del pending[mark:]
        raise
    finally:
        if outermost:
            _transaction_local.pending = None


def on_commit(callback: Callable[..., Any]) -> None:
    """Run `callback` once the current write_transaction commits (never, if it rolls back), or
    at once outside a transaction: how events go out only after the change they announce."""
    pending = getattr(_transaction_local, "pending", None)
    if pending is not None:
        pending.append(callback)
        return
    debt = turns.debt()
    if debt is not None:  # after a write whose COMMIT is deferred: after that COMMIT
        debt.add_callback(callback)
    else:
        callback()


# bulk_insert's largest statement: rows, and bound values (SQLite allows 32,766; PostgreSQL 65,535).
BULK_ROWS = 256
BULK_VALUES = 8192


def bulk_insert(table: str, columns: Any, rows: list[tuple[Any, ...]]) -> None:
    """INSERT many rows, several per statement. Each statement holds a power of two of rows, so
    that a few statement texts serve every count and stay in the driver's statement cache (a
    send to 50 recipients is 32 + 16 + 2 rows). One statement per row, as executemany runs it,
    cost a send a driver round trip per recipient, and on SQLite a release of the GIL per row,
    which at 16 concurrent senders handed the interpreter to another thread each time.
    Portable: uses the driver's placeholder."""
    insert_flat(table, columns, [value for values in rows for value in values])


def insert_flat(table: str, columns: Any, values: Sequence[Any]) -> None:
    """bulk_insert for rows given flattened: the first row's values, then the second's, ..."""
    width = len(columns)
    count = len(values) // width
    if not count:
        return
    row = "(" + ", ".join([database.param] * width) + ")"
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    most = max(1, min(BULK_ROWS, BULK_VALUES // width))
    cursor = database.cursor()
    start = 0
    while start < count:
        size = min(most, 1 << ((count - start).bit_length() - 1))
        cursor.execute(head + ", ".join([row] * size), values[start * width:(start + size) * width])
        start += size


def load_flat_rows(table: str, columns: Any, values: Sequence[int]) -> None:
    """insert_flat for a load of integer rows into a new database (import-zulip's per-user
    rows): COPY where the engine has it (PostgreSQL), multi-row INSERTs elsewhere."""
    copy = getattr(backend(), "copy_rows", None)
    if copy is None:
        insert_flat(table, columns, values)
    else:
        copy(database, table, columns, values)


def close_connection(_exc: Any = None) -> None:
    """Close this thread's connection, if open (request teardown; before a long poll)."""
    if not database.is_closed():
        database.close()


def check_database() -> None:
    """Run a trivial query on a connection of its own (GET /health); raises if the database
    does not answer."""
    with database.connection_context():
        database.execute_sql("SELECT 1").fetchone()


class SchemaMigration(Model):
    version = IntegerField(primary_key=True)
    applied_at = IntegerField(default=now)

    class Meta:
        database = database
        table_name = "schema_migration"


def applied_versions() -> set[int]:
    """The versions of the migrations applied to this database."""
    if not database.table_exists(SchemaMigration._meta.table_name):
        return set()
    return {row.version for row in SchemaMigration.select(SchemaMigration.version)}


# The migrations `migrate` applies: None for all of chat_appliance/migrations, imported only when
# one is missing. Tests set a shorter list to make a database as an older release left it.
MIGRATIONS: list[tuple[int, str, Any]] | None = None


def migrate(progress: bool = False) -> list[int]:
    """Apply every migration the database lacks, in version order, each in its own transaction.

    Every missing version, not only those above the newest applied: migrations written on
    branches at the same time land out of order (a database may hold 113 before a later-merged
    112 exists). Returns the versions applied. With progress=True, prints a line per step to
    stderr.
    """

    with database.connection_context():
        if not database.table_exists(SchemaMigration._meta.table_name):
            # A new database. The migration transaction checks every foreign key before it
            # commits, which on an instance with data took 45 ms per start: so only when there
            # is something to create.
            with backend().migration_transaction(database):  # under the writer lock: two may start at once
                database.create_tables([SchemaMigration], safe=True)
        done = applied_versions()
        known = MIGRATIONS
        if known is None:
            if migrations.versions() <= done:
                return []  # up to date: no migration module needs importing
            known = migrations.MIGRATIONS
        pending = [(v, doc, fn) for v, doc, fn in sorted(known, key=lambda entry: entry[0]) if v not in done]
        applied = []
        for index, (version, doc, step) in enumerate(pending, 1):
            if progress:
                print(f"  [{index}/{len(pending)}] migration {version:04d}: {doc}", file=sys.stderr)
            with backend().migration_transaction(database):
                # Another process starting at the same time may have applied it meanwhile: the
                # migration transaction holds the writer lock, so this check is final.
                if SchemaMigration.get_or_none(SchemaMigration.version == version) is not None:
                    continue
                step(database, backend())
                SchemaMigration.create(version=version)
            applied.append(version)
            log.info("applied migration %04d: %s", version, doc)
        return applied
