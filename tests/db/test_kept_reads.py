"""Reads kept while the database is unchanged (lib/snapshots.py): on SQLite, the account a
Basic request authenticates as, and what GET /users/me adds to it, are read once and served
again until anything is committed to the database, by this process or any other. Every change a
client can make, or an admin command or another program can, must show at the next request."""

import sqlite3
import subprocess
import sys

import pytest

from chat_appliance.db import runtime
from chat_appliance.db.connection import write_transaction
from chat_appliance.lib.snapshots import snapshot_versions
from chat_appliance.models import database

from ..support import pg
from ..support.helpers import err, ok, send

sqlite_only = pytest.mark.skipif(pg.ENABLED, reason="PostgreSQL gives no cheap data version: nothing is kept")


def database_path():
    return database.obj.database


def me(client):
    """GET /users/me twice, so that the account and its additions are kept (the first finds the
    account by email, the second by the id the first noted); the second answer."""
    ok(client.get("users/me"))
    return ok(client.get("users/me"))


@sqlite_only
def test_a_repeated_users_me_runs_no_statement(org, statements):
    """Is the second GET /users/me of an unchanged database answered without a statement on the
    app's connections (only the data version is read, on the idle keeper), and equal to the first?"""
    client = org.client(org.hamlet)
    first = me(client)
    statements.clear()
    second = ok(client.get("users/me"))
    assert statements == []
    assert second == first
    assert first["full_name"] == "King Hamlet" and first["profile_data"] == {}


def test_a_change_by_another_process_shows_at_once(org, tmp_path):
    """After a program outside the server renames Hamlet in the database file (as an admin command
    or a script could), does the next GET /users/me show the new name?"""
    client = org.client(org.hamlet)
    assert me(client)["full_name"] == "King Hamlet"
    if pg.ENABLED:
        with write_transaction():
            database.execute_sql("UPDATE user_profile SET full_name = %s WHERE id = %s", ("Prince Hamlet", org.hamlet.id))
    else:
        script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
                  " c.execute('UPDATE user_profile SET full_name = ? WHERE id = ?', ('Prince Hamlet', int(sys.argv[2])));"
                  " c.commit()")
        subprocess.run([sys.executable, "-c", script, database_path(), str(org.hamlet.id)], check=True, timeout=60)
    assert ok(client.get("users/me"))["full_name"] == "Prince Hamlet"


def test_a_new_message_moves_max_message_id(org):
    """After Othello sends to a channel Hamlet is in, does Hamlet's next GET /users/me give that
    message's id as max_message_id?"""
    client = org.client(org.hamlet)
    before = me(client)["max_message_id"]
    message_id = send(org.client(org.othello))
    assert message_id > before
    assert ok(client.get("users/me"))["max_message_id"] == message_id


def test_profile_data_and_name_changes_show(org):
    """After an administrator sets Hamlet's profile field and Hamlet renames himself, does each
    show in his next GET /users/me?"""
    client = org.client(org.hamlet)
    me(client)
    field_id = ok(org.client(org.admin).post("realm/profile_fields", name="Phone", field_type=1))["id"]
    ok(org.client(org.admin).patch(f"users/{org.hamlet.id}", profile_data=[{"id": field_id, "value": "555"}]))
    assert ok(client.get("users/me"))["profile_data"] == {str(field_id): {"value": "555", "rendered_value": "<p>555</p>"}}
    ok(client.patch("settings", full_name="Hamlet of Denmark"))
    assert ok(client.get("users/me"))["full_name"] == "Hamlet of Denmark"


def test_a_deactivated_account_or_old_key_is_refused_at_once(org):
    """Once an administrator deactivates Othello, or Hamlet regenerates his key, is the next
    request with the old credentials refused, though the account was kept?"""
    othello = org.client(org.othello)
    hamlet = org.client(org.hamlet)
    me(othello)
    me(hamlet)
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    err(othello.get("users/me"), 401, "USER_DEACTIVATED")
    ok(hamlet.post("users/me/api_key/regenerate"))
    err(hamlet.get("users/me"), 401, "INVALID_API_KEY")


def data_version():
    return snapshot_versions()[0]


@sqlite_only
def test_the_data_version_moves_with_every_commit_and_not_inside_one(org):
    """Does the data version move after a commit on the app's write connection, and after one on
    a connection of another program; and inside a write transaction is there none to read at
    (reads there see writes not yet committed)?"""
    with database.connection_context():
        first = data_version()
        assert first is not None and data_version() == first
        with write_transaction():
            database.execute_sql("UPDATE user_profile SET timezone = 'UTC' WHERE id = ?", (org.hamlet.id,))
            assert snapshot_versions() == (None, None)
        second = data_version()
        assert second != first
        other = sqlite3.connect(database_path())
        try:
            other.execute("UPDATE user_profile SET timezone = 'Europe/Oslo' WHERE id = ?", (org.hamlet.id,))
            other.commit()
        finally:
            other.close()
        assert data_version() not in (first, second)


@pytest.mark.skipif(not pg.ENABLED, reason="SQLite reads a data version")
def test_postgresql_keeps_nothing(org):
    """On PostgreSQL, is nothing kept (every request reads the database)?"""
    ok(org.client(org.hamlet).get("users/me"))
    assert runtime.current().versions() == (None, None)
    assert len(runtime.current().snapshots) == 0
