"""Message ids are never reused: after the newest message is deleted, the next one gets a new id."""

import json

import pytest

from chat_appliance.db.connection import applied_versions, migrate
from chat_appliance.models import Message, Reaction, UserMessage, database

from ..support.helpers import err, ok, send


def test_deleted_newest_message_id_does_not_come_back(org):
    """After the newest message is deleted, does the next message get a larger id than the
    deleted one, and does the deleted id stay not found (on SQLite and PostgreSQL alike)?"""
    hamlet = org.client(org.hamlet)
    older = send(hamlet, content="first")
    newest = send(hamlet, content="second")
    ok(org.client(org.admin).delete(f"messages/{newest}"))
    after = send(hamlet, content="third")
    assert after > newest > older
    err(hamlet.get(f"messages/{newest}"), 400, "BAD_REQUEST", "Invalid message(s)")
    assert ok(hamlet.get(f"messages/{after}"))["message"]["content"] == "<p>third</p>"


@pytest.fixture
def before_migration_50(monkeypatch):
    """The app of the next fixtures migrates only up to the versions before 50."""
    from chat_appliance import migrations
    from chat_appliance.db import connection as db_module

    monkeypatch.setattr(db_module, "MIGRATIONS", [m for m in migrations.MIGRATIONS if m[0] < 50])


def test_migration_50_keeps_existing_messages_and_their_rows(before_migration_50, org, monkeypatch):
    """Does migration 50 (which rebuilds SQLite's message table) keep every message with its
    personal rows, reactions and search entry, and are ids then never reused?"""
    from chat_appliance import migrations

    hamlet = org.client(org.hamlet)
    first, newest = send(hamlet, content="zebra crossing"), send(hamlet, content="second")
    ok(org.client(org.othello).post(f"messages/{first}/reactions", emoji_name="wave"))
    with database.connection_context():
        before = (UserMessage.select().count(), Reaction.select().count(), Message.select().count())
    monkeypatch.undo()
    assert migrations.MIGRATIONS[-1][0] >= 50
    migrate()  # on PostgreSQL the test database was cloned with every version already applied
    with database.connection_context():
        assert 50 in applied_versions()
        assert (UserMessage.select().count(), Reaction.select().count(), Message.select().count()) == before
    ok(hamlet.delete(f"messages/{newest}"))
    assert send(hamlet, content="third") > newest
    narrow = json.dumps([{"operator": "search", "operand": "zebra"}])
    found = ok(hamlet.get("messages", anchor="newest", num_before=10, num_after=0, narrow=narrow))["messages"]
    assert [m["id"] for m in found] == [first] and found[0]["reactions"]
