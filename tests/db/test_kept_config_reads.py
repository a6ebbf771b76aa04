"""A send's configuration reads, kept across sends (lib/snapshots.py, migration 117): on SQLite
the sender's account, the channel, the sender's subscription and permission groups, the
organization, the subscribers and their mutes are read once and served again until a trigger
raises config_generation. Every change to them, by a client, an administrator or another
program writing to the database file, must count at the very next send. On PostgreSQL nothing is
kept, and the same answers must come from reading every time."""

import sqlite3

import pytest

from chat_appliance.db import runtime
from chat_appliance.models import FLAG_BITS, UserMessage, database

from ..support import pg
from ..support.helpers import err, ok, send, write_elsewhere

sqlite_only = pytest.mark.skipif(pg.ENABLED, reason="PostgreSQL keeps no reads: there is nothing to invalidate")


def warm(client, to="Denmark"):
    """Two sends, so that everything the next one reads of its configuration is kept."""
    send(client, to=to)
    return send(client, to=to)



def flags_of(user, message_id):
    with database.connection_context():
        return UserMessage.get((UserMessage.user_profile == user.id) & (UserMessage.message == message_id)).flags


def received(user, message_id):
    with database.connection_context():
        return UserMessage.select().where((UserMessage.user_profile == user.id)
                                          & (UserMessage.message == message_id)).exists()


def group_id(org, name):
    return {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}[name]


def test_leaving_a_private_channel_stops_the_next_send(org):
    """After Hamlet leaves the private channel secret, is his next send there refused as to a
    channel he cannot see?"""
    hamlet = org.client(org.hamlet)
    warm(hamlet, to="secret")
    ok(hamlet.delete("users/me/subscriptions", subscriptions=["secret"]))
    err(hamlet.post("messages", type="stream", to="secret", topic="t", content="x"), 400, "STREAM_DOES_NOT_EXIST")


def test_a_subscription_removed_by_another_program_counts_at_once(org):
    """After another program deletes Hamlet's subscription to secret from the database (no event,
    nothing said to the server), is his next send there refused, by name and by id?"""
    hamlet = org.client(org.hamlet)
    warm(hamlet, to="secret")
    ok(hamlet.post("messages", type="stream", to=org.secret.id, topic="t", content="x"))
    write_elsewhere("UPDATE subscription SET active = ? WHERE user_profile_id = ? AND stream_id = ?",
                    False, org.hamlet.id, org.secret.id)
    err(hamlet.post("messages", type="stream", to="secret", topic="t", content="x"), 400, "STREAM_DOES_NOT_EXIST")
    err(hamlet.post("messages", type="stream", to=org.secret.id, topic="t", content="x"), 400,
        "STREAM_DOES_NOT_EXIST")


def test_a_deactivated_sender_is_refused_and_a_deactivated_subscriber_dropped(org):
    """After an administrator deactivates Othello, is his next send refused, and does Hamlet's
    next message to Denmark no longer reach him?"""
    othello, hamlet = org.client(org.othello), org.client(org.hamlet)
    warm(othello)
    assert received(org.othello, warm(hamlet))
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    err(othello.post("messages", type="stream", to="Denmark", topic="t", content="x"), 401, "USER_DEACTIVATED")
    assert not received(org.othello, send(hamlet))


def test_a_deactivation_by_another_program_counts_at_once(org):
    """After another program marks Othello inactive in the database, is his next send refused?"""
    othello = org.client(org.othello)
    warm(othello)
    write_elsewhere("UPDATE user_profile SET is_active = ? WHERE id = ?", False, org.othello.id)
    err(othello.post("messages", type="stream", to="Denmark", topic="t", content="x"), 401, "USER_DEACTIVATED")


def test_a_new_subscriber_receives_the_next_message(org):
    """After Cordelia joins Denmark, does Hamlet's next message there reach her?"""
    hamlet = org.client(org.hamlet)
    assert not received(org.cordelia, warm(hamlet))
    ok(org.client(org.cordelia).post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}]))
    assert received(org.cordelia, send(hamlet))


