"""The migrated schema is the models' schema, on the engine of this run (SQLite, or PostgreSQL
when CHAT_APPLIANCE_DATABASE_URL is a postgresql:// URL); and a database made by older code, or
left at any earlier version, migrates forward to exactly the schema a new database gets.

What "the same schema" compares (tests/support/schema_description.py reads it from the engine's catalog):
- the tables: every model's table exists, and besides them only the search index's tables;
- per table: each column's name, type as the engine states it (with its length), nullability
  and default; the primary key's columns; every index's name, columns in order, uniqueness and
  partial-index condition (unique constraints are unique indexes here: peewee makes them so);
  every foreign key's column, the table and column it refers to and its ON DELETE action.
- Allowed differences, each one stated here: a column added by a later migration (ALTER TABLE
  ADD COLUMN) carries a database default where the model has a Python default, which SQLite
  requires for a NOT NULL column added to a table; it must be that same value. And indexes made
  by SQL that a model cannot declare (SQL_ONLY_INDEXES) must exist as listed.
- Not compared: column order (an added column comes last), the names the engine gives foreign
  key constraints, SQLite's AUTOINCREMENT on message (migration 50; its effect is tested in
  test_message_ids.py) and the search index's own internals.
The upgrade tests compare everything above for every table, by exact equality.
"""

import re
from pathlib import Path

import pytest

from chat_appliance.db import connection as db_module
from chat_appliance.db.connection import init_database, migrate
from chat_appliance.migrations import MIGRATIONS, discover
from chat_appliance.migrations import versions as migration_versions
from chat_appliance.models import database
from chat_appliance.ops.migrate_database import live_models

from ..support import pg
from ..support.schema_description import all_tables, describe

# Indexes that migrations make with SQL (no model can state a partial index or this one):
# {table: {name: (columns, unique, condition)}}, conditions as schema_description.predicate gives them.
SQL_ONLY_INDEXES = {
    "user_message": {
        "user_message_by_user": (("user_profile_id", "message_id"), False, "flags&2048=0"),
        "user_message_unread": (("user_profile_id", "message_id", "flags"), False, "flags&2049=0"),
        "user_message_starred": (("user_profile_id", "message_id"), False, "flags&2!=0"),
        "user_message_mentioned": (("user_profile_id", "message_id"), False, "flags&120!=0"),
        "user_message_private": (("user_profile_id", "message_id"), False, "flags&512!=0"),
    },
    "message": {"message_date_sent": (("date_sent",), False, None)},
}
# The full-text search index's tables (backends/: FTS5's on SQLite, a tsvector table on PostgreSQL).
SEARCH_TABLES = {"message_search"}
OLD_SQLITE_SCHEMA = Path(__file__).resolve().parents[1] / "support" / "data" / "schema_0110.sqlite.sql"


def apply_all(db, backend):
    with db.connection_context():
        for _version, _doc, step in MIGRATIONS:
            with backend.migration_transaction(db):
                step(db, backend)


def literal(value, backend):
    """A Python default as the engine prints it as a column default."""
    if isinstance(value, bool):
        return ("true" if value else "false") if backend.NAME == "postgres" else str(int(value))
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def differences(got, expected, fields, backend):
    """What differs between the migrated (`got`) and the models' (`expected`) descriptions of one
    table, after the allowed differences; `fields` maps column names to the model's fields."""
    found = []
    for name in sorted(set(got["columns"]) | set(expected["columns"])):
        have, want = got["columns"].get(name), expected["columns"].get(name)
        if have and want and have != want and have[:2] == want[:2] and want[2] is None:
            field = fields[name]
            if not callable(field.default) and field.default is not None \
                    and have[2] == literal(field.default, backend):
                continue  # an added column's database default: the model's own default value
        if have != want:
            found.append(f"column {name}: migrations {have}, models {want}")
    for key in ("primary_key", "foreign_keys"):
        if got[key] != expected[key]:
            found.append(f"{key}: migrations {got[key]}, models {expected[key]}")
    for name in sorted(set(got["indexes"]) | set(expected["indexes"])):
        have, want = got["indexes"].get(name), expected["indexes"].get(name)
        if have != want:
            found.append(f"index {name}: migrations {have}, models {want}")
    return found


