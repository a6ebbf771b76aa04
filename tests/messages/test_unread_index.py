"""New messages' unread rows on SQLite: written outside the unread index, with an internal bit,
and put into it in batches by a later group COMMIT (models/messages.py,
PENDING_UNREAD_INDEX). Every way of asking for unread messages must see them in both states:
/register's unread_msgs, the is:unread narrow, the first_unread anchor, mark as read (all, a
channel, a topic), muting a sender. The bit never shows as a flag."""

import sqlite3
import time

import pytest

from chat_appliance.db.backends.sqlite import index_pending_unread
from chat_appliance.models import PENDING_UNREAD_INDEX, database

from ..support import pg
from ..support.helpers import ok, register

pytestmark = pytest.mark.skipif(pg.ENABLED, reason="PostgreSQL puts unread rows in the index at once")


@pytest.fixture
def held(app):
    """Group COMMITs do not index pending rows while the test runs; `held.index()` does, as the
    next COMMIT after INDEX_UNREAD_EVERY_SECONDS would. `held.rows()`: (user, message, flags)."""
    indexer = database.obj.group_commit.before_commit
    path = database.obj.database

    def query(sql):
        connection = sqlite3.connect(path, timeout=10)
        try:
            return connection.execute(sql).fetchall()
        finally:
            connection.close()

    class Held:
        @staticmethod
        def index():
            connection = sqlite3.connect(path, timeout=10, isolation_level=None)
            try:
                connection.execute("BEGIN IMMEDIATE")
                changed = index_pending_unread(connection)
                connection.execute("COMMIT")
                return changed
            finally:
                connection.close()

        @staticmethod
        def rows():
            return query("SELECT user_profile_id, message_id, flags FROM user_message")

        @staticmethod
        def listed():
            return sorted(row[0] for row in query("SELECT message_id FROM pending_unread_message"))

    saved, indexer.every = indexer.every, 3600
    indexer.last = time.monotonic()
    yield Held
    indexer.every = saved


def send(org, to, topic, content="hello", sender=None):
    client = org.client(sender or org.hamlet)
    return ok(client.post("messages", type="stream", to=to, topic=topic, content=content))["id"]


def unread_ids(org, user, narrow=()):
    body = ok(org.client(user).get("messages", anchor="newest", num_before=1000, num_after=0,
                                   narrow=[["is", "unread"], *narrow]))
    return [m["id"] for m in body["messages"]]


def registered_unread(org, user):
    state = register(org.client(user))
    unread = state["unread_msgs"]
    return unread["count"], sorted(i for s in unread["streams"] for i in s["unread_message_ids"])


def test_a_sends_rows_wait_outside_the_index_and_count_as_unread(org, held):
    """Are a send's unread rows written with the pending bit (a read row never) and its message
    listed, do they count as unread everywhere meanwhile, and after the pass, the same, with no
    row pending and the list empty?"""
    ok(org.client(org.othello).post("mark_all_as_read"))  # the example organization's
    older = [send(org, "Denmark", "old") for _ in range(3)]
    assert held.index() > 0
    newer = [send(org, "Denmark", "new") for _ in range(3)]
    assert held.listed() == newer
    rows = {(uid, mid): flags for uid, mid, flags in held.rows()}
    for mid in newer:
        assert rows[(org.othello.id, mid)] & PENDING_UNREAD_INDEX
    assert not [flags for flags in rows.values() if flags & 1 and flags & PENDING_UNREAD_INDEX]  # read: not pending
    assert all(not rows[(org.othello.id, mid)] & PENDING_UNREAD_INDEX for mid in older)
    for state in ("pending", "indexed"):
        expected = older + newer
        assert unread_ids(org, org.othello) == expected, state
        assert unread_ids(org, org.othello, [["topic", "new"]]) == newer, state
        assert registered_unread(org, org.othello) == (6, expected), state
        body = ok(org.client(org.othello).get("messages", anchor="first_unread", num_before=0, num_after=2,
                                                narrow=[["topic", "new"]]))
        assert body["anchor"] == newer[0], state
        # Some of each part: the newest two unread, then the oldest two.
        body = ok(org.client(org.othello).get("messages", anchor="newest", num_before=2, num_after=0,
                                                narrow=[["is", "unread"]]))
        assert [m["id"] for m in body["messages"]] == newer[-2:] and not body["found_oldest"], state
        body = ok(org.client(org.othello).get("messages", anchor="oldest", num_before=0, num_after=4,
                                                narrow=[["is", "unread"]]))
        assert [m["id"] for m in body["messages"]] == expected[:4], state
        body = ok(org.client(org.othello).get("messages", message_ids=str(older[:1] + newer[:1]).replace(" ", ""),
                                                narrow=[["is", "unread"]]))
        assert sorted(m["id"] for m in body["messages"]) == [older[0], newer[0]], state
        for message in body["messages"]:
            assert message["flags"] == [], state  # the bit is no flag of the API
        if state == "pending":
            assert held.index() > 0
    assert held.listed() == []
    assert not [row for row in held.rows() if row[2] & PENDING_UNREAD_INDEX]


