"""`chat-appliance migrate-database`: copy a whole instance from SQLite into an empty PostgreSQL
database, then point the instance at it.

The source is opened read-only and never changed, and read in one transaction: every table comes
from the same snapshot. The command holds the source database's lock (db/ownership.py) while it
copies, so it refuses while a server serves that file, whichever folder names it. Everything in the target happens in one
transaction (PostgreSQL's DDL is transactional): the schema by the same migrations as always,
every table's rows with their ids, id sequences advanced past the largest id ever given out, the
search index built from the messages; then row counts are compared table by table. Any failure
rolls the whole target back to empty. Only after the commit does the instance's config.json get
the new DATABASE_URL. Uploaded files stay where they are, in the instance folder.
"""

import importlib
import json
import pkgutil
import sys
from pathlib import Path

from chat_appliance import models
from chat_appliance.db import backends
from chat_appliance.db.connection import SchemaMigration
from chat_appliance import migrations

BATCH = 1000


class TransferError(Exception):
    """A refusal or failure with a message for the person running the command."""


class Progress:
    """A one-line progress bar on a terminal (a line per table otherwise)."""

    def __init__(self, total, stream=sys.stderr, width=30):
        self.total, self.done, self.stream, self.width = max(total, 1), 0, stream, width
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def advance(self, count, label):
        self.done += count
        if self.tty:
            filled = self.width * self.done // self.total
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r  [{bar}] {100 * self.done // self.total:3d}%  {label:<40.40}")
            self.stream.flush()

    def line(self, text):
        if self.tty:
            self.stream.write("\r" + " " * (self.width + 50) + "\r")
        self.stream.write(f"  {text}\n")
        self.stream.flush()


def live_models():
    """Every model class in chat_appliance/models/, each of its modules imported: a model that
    models/__init__.py does not export has a table all the same."""
    for info in pkgutil.iter_modules(models.__path__):
        importlib.import_module(f"{models.__name__}.{info.name}")
    found, pending = set(), [models.BaseModel]
    while pending:
        for subclass in pending.pop().__subclasses__():
            found.add(subclass)
            pending.append(subclass)
    return sorted(found, key=lambda model: model._meta.table_name)


def tables_in_order(source, source_backend):
    """The source's tables to copy, parents before children (foreign keys hold at every insert):
    the live models' order, then any other table, leaving out the schema bookkeeping and the
    search index (the target builds its own)."""
    from peewee import sort_models

    ordered = [model._meta.table_name for model in sort_models(live_models())]
    present = [t for t in source_backend.source_tables(source) if t != "schema_migration"]
    return [t for t in ordered if t in present] + [t for t in present if t not in ordered]


def migrate_database(source_url, target_url, out=sys.stderr):
    """Copy the database at source_url (SQLite) into the empty one at target_url (PostgreSQL).
    Returns {table: rows copied}. Raises TransferError with a clear message on refusal."""
    source_backend, target_backend = backends.backend_for(source_url), backends.backend_for(target_url)
    if source_backend.NAME != "sqlite" or target_backend.NAME != "postgres":
        raise TransferError("migrate-database copies a SQLite instance into PostgreSQL: the instance must be on "
                            "SQLite and --to must be a postgresql:// URL.")
    source = source_backend.open_read_only(source_url)
    # One read transaction around every read: each table comes from the same snapshot, so rows
    # written meanwhile (by anything the lock does not stop) cannot leave a child without its parent.
    source.isolation_level = None
    source.execute("BEGIN")
    target = target_backend.open_database(target_url, pool_size=2)
    try:
        versions = {row[0] for row in source.execute("SELECT version FROM schema_migration")}
        expected = {version for version, _doc, _step in migrations.MIGRATIONS}
        if versions != expected:
            raise TransferError(
                f"The instance's database lacks migrations {sorted(expected - versions)}: start the instance once "
                "with this version (chat-appliance serve) before moving it. Nothing was changed.")
        with target.connection_context():
            existing = target_backend.existing_tables(target)
            if existing:
                raise TransferError(
                    f"The target database is not empty ({len(existing)} tables, e.g. {existing[0]!r}): "
                    "migrate-database copies into an empty database only. Nothing was changed.")
            tables = tables_in_order(source, source_backend)
            counts = {t: source.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
            progress = Progress(sum(counts.values()) + counts.get("message", 0), out)
            with target.atomic():
                _copy(source, target, source_backend, target_backend, tables, progress)
                _verify(target, target_backend, counts, progress)
            progress.line(f"Copied {sum(counts.values())} rows in {len(tables)} tables; row counts verified.")
        return counts
    finally:
        source.close()
        target.close_all()


def _copy(source, target, source_backend, target_backend, tables, progress):
    """Schema, rows, sequences and search index, inside the caller's transaction."""
    for _version, _doc, step in migrations.MIGRATIONS:
        step(target, target_backend)
    with target.bind_ctx([SchemaMigration]):
        target.create_tables([SchemaMigration])
    for version, applied_at in source.execute("SELECT version, applied_at FROM schema_migration"):
        p = target.param
        target.execute_sql(f"INSERT INTO schema_migration (version, applied_at) VALUES ({p}, {p})", (version, applied_at))
    for table in tables:
        columns = source_backend.source_columns(source, table)
        for rows in source_backend.read_rows(source, table, columns, BATCH):
            if table == "user_message":
                rows = _in_unread_index(columns, rows)
            target_backend.insert_rows(target, table, columns, rows)
            progress.advance(len(rows), table)
    target_backend.advance_sequences(target, source_backend.id_high_water_marks(source))
    for rows in source_backend.read_rows(source, "message", ["id", "topic", "rendered_content"], BATCH):
        target_backend.index_messages(target, rows, new=True)
        progress.advance(len(rows), "search index")


def _in_unread_index(columns, rows):
    """user_message rows with PENDING_UNREAD_INDEX cleared: PostgreSQL keeps no rows out of the
    unread index (models/messages.py), so each unread row must be in it there."""
    at = columns.index("flags")
    keep = ~models.messages.PENDING_UNREAD_INDEX
    return [row[:at] + (row[at] & keep,) + row[at + 1:] for row in rows]


def _verify(target, target_backend, counts, progress):
    """Every table holds as many rows as in the source, and every message is in the search index."""
    wrong = []
    for table, expected in counts.items():
        (got,) = target.execute_sql(f'SELECT COUNT(*) FROM "{table}"').fetchone()
        if got != expected:
            wrong.append(f"{table}: {expected} in the source, {got} copied")
    indexed = len(target_backend.indexed_message_ids(target))
    if indexed != counts.get("message", 0):
        wrong.append(f"search index: {indexed} entries for {counts.get('message', 0)} messages")
    if wrong:
        raise TransferError("Row counts differ, so nothing was kept in the target: " + "; ".join(wrong))


def point_instance_at(instance_path, database_url):
    """Set DATABASE_URL in the instance's config.json, keeping its other keys."""
    config_file = Path(instance_path) / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    config["DATABASE_URL"] = database_url
    config_file.write_text(json.dumps(config, indent=2) + "\n")