def test_migrations_make_the_models_schema(new_database):
    """Does a database built by the migrations have exactly the tables, columns (type,
    nullability, default), primary keys, indexes (name, columns, uniqueness, condition) and
    foreign keys (with their ON DELETE) of one built from every model, besides the differences
    the module docstring allows?"""
    _url, migrated, backend = new_database("migrated")
    apply_all(migrated, backend)
    _url, live, _ = new_database("models")
    live_classes = live_models()
    with live.connection_context(), live.bind_ctx(live_classes):
        live.create_tables(live_classes)
    tables = {model._meta.table_name: model for model in live_classes}
    with migrated.connection_context(), live.connection_context():
        assert set(all_tables(migrated, backend.NAME)) == set(tables) | SEARCH_TABLES
        got, expected = describe(migrated, backend.NAME, tables), describe(live, backend.NAME, tables)
    for table, indexes in SQL_ONLY_INDEXES.items():
        for name, definition in indexes.items():
            assert got[table]["indexes"].pop(name) == definition, name
    problems = {table: found for table, model in tables.items()
                if (found := differences(got[table], expected[table], model._meta.columns, backend))}
    assert problems == {}


def test_the_comparison_sees_a_missing_foreign_key(new_database):
    """Would the schema comparison report a column that is a plain integer in the migrations but
    a foreign key in the model (the difference migrations 83 and 111 repaired)?"""
    _url, migrated, backend = new_database("before111")
    with migrated.connection_context():
        for _version, _doc, step in [m for m in MIGRATIONS if m[0] < 111]:
            with backend.migration_transaction(migrated):
                step(migrated, backend)
        got = describe(migrated, backend.NAME, ["scheduled_message"])["scheduled_message"]
    _url, live, _ = new_database("models")
    live_classes = live_models()
    with live.connection_context(), live.bind_ctx(live_classes):
        live.create_tables(live_classes)
        expected = describe(live, backend.NAME, ["scheduled_message"])["scheduled_message"]
    model = next(m for m in live_classes if m._meta.table_name == "scheduled_message")
    found = differences(got, expected, model._meta.columns, backend)
    assert any(line.startswith("foreign_keys:") for line in found)


def migrated_up_to(url, below, monkeypatch):
    """Open `url` as the database in use and apply, through `migrate`, the migrations numbered
    below `below` only: a database as a release of that time left it."""
    init_database(url, pool_size=2)
    monkeypatch.setattr(db_module, "MIGRATIONS", [m for m in MIGRATIONS if m[0] < below])
    migrate()
    monkeypatch.setattr(db_module, "MIGRATIONS", MIGRATIONS)


def schema_now():
    with database.connection_context():
        return describe(database.obj, db_module.backend().NAME)


@pytest.fixture(scope="module")
def fresh_schema(tmp_path_factory):
    """The whole schema of a new database migrated to the newest version (made once)."""
    name = None
    if pg.ENABLED:
        name = pg.new_name("fresh")
        url = pg.create(name)
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('fresh') / 'fresh.sqlite3'}"
    init_database(url, pool_size=2)
    try:
        migrate()
        return schema_now()
    finally:
        if hasattr(database.obj, "close_all"):
            database.close_all()
        if name:
            pg.drop(name)


@pytest.mark.parametrize("version", [version for version, _doc, _step in MIGRATIONS[1:]])
def test_a_database_left_at_an_earlier_version_migrates_to_the_same_schema(version, new_database, fresh_schema,
                                                                          monkeypatch):
    """Does a database that a release left below `version` get, from `migrate`, exactly the
    migrations it lacks and then exactly the schema of a new database?"""
    url, _db, _backend = new_database(f"at{version}")
    migrated_up_to(url, version, monkeypatch)
    assert migrate() == [v for v, _doc, _step in MIGRATIONS if v >= version]
    assert schema_now() == fresh_schema