def test_marking_read_reaches_rows_in_either_state(org, held):
    """Do mark_all_as_read, mark_stream_as_read, mark_topic_as_read and muting a sender mark
    pending rows read as well as indexed ones, and marking unread again bring both back?"""
    othello = org.client(org.othello)
    denmark = ok(othello.get("get_stream_id", stream="Denmark"))["stream_id"]
    ok(othello.post("mark_all_as_read"))  # the example organization's
    a_indexed = send(org, "Denmark", "a")
    held.index()
    a_pending = send(org, "Denmark", "a")
    ok(othello.post("mark_topic_as_read", stream_id=denmark, topic_name="a"))
    assert unread_ids(org, org.othello) == []
    b_indexed = send(org, "Denmark", "b")
    held.index()
    b_pending = send(org, "Denmark", "b")
    ok(othello.post("mark_stream_as_read", stream_id=denmark))
    assert unread_ids(org, org.othello) == []
    ok(othello.post("messages/flags", messages=[a_indexed, a_pending, b_indexed, b_pending], op="remove",
                     flag="read"))
    assert unread_ids(org, org.othello) == [a_indexed, a_pending, b_indexed, b_pending]
    ok(othello.post("mark_all_as_read"))
    assert unread_ids(org, org.othello) == [] and registered_unread(org, org.othello) == (0, [])
    from_hamlet = send(org, "Denmark", "c")
    held.index()
    from_hamlet_pending = send(org, "Denmark", "c")
    assert unread_ids(org, org.othello) == [from_hamlet, from_hamlet_pending]
    ok(othello.post(f"users/me/muted_users/{org.hamlet.id}"))
    assert unread_ids(org, org.othello) == []


def test_the_unread_narrow_uses_the_unread_index(org, held):
    """Does SQLite's planner serve a user's unread rows from the partial index (the condition the
    queries write must be the index's own, or the planner scans the user's whole history)?"""
    from chat_appliance.models import UserMessage, unread_conditions

    send(org, "Denmark", "listed")  # with no message listed, there is no query of listed rows
    with database.connection_context():
        pending, indexed = unread_conditions()
        query = UserMessage.select(UserMessage.message).where((UserMessage.user_profile == 1) & indexed)
        sql, params = query.order_by(UserMessage.message.desc()).limit(10).sql()
        plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params))
        assert "user_message_unread" in plan
        # The pending rows: one lookup of the (user, message) key per listed message, also
        # when the narrow asks for the newest first (not a walk down the user's whole history).
        query = UserMessage.select(UserMessage.message).where((UserMessage.user_profile == 1) & pending)
        sql, params = query.order_by(UserMessage.message.desc()).limit(10).sql()
        plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params))
        assert "(message_id=? AND user_profile_id=?)" in plan and "pending_unread_message" in plan, plan
        # The pass: the listed messages' rows through the (message, user) key.
        plan = " ".join(row[-1] for row in database.execute_sql(
            "EXPLAIN QUERY PLAN UPDATE user_message SET flags = flags & ? WHERE message_id IN"
            " (SELECT message_id FROM pending_unread_message) AND (flags & ?) != 0", (-2049, 2048)))
        assert "(message_id=?)" in plan and "pending_unread_message" in plan, plan


