"""Migrations: `migrate` applies whatever versions a database lacks, once each, and a
migration that rebuilds a table keeps its rows (tests/ops/test_migration_schema.py checks the
schema they make)."""

import sqlite3

import peewee
import pytest

from chat_appliance import models
from chat_appliance.db import runtime
from chat_appliance.db.backends import sqlite as sqlite_backend
from chat_appliance.db.connection import applied_versions, init_database, migrate
from chat_appliance.migrations import MIGRATIONS
from chat_appliance.models import database

from ..support import pg


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
        _url, db, backend = new_database("frozen")
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


def test_migration_111_keeps_rows_and_ids_and_adds_foreign_keys(tmp_path, monkeypatch):
    """Does migration 111 keep every channel email address and scheduled message (ids too), leave
    out rows whose channel or sender is gone and clear a creator who is gone, add the models'
    foreign keys, and go on giving ids from where they were (PostgreSQL's sequence not reset)?"""
    from chat_appliance.db import connection as db_module

    name = None
    if pg.ENABLED:
        name = pg.new_name("m111")
        url = pg.create(name)
    else:
        url = f"sqlite:///{tmp_path / 'm111.sqlite3'}"
    init_database(url, pool_size=2)
    try:
        monkeypatch.setattr(db_module, "MIGRATIONS", [m for m in MIGRATIONS if m[0] < 111])
        migrate()
        with database.connection_context():
            realm, (user, other), stream = insert_realm_users_and_channel()
            missing = 999
            for row in ((realm, stream, user, user, "t1"), (realm, missing, user, user, "t2"),
                        (realm, stream, missing, None, "t3"), (realm, stream, other, missing, "t4"),
                        (realm, missing, other, None, "t5")):
                database.execute_sql("INSERT INTO channel_email_address (realm_id, stream_id, sender_id, creator_id,"
                                     f" email_token, date_created) VALUES ({', '.join([database.param] * 5)}, 0)", row)
            database.execute_sql("DELETE FROM channel_email_address WHERE email_token = 't5'")  # the newest
            for sender in (user, missing):
                database.execute_sql(
                    "INSERT INTO scheduled_message (realm_id, sender_id, delivery_type, type, \"to\", topic, content,"
                    " rendered_content, scheduled_timestamp, sending_client, delivered, failed, date_created)"
                    f" VALUES ({realm}, {sender}, 1, 'stream', '{stream}', 't', 'c', '<p>c</p>', 5, '', FALSE,"
                    " FALSE, 0)")
        monkeypatch.undo()
        assert migrate() == [v for v, _doc, _step in MIGRATIONS if v >= 111]
        with database.connection_context():
            assert database.execute_sql("SELECT id, stream_id, sender_id, creator_id, email_token"
                                        " FROM channel_email_address ORDER BY id").fetchall() == [
                (1, stream, user, user, "t1"), (4, stream, other, None, "t4")]
            assert database.execute_sql("SELECT id, sender_id FROM scheduled_message").fetchall() == [(1, user)]
            assert ("stream_id", "stream", "id") in {(f.column, f.dest_table, f.dest_column)
                                                     for f in database.get_foreign_keys("channel_email_address")}
            assert ("sender_id", "user_profile", "id") in {(f.column, f.dest_table, f.dest_column)
                                                          for f in database.get_foreign_keys("scheduled_message")}
            database.execute_sql("DELETE FROM channel_email_address WHERE email_token = 't1'")
            database.execute_sql("INSERT INTO channel_email_address (realm_id, stream_id, sender_id, email_token,"
                                 f" date_created) VALUES ({realm}, {stream}, {user}, 't6', 0)")
            (new_id,) = database.execute_sql("SELECT id FROM channel_email_address WHERE email_token = 't6'").fetchone()
            # PostgreSQL's sequence had given out 5 (deleted since); SQLite gives the largest id + 1,
            # as it did before the migration.
            assert new_id == (6 if pg.ENABLED else 5)
    finally:
        if hasattr(database.obj, "close_all"):
            database.close_all()
        if name:
            pg.drop(name)


def insert_realm_users_and_channel():
    """A realm, two users and a channel, by SQL as version 110's schema has them: their ids."""
    database.execute_sql("INSERT INTO realm (name, host, url, date_created, description,"
                         " message_edit_history_visibility_policy, allow_message_editing,"
                         " message_content_edit_limit_seconds, settings)"
                         " VALUES ('R', 'h', 'u', 0, '', 1, TRUE, 0, '{}')")
    (realm,) = database.execute_sql("SELECT MAX(id) FROM realm").fetchone()
    users = []
    for email in ("a@example.com", "b@example.com"):
        database.execute_sql(
            "INSERT INTO user_profile (realm_id, email, delivery_email, full_name, role, is_active, is_bot,"
            " is_system_bot, api_key, date_joined, timezone, email_address_visibility, avatar_version, settings)"
            f" VALUES ({realm}, '{email}', '{email}', 'A', 400, TRUE, FALSE, FALSE, '{email}', 0, '', 1, 1, '{{}}')")
        users.append(database.execute_sql("SELECT MAX(id) FROM user_profile").fetchone()[0])
    database.execute_sql("INSERT INTO recipient (type) VALUES (2)")
    (recipient,) = database.execute_sql("SELECT MAX(id) FROM recipient").fetchone()
    database.execute_sql("INSERT INTO stream (realm_id, name, name_key, description, rendered_description,"
                         " invite_only, history_public_to_subscribers, is_web_public, date_created, recipient_id,"
                         f" deactivated, settings) VALUES ({realm}, 'c', 'c', '', '', FALSE, TRUE, FALSE, 0,"
                         f" {recipient}, FALSE, '{{}}')")
    (stream,) = database.execute_sql("SELECT MAX(id) FROM stream").fetchone()
    return realm, users, stream


def test_an_up_to_date_database_opens_without_the_writer_lock(tmp_path, monkeypatch):
    """Does a server starting on an up-to-date database go on while another process holds the
    writer lock (a long import, another server's write), rather than wait for it to check every
    foreign key of the database (45 ms per start on an instance with 465,000 message rows)?"""
    if pg.ENABLED:
        pytest.skip("SQLite's writer lock; PostgreSQL's migrations take an advisory lock the same way")
    path = tmp_path / "busy.sqlite3"
    init_database(f"sqlite:///{path}")
    migrate()
    runtime.current().close()
    monkeypatch.setitem(sqlite_backend.PRAGMAS, "busy_timeout", 200)  # a wait fails fast instead of hanging
    opened = init_database(f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert migrate() == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        opened.close()


def test_a_new_sqlite_database_has_small_pages_and_an_old_one_keeps_its_own(tmp_path):
    """Is a new database file made with 1 KiB pages (a send's COMMIT copies one page of each
    per-user index per recipient into the WAL), while a file made with SQLite's default 4 KiB
    keeps them and opens as before?"""
    if pg.ENABLED:
        pytest.skip("SQLite's page size")
    new_path, old_path = tmp_path / "new.sqlite3", tmp_path / "old.sqlite3"
    old = sqlite3.connect(old_path)
    old.execute("PRAGMA journal_mode=wal")
    old.execute("CREATE TABLE scratch (x INTEGER)")
    old.close()
    for path, size in ((new_path, sqlite_backend.PAGE_SIZE), (old_path, 4096)):
        opened = init_database(f"sqlite:///{path}")
        try:
            if path == new_path:
                migrate()
            assert sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0] == size
        finally:
            opened.close()
    assert sqlite_backend.PAGE_SIZE == 1024