def test_can_send_message_group_changes_count_at_once(org):
    """When Verona's can_send_message_group becomes a group with Cordelia in it, then Cordelia
    leaves that group, then she joins it again through a subgroup that is then removed from it,
    is each of her next sends allowed or refused accordingly?"""
    admin, cordelia = org.client(org.admin), org.client(org.cordelia)
    refused = "You do not have permission to post in this channel."
    warm(cordelia, to="Verona")
    poets = ok(admin.post("user_groups/create", name="poets", description="", members=[org.cordelia.id]))["group_id"]
    ok(admin.patch(f"streams/{org.verona.id}", can_send_message_group={"new": poets}))
    warm(cordelia, to="Verona")
    ok(admin.post(f"user_groups/{poets}/members", delete=[org.cordelia.id]))
    err(cordelia.post("messages", type="stream", to="Verona", topic="t", content="x"), 400, "BAD_REQUEST", refused)
    readers = ok(admin.post("user_groups/create", name="readers", description="", members=[org.cordelia.id]))["group_id"]
    ok(admin.post(f"user_groups/{poets}/subgroups", add=[readers]))
    warm(cordelia, to="Verona")
    ok(admin.post(f"user_groups/{poets}/subgroups", delete=[readers]))
    err(cordelia.post("messages", type="stream", to="Verona", topic="t", content="x"), 400, "BAD_REQUEST", refused)


def test_a_demotion_counts_at_once(org):
    """When only administrators may post in Verona, is Iago's next send there refused once the
    owner makes him a member?"""
    iago = org.client(org.admin)
    ok(iago.patch(f"streams/{org.verona.id}", can_send_message_group={"new": group_id(org, "role:administrators")}))
    warm(iago, to="Verona")
    ok(org.client(org.owner).patch(f"users/{org.admin.id}", role=400))
    err(iago.post("messages", type="stream", to="Verona", topic="t", content="x"), 400, "BAD_REQUEST",
        "You do not have permission to post in this channel.")


def test_a_mute_counts_on_the_next_message(org):
    """After Othello mutes Hamlet, does Hamlet's next message reach Othello already read; and after
    he unmutes him, unread again?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    read = FLAG_BITS["read"]
    assert not flags_of(org.othello, warm(hamlet)) & read
    ok(othello.post(f"users/me/muted_users/{org.hamlet.id}"))
    assert flags_of(org.othello, send(hamlet)) & read
    ok(othello.delete(f"users/me/muted_users/{org.hamlet.id}"))
    assert not flags_of(org.othello, send(hamlet)) & read


def test_a_renamed_channel_answers_to_its_new_name_only(org):
    """After an administrator renames Denmark to Elsinore, is a send to "Denmark" refused as to a
    missing channel, and one to "Elsinore" delivered?"""
    hamlet = org.client(org.hamlet)
    warm(hamlet)
    ok(org.client(org.admin).patch(f"streams/{org.denmark.id}", new_name="Elsinore"))
    err(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="x"), 400, "STREAM_DOES_NOT_EXIST")
    send(hamlet, to="Elsinore")


def test_a_new_channel_gets_its_first_message_id(org):
    """Does the first message of a new channel, sent after sends that kept the channel's row, set
    the channel's first_message_id (the send writes it on its own instance of the channel)?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "fresh"}]))
    warm(hamlet)
    first = send(hamlet, to="fresh")
    send(hamlet, to="fresh")
    (stream,) = [s for s in ok(hamlet.get("streams"))["streams"] if s["name"] == "fresh"]
    assert stream["first_message_id"] == first


# --- what is kept, and the triggers that say when it is stale -------------------------------------


def generation():
    return sqlite3.connect(database.obj.database).execute("SELECT value FROM config_generation").fetchone()[0]


def kept_statements(org, statements):
    """The statements a send by name and one by id run when nothing is kept, and not when
    everything is: the reads lib/snapshots.py keeps."""
    hamlet = org.client(org.hamlet)
    cold, warm_ = [], []
    for to in ("Denmark", org.denmark.id):
        warm(hamlet, to=to)
        statements.clear()
        send(hamlet, to=to)
        warm_ += statements
        runtime.current().snapshots.clear()
        statements.clear()
        send(hamlet, to=to)
        cold += statements
    return [statement for statement in cold if statement[0] not in {sql for sql, _ in warm_}]