def test_flag_narrows_read_the_per_user_indexes_alone(org, held):
    """Do the fetches of is:unread, is:starred and is:mentioned read the per-user indexes and
    nothing of the message table (a row's message always exists, and looking each up cost a
    B-tree descent per row), while a narrow with a condition on messages still joins them?"""
    from chat_appliance.lib.narrow import Narrow, RangeQuery
    from chat_appliance.lib.validators import LARGER_THAN_MAX_MESSAGE_ID

    send(org, "Denmark", "listed")  # so that is:unread is two queries, the listed rows' first

    def plans(terms):
        query = RangeQuery(org.othello, Narrow(org.othello, terms))
        return [[row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]
                for sql, params in query.row_queries(lambda column: column < LARGER_THAN_MAX_MESSAGE_ID, True, 101)]

    with database.connection_context():
        for terms, index in (([("is", "unread", False)], "user_message_unread"),
                             ([("is", "starred", False)], "user_message_starred"),
                             ([("is", "mentioned", False)], "user_message_mentioned")):
            found = plans(terms)
            assert any(index in step for step in found[-1]), (terms, found)
            for plan in found:
                assert not [step for step in plan if step.startswith(("SEARCH m ", "SCAN m"))], (terms, plan)
        plan = plans([("is", "unread", False), ("sender", org.hamlet.email, False)])[-1]
        assert [step for step in plan if step.startswith("SEARCH m ")], plan


def test_a_group_commit_indexes_what_waits(org, held):
    """Does the COMMIT of a write, once INDEX_UNREAD_EVERY_SECONDS have passed, put every pending
    row into the index in its own transaction (the send's own rows included) and empty the list,
    while the COMMITs before it leave them waiting?"""
    indexer = database.obj.group_commit.before_commit
    waiting = send(org, "Denmark", "wait")
    assert waiting in held.listed()
    assert [row for row in held.rows() if row[1] == waiting and row[2] & PENDING_UNREAD_INDEX]
    indexer.every = 0  # the next COMMIT runs the pass
    later = send(org, "Denmark", "wait")
    assert held.listed() == []
    assert not [row for row in held.rows() if row[2] & PENDING_UNREAD_INDEX]
    assert unread_ids(org, org.othello, [["topic", "wait"]]) == [waiting, later]


def test_passes_take_turns_over_slices_of_the_users(org, held):
    """With a pass limited to one user id, does each group COMMIT's pass index the waiting rows of
    the next id that has some, while every recipient still finds all their unread messages, and
    does the round's last pass take the messages it finished off the list, keeping one sent in
    the middle of the round until the next round has indexed its rows below where it began?"""
    indexer = database.obj.group_commit.before_commit
    indexer.users_per_pass, indexer.next_user = 1, 0
    ok(org.client(org.othello).post("mark_all_as_read"))
    # The example organization's own messages may still be listed (whether a COMMIT came a tenth
    # of a second after them depends on the machine's speed); the round below starts from none.
    held.index()
    assert held.listed() == []
    first = send(org, "Denmark", "slices")
    recipients = sorted(uid for uid, mid, flags in held.rows() if mid == first and flags & PENDING_UNREAD_INDEX)
    assert len(recipients) >= 3, recipients

    def waiting(message_id):
        return sorted(uid for uid, mid, flags in held.rows() if mid == message_id and flags & PENDING_UNREAD_INDEX)

    def one_pass():
        """A write whose group COMMIT runs a pass (the `held` fixture holds them otherwise)."""
        indexer.every, indexer.last = 0, 0.0
        try:
            ok(org.client(org.owner).post("users/me/alert_words", alert_words=["zzz"]))
        finally:
            indexer.every = 3600

    one_pass()
    assert waiting(first) == recipients[1:]
    middle = send(org, "Denmark", "slices")  # sent while the round is under way
    assert waiting(middle) == recipients
    assert unread_ids(org, org.othello, [["topic", "slices"]]) == [first, middle]
    one_pass()
    assert waiting(first) == waiting(middle)[1:] == recipients[2:]
    while indexer.next_user:
        assert held.listed() == [first, middle]
        one_pass()
    # The round is over: the first message is done and leaves the list; the one sent in the
    # middle keeps its row of the id the round had passed when it came.
    assert held.listed() == [middle] and waiting(middle) == recipients[:1]
    assert unread_ids(org, org.othello, [["topic", "slices"]]) == [first, middle]
    one_pass()
    assert held.listed() == [] and not [row for row in held.rows() if row[2] & PENDING_UNREAD_INDEX]
    assert unread_ids(org, org.othello, [["topic", "slices"]]) == [first, middle]
    assert registered_unread(org, org.othello)[1] == [first, middle]