@pytest.mark.skipif(pg.ENABLED, reason="the recorded database is a SQLite one")
def test_a_database_made_before_migrations_were_a_package_migrates_forward(tmp_path, fresh_schema):
    """Does a database exactly as the code before the migrations package left it (recorded in
    tests/support/data) get only the newer migrations, and then the schema of a new database?"""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    connection = sqlite3.connect(path)
    connection.executescript(OLD_SQLITE_SCHEMA.read_text())
    connection.close()
    init_database(f"sqlite:///{path}")
    assert migrate() == [v for v, _doc, _step in MIGRATIONS if v > 110]
    assert schema_now() == fresh_schema


@pytest.mark.skipif(pg.ENABLED, reason="the recorded database is a SQLite one")
def test_migrations_up_to_110_make_the_recorded_old_schema_statement_for_statement(tmp_path, monkeypatch):
    """Do the migration modules up to 110 make, statement for statement, the SQLite schema that
    the single-module migrations made (so databases made by either are the same)?"""
    url = f"sqlite:///{tmp_path / 'new.sqlite3'}"
    migrated_up_to(url, 111, monkeypatch)
    shadow = re.compile(r"^message_search_(data|idx|content|docsize|config)$")
    with database.connection_context():
        made = sorted(sql.strip() + ";" for name, sql in database.execute_sql(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
            if not shadow.match(name) and name != "sqlite_sequence")
    recorded = sorted(line for line in OLD_SQLITE_SCHEMA.read_text().splitlines() if line.startswith("CREATE"))
    assert made == recorded


def test_migration_modules_are_found_in_order_with_unique_numbers(tmp_path):
    """Does discovery list every NNNN_name.py module by number, and refuse a number used twice
    and a module that is not named as a migration?"""
    versions = [version for version, _doc, _step in MIGRATIONS]
    assert versions == sorted(set(versions)) and versions[0] == 1
    assert all(isinstance(doc, str) and doc and callable(step) for _v, doc, step in MIGRATIONS)
    package = tmp_path / "fake_migrations"
    package.mkdir()
    body = '"""Does nothing."""\nDESCRIPTION = "nothing"\n\n\ndef apply(database, backend):\n    pass\n'
    (package / "0002_second.py").write_text(body)
    (package / "0001_first.py").write_text(body)
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        assert [(v, d) for v, d, _s in discover("fake_migrations", [str(package)])] == [(1, "nothing"), (2, "nothing")]
        # versions(), which a start-up on an up-to-date database uses instead, reads names only.
        assert migration_versions("fake_migrations", [str(package)]) == {1, 2}
        (package / "0002_again.py").write_text(body)
        with pytest.raises(ImportError, match="two migrations numbered 0002"):
            discover("fake_migrations", [str(package)])
        with pytest.raises(ImportError, match="two migrations numbered 0002"):
            migration_versions("fake_migrations", [str(package)])
        (package / "0002_again.py").unlink()
        (package / "second_thoughts.py").write_text(body)
        with pytest.raises(ImportError, match="not a migration"):
            discover("fake_migrations", [str(package)])
        with pytest.raises(ImportError, match="not a migration"):
            migration_versions("fake_migrations", [str(package)])
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("fake_migrations")]:
            del sys.modules[name]


def test_migrations_import_only_peewee_and_the_frozen_helper():
    """Does every migration module import nothing of the application but migrations/frozen.py (a
    migration that read the live models would change with them)?"""
    import ast

    from chat_appliance import migrations

    folder = Path(migrations.__file__).parent
    imported = {}
    for path in sorted(folder.glob("[0-9][0-9][0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            imported.setdefault(path.name, set()).update(
                name for name in names if name.startswith("chat_appliance") and name != "chat_appliance.migrations.frozen")
    assert {name: found for name, found in imported.items() if found} == {}
    assert len(list(folder.glob("[0-9][0-9][0-9][0-9]_*.py"))) == len(MIGRATIONS)
