"""SQLite group commit (backends/group_commit.py): write transactions queued behind each other
share one COMMIT; none returns before the COMMIT that holds its changes; one that fails takes
nothing of the others with it; a failed COMMIT fails every transaction in it."""

import sqlite3
import threading
import time

import pytest

from chat_appliance.db.connection import on_commit, write_transaction
from chat_appliance.models import database

from ..support import pg

pytestmark = pytest.mark.skipif(pg.ENABLED, reason="group commit is SQLite's; PostgreSQL has many writers")


class Abort(Exception):
    """Raised to roll a test transaction back."""


@pytest.fixture
def table(app):
    """A scratch table, a second connection that reads what is committed, and the app's group
    commit state."""
    with database.connection_context():
        database.execute_sql("CREATE TABLE scratch (writer TEXT)")
        database.execute_sql("CREATE TABLE deferred_child (parent INTEGER REFERENCES realm (id)"
                             " DEFERRABLE INITIALLY DEFERRED)")
    path = database.obj.database
    reader = sqlite3.connect(path)
    group = database.obj.group_commit

    def committed():
        return sorted(row[0] for row in reader.execute("SELECT writer FROM scratch"))

    yield committed, group
    reader.close()


class Writer(threading.Thread):
    """A thread running one write transaction that inserts `name`, holding it open until
    `release` is set; records its on_commit callback and how it ended."""

    def __init__(self, name, *, fail=False, sql=None, log=None):
        super().__init__(daemon=True)
        self.label, self.fail, self.sql, self.log = name, fail, sql, log if log is not None else []
        self.inside, self.release = threading.Event(), threading.Event()
        self.returned, self.error = False, None

    def run(self):
        try:
            with database.connection_context():
                with write_transaction():
                    database.execute_sql("INSERT INTO scratch (writer) VALUES (?)", (self.label,))
                    if self.sql:
                        database.execute_sql(self.sql)
                    on_commit(lambda: self.log.append(self.label))
                    self.inside.set()
                    self.release.wait(10)
                    if self.fail:
                        raise Abort
            self.returned = True
        except Exception as error:  # noqa: BLE001 - recorded for the test to check
            self.error = error


def hand_on(holder, writer, group):
    """Start `writer` while `holder` writes, let `holder` finish once `writer` queues for the
    lock, and return when `writer` is inside the same batch."""
    writer.start()
    wait_until(lambda: group.waiting == 1)
    holder.release.set()
    assert writer.inside.wait(10)