def test_a_users_rows_are_found_by_the_per_user_index(org, held):
    """Does the planner serve a user's rows (every flag) from user_message_by_user, and those of
    listed messages by the (message, user) key, rather than scanning the whole table (the key
    starts with the message, so a query naming the user alone can use no index)?"""
    from chat_appliance.models import UserMessage, received_conditions

    send(org, "Denmark", "listed")
    with database.connection_context():
        pending, indexed = received_conditions()
        for condition, expected in ((indexed, "user_message_by_user (user_profile_id=?)"),
                                    (pending, "(message_id=? AND user_profile_id=?)")):
            query = UserMessage.select(UserMessage.message).where((UserMessage.user_profile == 1) & condition)
            sql, params = query.order_by(UserMessage.message.desc()).limit(10).sql()
            plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params))
            assert expected in plan and "SCAN" not in plan, plan


def test_a_users_own_rows_are_found_in_either_state(org, held):
    """Are a user's rows of new messages, channel and direct, found while they wait outside the
    per-user indexes and after they enter them: in the user's whole history, a direct-message
    narrow, /register's max_message_id and recent conversations, and /users/me?"""
    othello = org.client(org.othello)
    older = send(org, "Denmark", "mine")
    held.index()
    channel = send(org, "Denmark", "mine")
    direct = ok(org.client(org.hamlet).post("messages", type="direct", to=f"[{org.othello.id}]",
                                             content="psst"))["id"]
    assert held.listed() == [channel, direct]
    for state in ("pending", "indexed"):
        body = ok(othello.get("messages", anchor="newest", num_before=3, num_after=0, narrow=[]))
        assert [m["id"] for m in body["messages"]][-3:] == [older, channel, direct], state
        body = ok(othello.get("messages", anchor="newest", num_before=5, num_after=0,
                              narrow=[["dm", org.hamlet.email]]))
        assert [m["id"] for m in body["messages"]][-1:] == [direct], state
        body = ok(othello.get("messages", message_ids=f"[{older},{channel},{direct}]", narrow=[]))
        assert sorted(m["id"] for m in body["messages"]) == [older, channel, direct], state
        state_data = register(othello)
        assert state_data["max_message_id"] == direct, state
        conversations = state_data["recent_private_conversations"]
        assert conversations[0]["max_message_id"] == direct, state
        assert ok(othello.get("users/me"))["max_message_id"] == direct, state
        if state == "pending":
            assert held.index() > 0
    assert held.listed() == []


def test_nothing_listed_means_one_query(org, held):
    """With no message listed, is a user's history one query (the per-user index alone), and with
    one listed, the listed rows' query first?"""
    from chat_appliance.models import UserMessage, received_conditions, unread_conditions

    held.index()
    with database.connection_context():
        assert len(received_conditions()) == 1 and len(unread_conditions()) == 1
    send(org, "Denmark", "listed")
    with database.connection_context():
        for conditions in (received_conditions(), unread_conditions()):
            sql = [UserMessage.select().where(condition).sql()[0] for condition in conditions]
            assert len(sql) == 2 and "pending_unread_message" in sql[0] and "pending_unread_message" not in sql[1]


def test_a_pass_between_the_two_queries_loses_no_row(org, held, monkeypatch):
    """If the unread pass moves listed messages' rows into the indexes between a narrow's two
    queries (each reads its own snapshot), is every message found, once, in the user's history
    and among the unread?"""
    sent = [send(org, "Denmark", "race") for _ in range(3)]
    cls = type(database.obj)
    original = cls.execute_sql
    calls = []

    def execute_sql(self, sql, params=None, *args, **kwargs):
        result = original(self, sql, params, *args, **kwargs)
        if '"user_message"' in sql and sql.startswith("SELECT") and not calls:  # the first part's query
            calls.append(sql)
            rows = result.fetchall()
            held.index()  # the pass commits on another connection, between the two queries
            return _Rows(rows)
        return result

    monkeypatch.setattr(cls, "execute_sql", execute_sql)
    body = ok(org.client(org.othello).get("messages", anchor="newest", num_before=3, num_after=0,
                                          narrow=[["topic", "race"]]))
    assert calls and held.listed() == []
    assert [m["id"] for m in body["messages"]] == sent
    calls.clear()
    held_ids = [send(org, "Denmark", "race2") for _ in range(2)]
    body = ok(org.client(org.othello).get("messages", anchor="newest", num_before=5, num_after=0,
                                          narrow=[["is", "unread"], ["topic", "race2"]]))
    assert calls and [m["id"] for m in body["messages"]] == held_ids


class _Rows:
    def __init__(self, rows):
        self.rows = rows

    def fetchall(self):
        return self.rows
