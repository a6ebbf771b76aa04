"""Migrations: they make the schema the live models describe, on the engine of this run, and
`migrate` applies whatever versions a database lacks."""

import peewee
import pytest

from chat_appliance import models

from chat_appliance.db import backends
from chat_appliance.db.connection import applied_versions, init_database, migrate
from chat_appliance.migrations import MIGRATIONS
from chat_appliance.models import database

from . import pg

# Indexes the migrations make with SQL, which no live model declares: the partial indexes on
# personal flags and the `date` anchor's index (migrations 1 and 2).
SQL_ONLY_INDEXES = {"user_message_unread", "user_message_starred", "user_message_mentioned", "message_date_sent"}

LIVE_MODELS = [getattr(models, name) for name in models.__all__
               if isinstance(getattr(models, name), type) and issubclass(getattr(models, name), models.BaseModel)
               and getattr(models, name) is not models.BaseModel]


@pytest.fixture
def new_database(tmp_path):
    """A function making empty databases of this run's engine: (peewee database, backend)."""
    made = []

    def make(label):
        if pg.ENABLED:
            name = pg.new_name(label)
            url = pg.create(name)
            made.append(name)
        else:
            url = f"sqlite:///{tmp_path / (label + '.sqlite3')}"
        backend = backends.backend_for(url)
        db = backend.open_database(url, pool_size=2)
        return db, backend

    yield make
    for name in made:
        pg.drop(name)


def describe(db, tables):
    """Columns (name, type, nullability, primary key), indexes (columns, uniqueness) and foreign
    keys of the given tables, as the engine reports them."""
    result = {}
    for table in sorted(tables):
        columns = sorted((c.name, c.data_type.lower(), c.null, c.primary_key) for c in db.get_columns(table))
        # By columns and uniqueness: a name is peewee's choice (a frozen class's name can show in it).
        indexes = sorted((tuple(i.columns), i.unique) for i in db.get_indexes(table)
                         if i.name not in SQL_ONLY_INDEXES)
        foreign_keys = sorted((f.column, f.dest_table, f.dest_column) for f in db.get_foreign_keys(table))
        result[table] = {"columns": columns, "indexes": indexes, "foreign_keys": foreign_keys}
    return result


def test_migrations_make_the_live_models_schema(new_database):
    """Does a database built by the migrations have every live model's table with the same
    columns, types, nullability, indexes and foreign keys as one built from the models?"""
    migrated, backend = new_database("migrated")
    with migrated.connection_context():
        for _version, _doc, step in MIGRATIONS:
            with backend.migration_transaction(migrated):
                step(migrated, backend)
    live, _ = new_database("live")
    with live.connection_context(), live.bind_ctx(LIVE_MODELS):
        live.create_tables(LIVE_MODELS)
    tables = {model._meta.table_name for model in LIVE_MODELS}
    with migrated.connection_context(), live.connection_context():
        assert tables <= set(migrated.get_tables())
        got, expected = describe(migrated, tables), describe(live, tables)
    for table in sorted(tables):
        assert got[table] == expected[table], table


def test_migrate_applies_versions_missing_below_the_newest(tmp_path, database_url):
    """Does `migrate` apply a version the database lacks even when newer ones are applied
    (helpers' migrations land out of order), and nothing else?"""
    init_database(database_url or f"sqlite:///{tmp_path / 'chat.sqlite3'}")
    migrate()
    versions = [version for version, _doc, _step in MIGRATIONS]
    assert applied_versions_now() == set(versions)
    missing = 20  # drafts and saved snippets, below the newest version
    assert missing < max(versions)
    with database.connection_context():
        database.execute_sql("DROP TABLE draft")
        database.execute_sql("DROP TABLE saved_snippet")
        database.execute_sql(f"DELETE FROM schema_migration WHERE version = {missing}")
    assert migrate() == [missing]
    assert applied_versions_now() == set(versions)
    with database.connection_context():
        assert {"draft", "saved_snippet"} <= set(database.get_tables())
    assert migrate() == []