def tables_read(path, sql, params):
    """The tables SQLite reads to run a statement, as its authorizer hears while preparing it."""
    tables = set()

    def authorize(action, table, *_rest):
        if action == sqlite3.SQLITE_READ and table and not table.startswith("sqlite_"):
            tables.add(table)
        return sqlite3.SQLITE_OK

    connection = sqlite3.connect(path)
    try:
        connection.set_authorizer(authorize)
        connection.execute("EXPLAIN " + sql, params).fetchall()
    finally:
        connection.close()
    return tables


def triggered_events(path):
    """{table: the events (INSERT, UPDATE, DELETE) on which a trigger raises config_generation}."""
    found = {}
    connection = sqlite3.connect(path)
    try:
        for table, sql in connection.execute("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"):
            if "UPDATE config_generation SET value = value + 1" in sql:
                event = next(word for word in ("INSERT", "UPDATE", "DELETE") if f"AFTER {word} ON" in sql.upper())
                found.setdefault(table, set()).add(event)
    finally:
        connection.close()
    return found


@sqlite_only
def test_every_table_a_kept_read_queries_has_the_triggers(org, statements):
    """Does each table the kept reads of a send actually query (found by running sends with and
    without them kept, and asking SQLite which tables the difference reads) have a trigger that
    raises config_generation on insert, update and delete?"""
    path = database.obj.database
    kept = kept_statements(org, statements)
    assert len(kept) >= 7  # account, channel by name and by id, subscription, group, organization, subscribers
    tables = set().union(*(tables_read(path, sql, params) for sql, params in kept))
    assert {"user_profile", "stream", "subscription", "user_group_membership", "realm"} <= tables
    events = triggered_events(path)
    assert {table: events.get(table) for table in tables} == {table: {"INSERT", "UPDATE", "DELETE"} for table in tables}


@sqlite_only
def test_a_repeated_send_reads_no_configuration(org, statements):
    """Does a send, after one to the same channel, read nothing kept (only what depends on the
    messages: the topic's state for the automatic follow policy), and do a hundred sends leave
    config_generation where it was?"""
    hamlet = org.client(org.hamlet)
    warm(hamlet)
    before = generation()
    statements.clear()
    send(hamlet)
    reads = [sql for sql, _ in statements if sql.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert len(reads) <= 1 and all('"user_topic"' in sql for sql in reads)
    for _ in range(99):
        send(hamlet)
    assert generation() == before


@sqlite_only
def test_a_write_on_each_triggered_table_raises_the_generation(org):
    """Does an insert, an update and a delete on a triggered table each raise config_generation
    once, whoever commits them (here another connection)?"""
    before = generation()
    write_elsewhere("INSERT INTO muted_user (user_profile_id, muted_user_id, date_muted) VALUES (?, ?, 0)",
                    org.othello.id, org.hamlet.id)
    write_elsewhere("UPDATE muted_user SET date_muted = 1 WHERE user_profile_id = ?", org.othello.id)
    write_elsewhere("DELETE FROM muted_user WHERE user_profile_id = ?", org.othello.id)
    assert generation() == before + 3


@sqlite_only
def test_every_table_a_kept_register_read_queries_has_the_triggers(org, statements):
    """Does each table that /register's kept reads (the organization's people, channels,
    subscribers, groups, system groups) query have a trigger that raises config_generation on
    insert, update and delete, so that a change to any of them shows in the next register?"""
    from ..support.helpers import register

    hamlet = org.client(org.hamlet)
    params = {"include_subscribers": "true", "client_capabilities": {"include_deactivated_groups": True}}
    register(hamlet, **params)
    statements.clear()
    register(hamlet, **params)
    warm_sql = {sql for sql, _ in statements}
    runtime.current().snapshots.clear()
    statements.clear()
    register(hamlet, **params)
    kept = [statement for statement in statements if statement[0] not in warm_sql]
    path = database.obj.database
    tables = set().union(*(tables_read(path, sql, params) for sql, params in kept))
    assert {"user_profile", "stream", "subscription", "user_group", "user_group_membership"} <= tables
    events = triggered_events(path)
    assert {table: events.get(table) for table in tables} == {table: {"INSERT", "UPDATE", "DELETE"} for table in tables}