def wait_until(condition, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_queued_writers_share_one_commit_and_return_after_it(table):
    """With B and C waiting for the writer lock while A writes, does A's row stay uncommitted
    (and A not return) until the last of them is done, then all three commit together, their
    callbacks run in commit order, before each returns?"""
    committed, group = table
    log = []
    a, b, c = (Writer(name, log=log) for name in "abc")
    a.start()
    assert a.inside.wait(10)
    b.start(), c.start()
    wait_until(lambda: group.waiting == 2)
    a.release.set()
    wait_until(lambda: b.inside.is_set() or c.inside.is_set())
    first = b if b.inside.is_set() else c
    second = c if first is b else b
    # A is done writing but its transaction is still open: the next writer continues it.
    time.sleep(0.05)
    assert not a.returned and committed() == [] and log == []
    first.release.set()
    assert second.inside.wait(10)
    time.sleep(0.05)
    assert not a.returned and not first.returned and committed() == []
    second.release.set()
    for writer in (a, b, c):
        writer.join(10)
        assert writer.returned and writer.error is None
    assert committed() == ["a", "b", "c"]
    assert log == ["a", first.label, second.label]


def test_a_failing_writer_takes_nothing_of_the_others(table):
    """Does a transaction that raises in the middle of a shared batch roll back only its own
    row and callback, while the writers before and after it commit?"""
    committed, group = table
    log = []
    a, b, c = Writer("a", log=log), Writer("b", fail=True, log=log), Writer("c", log=log)
    a.start()
    assert a.inside.wait(10)
    hand_on(a, b, group)
    hand_on(b, c, group)
    c.release.set()
    for writer in (a, b, c):
        writer.join(10)
    assert a.returned and c.returned and isinstance(b.error, Abort)
    assert committed() == ["a", "c"] and log == ["a", "c"]


def test_a_failed_commit_fails_every_writer_of_the_batch(table):
    """When COMMIT itself fails (here a deferred foreign key that one writer broke), does every
    writer of the batch raise, with nothing committed and no callback run, and does the next
    write work again?"""
    committed, group = table
    log = []
    a = Writer("a", log=log)
    b = Writer("b", log=log, sql="INSERT INTO deferred_child (parent) VALUES (999999)")
    a.start()
    assert a.inside.wait(10)
    hand_on(a, b, group)
    b.release.set()
    a.join(10), b.join(10)
    assert isinstance(a.error, sqlite3.OperationalError) and isinstance(b.error, sqlite3.OperationalError)
    assert committed() == [] and log == []
    after = Writer("after", log=log)
    after.release.set()
    after.start()
    after.join(10)
    assert after.returned and committed() == ["after"] and log == ["after"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the dying thread
def test_a_writer_does_not_wait_forever_for_a_committer_that_died(table, monkeypatch):
    """When the writer that should COMMIT a shared batch dies without telling the batch (a
    BaseException in its thread), does a writer waiting for that COMMIT raise after
    COMMIT_WAIT_SECONDS instead of hanging, and does the next write work again?"""
    from chat_appliance.db.backends import group_commit

    committed, group = table
    monkeypatch.setattr(group_commit, "COMMIT_WAIT_SECONDS", 0.3)

    def die_before_commit(batch):
        group.batch = None
        group.connection.execute("ROLLBACK")
        raise SystemExit  # ends the thread quietly, as a killed worker would

    a, b = Writer("a"), Writer("b")
    a.start()
    assert a.inside.wait(10)
    hand_on(a, b, group)
    monkeypatch.setattr(group, "_commit", die_before_commit)
    b.release.set()
    a.join(10), b.join(10)
    assert not b.returned and b.error is None  # b's thread died
    assert not a.is_alive() and isinstance(a.error, sqlite3.OperationalError), a.error
    assert "did not happen" in str(a.error)
    monkeypatch.undo()
    after = Writer("after")
    after.release.set()
    after.start()
    after.join(10)
    assert after.returned and committed() == ["after"]


def test_a_lone_writer_commits_at_once(table):
    """With nobody waiting, is a write committed before write_transaction returns, and does a
    nested write_transaction that fails roll back only itself?"""
    committed, _group = table
    with database.connection_context():
        with write_transaction():
            database.execute_sql("INSERT INTO scratch (writer) VALUES ('outer')")
            with pytest.raises(Abort), write_transaction():
                database.execute_sql("INSERT INTO scratch (writer) VALUES ('inner')")
                raise Abort
        assert committed() == ["outer"]
        with pytest.raises(Abort), write_transaction():
            database.execute_sql("INSERT INTO scratch (writer) VALUES ('rolled back')")
            raise Abort
    assert committed() == ["outer"]


def test_commits_are_checkpointed_in_the_background(app, table, tmp_path):
    """Does the checkpoint thread copy committed writes into the database file soon after
    (so that no request pays for the copy), without any further write?"""
    import shutil

    committed, group = table
    checkpointer = database.obj.checkpointer
    before = checkpointer.checkpoints
    with database.connection_context():
        with write_transaction():
            database.execute_sql("INSERT INTO scratch (writer) VALUES ('checkpointed')")
    deadline = time.monotonic() + 5
    while checkpointer.checkpoints == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert checkpointer.checkpoints > before
    # The database file alone, without its write-ahead log, holds the row.
    copy = tmp_path / "file-only.sqlite3"
    shutil.copyfile(database.obj.database, copy)
    assert sqlite3.connect(copy).execute("SELECT writer FROM scratch").fetchall() == [("checkpointed",)]


def test_the_write_ahead_log_starts_afresh_under_steady_writes(app, table):
    """A checkpoint beside a steady stream of writes never reaches the end of the log, and SQLite
    restarts the log only after one that does: does the checkpointer finish between two writes
    once the log is long, so that the log stays short instead of growing to the fallback?"""
    import os

    checkpointer = database.obj.checkpointer
    checkpointer.restart_after = 100  # pages
    wal = database.obj.database + "-wal"
    stop = threading.Event()
    writes = []

    def write():
        with database.connection_context():
            while not stop.is_set():
                with write_transaction():
                    database.execute_sql("INSERT INTO scratch (writer) VALUES (?)", ("x" * 3000,))
                writes.append(1)

    writer = threading.Thread(target=write)
    writer.start()

    def log_pages():
        return os.path.getsize(wal) // 4096 if os.path.exists(wal) else 0

    # Write until the rows are far more than the log's pages (the checkpointer kept it short), or
    # for at most 10 s: then the assertions below say what went wrong.
    deadline = time.monotonic() + 10
    while (len(writes) < 1000 or log_pages() >= len(writes) // 2) and writer.is_alive() \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    writer.join(10)
    committed, _group = table
    written = len(committed())
    assert written > 1000  # far more pages than the log is allowed to keep
    # The log file never shrinks: its size is the most the log ever held.
    most_pages = log_pages()
    assert most_pages < written // 2, (most_pages, written)


# --- held answers: deferrable writes of a worker that allows them ------------------------------

class DeferringWorker(threading.Thread):
    """A thread that runs `requests` (callables) as the WSGI bridge runs requests under turns:
    each allowed to leave a deferrable write uncommitted. Records, per request, its debt; the
    test settles them."""

    def __init__(self, *requests):
        super().__init__(daemon=True)
        self.requests, self.debts, self.error = requests, [], None

    def run(self):
        from chat_appliance.db.admission import turns

        try:
            with database.connection_context():
                for request in self.requests:
                    turns.allow_deferred_commits(True)
                    try:
                        request()
                        self.debts.append(turns.debt())
                    finally:
                        turns.allow_deferred_commits(False)
        except Exception as error:  # noqa: BLE001 - recorded for the test to check
            self.error = error


def deferred_insert(label, log, sql=None):
    """A request that writes `label` in a deferrable transaction, with an on_commit inside the
    transaction and one after it (as check_send_message publishes its event)."""

    def request():
        with write_transaction(deferrable=True):
            database.execute_sql("INSERT INTO scratch (writer) VALUES (?)", (label,))
            if sql:
                database.execute_sql(sql)
            on_commit(lambda: log.append(f"{label} inside"))
        on_commit(lambda: log.append(f"{label} after"))
    return request


def hold(debt, log, label):
    debt.hold(lambda: log.append(f"{label} answered"), lambda _error: log.append(f"{label} failed"))


def held_write(label, log):
    """One deferrable write by a deferring worker, left open, its answer held (logged as
    answered or failed); returns its debt."""
    worker = DeferringWorker(deferred_insert(label, log))
    worker.start()
    worker.join(10)
    (debt,) = worker.debts
    hold(debt, log, label)
    return debt


def test_deferred_writes_share_a_commit_and_their_answers_wait_for_it(table):
    """Do two requests whose deferrable writes a worker runs one after the other end without
    committing, join one transaction, and hold their answers and their events until one
    settle commits both, events first, in order?"""
    committed, group = table
    log = []
    worker = DeferringWorker(deferred_insert("a", log), deferred_insert("b", log))
    worker.start()
    worker.join(10)
    assert worker.error is None
    first, second = worker.debts
    assert first is not None and second is not None and first.batch is second.batch
    hold(first, log, "a"), hold(second, log, "b")
    assert committed() == [] and log == []  # nothing durable yet, so nothing said
    second.settle()
    assert committed() == ["a", "b"]
    assert log == ["a inside", "a after", "b inside", "b after", "a answered", "b answered"]
    first.settle()  # already committed: nothing more happens
    assert committed() == ["a", "b"] and len(log) == 6


def test_a_held_answer_becomes_an_error_when_its_commit_fails(table):
    """When the COMMIT of deferred writes fails (a deferred foreign key broken), do the held
    answers get their failure, with nothing committed and no event, and does the next write
    work?"""
    committed, _group = table
    log = []
    worker = DeferringWorker(deferred_insert("a", log),
                             deferred_insert("b", log, sql="INSERT INTO deferred_child (parent) VALUES (999999)"))
    worker.start()
    worker.join(10)
    first, second = worker.debts
    hold(first, log, "a"), hold(second, log, "b")
    second.settle()
    assert committed() == [] and log == ["a failed", "b failed"]
    hold(first, log, "late")  # held after the end: told at once
    assert log[-1] == "late failed"
    after = Writer("after", log=log)
    after.release.set()
    after.start()
    after.join(10)
    assert after.returned and committed() == ["after"]


def test_a_writer_that_cannot_defer_commits_what_was_deferred(table):
    """Does an ordinary write transaction that finds deferred writes open continue their
    transaction and commit it with its own, releasing their held answers; and does a
    deferrable write outside a deferring worker commit at once?"""
    committed, _group = table
    log = []
    held_write("deferred", log)
    plain = Writer("plain", log=log)
    plain.release.set()
    plain.start()
    plain.join(10)
    assert plain.returned and committed() == ["deferred", "plain"]
    assert log == ["deferred inside", "deferred after", "plain", "deferred answered"]
    with database.connection_context():
        deferred_insert("not deferring", log)()
    assert committed() == ["deferred", "not deferring", "plain"]


def test_the_bridge_answers_deferred_writes_after_their_commit(table):
    """Through the WSGI bridge as `serve` runs it (workers taking turns): do twelve requests
    sent at once, each a deferrable write, all get their answer, each only once its row is
    committed, with fewer COMMITs than requests?"""
    import asyncio

    from chat_appliance.db.admission import turns
    from chat_appliance.server.wsgi_bridge import WSGIBridge

    committed, group = table
    commits = []
    original = group._commit

    def counting_commit(batch):
        commits.append(batch.size)
        return original(batch)

    group._commit = counting_commit

    def app(environ, start_response):
        label = environ["PATH_INFO"].strip("/")
        with database.connection_context():
            deferred_insert(label, [])()
            until = time.perf_counter() + 0.002  # the rest of a request's Python, in its turn
            while time.perf_counter() < until:
                pass
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [label.encode()]

    bridge = WSGIBridge(app, 16, lambda: None, turns=turns, body_timeout=None)
    answered = {}

    async def request(label):
        async def send(message):
            if message["type"] == "http.response.start":
                answered[label] = label in committed()

        async def receive():
            raise AssertionError("no body to read")

        await bridge({"type": "http", "method": "GET", "path": f"/{label}", "query_string": b"", "headers": [],
                      "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "http_version": "1.1"}, receive, send)

    async def burst():
        await asyncio.gather(*(request(f"r{i:02}") for i in range(12)))

    try:
        asyncio.run(asyncio.wait_for(burst(), 20))
    finally:
        group._commit = original
        bridge.executor.shutdown()
    assert answered == {f"r{i:02}": True for i in range(12)}
    assert committed() == [f"r{i:02}" for i in range(12)]
    assert sum(commits) == 12 and len(commits) < 12, commits


def test_the_checkpointer_commits_deferred_writes_it_finds_open(table):
    """Under a steady stream of held sends there is rarely a moment with no transaction open,
    and the checkpointer's last step needs one. Does between_writes commit deferred writes it
    finds open, run its step with no transaction open, and then let the held answers go?"""
    committed, group = table
    log = []
    held_write("held", log)

    def step():
        log.append(f"step, in a transaction: {group.connection.in_transaction}, committed: {committed()}")

    assert group.between_writes(step) is True
    assert log == ["step, in a transaction: False, committed: ['held']", "held inside", "held after",
                   "held answered"]