def applied_versions_now():
    with database.connection_context():
        return applied_versions()


def test_frozen_models_ignore_live_model_changes(new_database):
    """Does a migration make the schema of its own version even when a live model has moved on
    (a field added today must not appear in a table an old migration creates)?"""
    field = peewee.IntegerField(null=True)
    models.Draft._meta.add_field("added_later", field)
    try:
        db, backend = new_database("frozen")
        with db.connection_context():
            for _version, _doc, step in MIGRATIONS:
                with backend.migration_transaction(db):
                    step(db, backend)
            assert "added_later" not in {c.name for c in db.get_columns("draft")}
    finally:
        models.Draft._meta.remove_field("added_later")


def test_two_processes_migrating_at_once_apply_each_version_once(tmp_path):
    """When two servers start on the same new database at the same moment, does each migration
    run exactly once, with neither failing?"""
    from concurrent.futures import ThreadPoolExecutor

    name = None
    if pg.ENABLED:
        name = pg.new_name("race")
        url = pg.create(name)
    else:
        url = f"sqlite:///{tmp_path / 'race.sqlite3'}"
    init_database(url, pool_size=4)
    try:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _n: migrate(), range(2)))
        versions = [version for version, _doc, _step in MIGRATIONS]
        assert sorted(results[0] + results[1]) == sorted(versions)
        assert applied_versions_now() == set(versions)
    finally:
        if hasattr(database.obj, "close_all"):
            database.close_all()
        if name:
            pg.drop(name)


def test_migration_83_keeps_invitations_and_adds_their_foreign_keys(tmp_path, monkeypatch):
    """Does migration 83 keep every invitation (ids included) while giving the table the model's
    foreign keys, and do new invitations then get fresh ids?"""
    from chat_appliance import migrations
    from chat_appliance.db import connection as db_module

    name = None
    if pg.ENABLED:
        name = pg.new_name("inv")
        url = pg.create(name)
    else:
        url = f"sqlite:///{tmp_path / 'inv.sqlite3'}"
    init_database(url, pool_size=2)
    try:
        monkeypatch.setattr(db_module, "MIGRATIONS", [m for m in migrations.MIGRATIONS if m[0] < 83])
        migrate()
        with database.connection_context():
            database.execute_sql("INSERT INTO realm (name, host, url, date_created, description,"
                                 " message_edit_history_visibility_policy, allow_message_editing,"
                                 " message_content_edit_limit_seconds, settings)"
                                 " VALUES ('R', 'h', 'u', 0, '', 1, TRUE, 0, '{}')")
            realm_id = database.execute_sql("SELECT MAX(id) FROM realm").fetchone()[0]
            database.execute_sql(
                "INSERT INTO invitation (id, realm_id, is_multiuse, key, invited_as, stream_ids, group_ids,"
                " include_realm_default_subscriptions, notify_referrer_on_join, invited, status)"
                f" VALUES (7, {realm_id}, FALSE, 'k7', 400, '[]', '[]', FALSE, TRUE, 0, 0)")
        monkeypatch.undo()
        assert 83 in migrate()
        with database.connection_context():
            assert database.execute_sql("SELECT id, key FROM invitation").fetchall() == [(7, "k7")]
            assert ("realm_id", "realm", "id") in {(f.column, f.dest_table, f.dest_column)
                                                   for f in database.get_foreign_keys("invitation")}
            database.execute_sql(
                "INSERT INTO invitation (realm_id, is_multiuse, key, invited_as, stream_ids, group_ids,"
                " include_realm_default_subscriptions, notify_referrer_on_join, invited, status)"
                f" VALUES ({realm_id}, FALSE, 'k8', 400, '[]', '[]', FALSE, TRUE, 0, 0)")
            assert database.execute_sql("SELECT MAX(id) FROM invitation").fetchone()[0] > 7
    finally:
        if hasattr(database.obj, "close_all"):
            database.close_all()
        if name:
            pg.drop(name)
