"""Group commit for SQLite: concurrent write transactions share one COMMIT.

A send to a channel of 50 writes a row per recipient, and those rows land on about 140 pages of
the per-user indexes; COMMIT writes every dirty page to the write-ahead log, so one send cost
about 1 ms of COMMIT against 0.2 ms of inserts (docs/benchmarks-history.md, "Speed work"). Sends queued
behind each other touch the same pages, so committing them together costs barely more than
committing one.

All write transactions of the process run on one connection, one at a time, under the writer
lock, each inside a savepoint. When a transaction ends and no other writer is waiting for the
lock, its writer commits at once: alone, a write is committed exactly as before. When others
are waiting, it releases its savepoint, hands the lock on and waits; the next writer continues
the same SQLite transaction, and whichever writer finds nobody waiting (or the batch full)
commits for all of them. Every writer returns only after the COMMIT that holds its changes, so
nothing is acknowledged before it is durable, and a transaction that fails rolls back to its
own savepoint without touching the others. If COMMIT itself fails, every writer of the batch
raises. The callbacks of each writer (its events) run after the COMMIT, in commit order.

Held answers. Under `serve`, the workers run the app one at a time (db/admission.py), so the
writers that queued for the lock were each a thread: sixteen concurrent senders cost about 20
thread switches per send, and the switches ate what the shared COMMIT saved (16 senders ran
barely faster than one). A send (POST /messages) therefore opens its transaction as
`deferrable`: when its worker allows it (turns.deferring, set by the WSGI bridge around each
request), the transaction ends without waiting for its COMMIT. The batch stays open, the lock
is released, and the request's answer is held (_Debt.hold) until the batch is committed; its
after-commit callbacks, and any `on_commit` of the same request after the transaction, wait
with it. The worker goes on to the next request, whose write joins the same SQLite
transaction, and commits (_Debt.settle) once it has nothing more to run. Nothing is answered
before it is durable, as before; if the COMMIT fails, the held answers become errors.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import logging
import sqlite3
import threading
from contextlib import contextmanager

from peewee import SqliteDatabase

from chat_appliance.db.admission import turns

log = logging.getLogger(__name__)


def is_full_disk_error(error: sqlite3.Error) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL, 13). Python names the code and sets
    sqlite_errorcode only from 3.11; on 3.10 the message tells it."""
    return getattr(error, "sqlite_errorcode", None) == 13 or "database or disk is full" in str(error)

# At most this many write transactions share one COMMIT, so that a steady stream of writers
# cannot hold the first one's answer back for long.
MAX_BATCH = 32
# A writer waits at most this long for the COMMIT of its batch (done by the batch's last writer,
# in another thread). A batch takes milliseconds; only a committer that died without telling its
# batch (a BaseException in its thread) makes the wait run out, and then the writer raises rather
# than holding its request, and its database connection, forever. Whether its changes were
# committed is unknown then, as after any failed COMMIT.
COMMIT_WAIT_SECONDS = 60


class _Batch:
    """One SQLite transaction shared by several writers."""

    __slots__ = ("callbacks", "done", "error", "size", "held", "ended")

    def __init__(self):
        self.callbacks = []
        self.done = threading.Event()
        self.error = None
        self.size = 0
        # Answers waiting for this COMMIT: (if committed, if not) pairs of callables.
        self.held = []
        # Set (under the group's guard) once the batch is committed and announced, or has failed.
        self.ended = False


class _Debt:
    """A deferred write's batch, as its request sees it: its answer waits for the batch's COMMIT."""

    __slots__ = ("group", "batch")

    def __init__(self, group, batch):
        self.group = group
        self.batch = batch

    def hold(self, committed: Callable[[], Any], failed: Callable[[BaseException], Any]) -> None:
        """Call `committed` once the batch is committed and its callbacks have run, or `failed`
        with the error if it could not be committed (a full disk must answer as one, not as a
        bug); at once if that is already known."""
        batch = self.batch
        with self.group.guard:
            if not batch.ended:
                batch.held.append((committed, failed))
                return
        if batch.error is not None:
            failed(batch.error)
        else:
            committed()

    def add_callback(self, callback: Callable[[], Any]) -> None:
        """Run `callback` after the batch's COMMIT (never if it fails), after those before it."""
        batch = self.batch
        with self.group.guard:
            if not batch.ended:
                batch.callbacks.append(callback)
                return
        if batch.error is None:
            callback()

    def settle(self) -> None:
        """Commit the batch now, unless another writer already did (or is doing it)."""
        self.group._settle(self.batch)


class _InBatch:
    """Stands in peewee's transaction stack while a writer runs on the shared connection, so
    that a nested `atomic()` makes a savepoint instead of a BEGIN."""


IN_BATCH = _InBatch()


class GroupCommit:
    """The writer lock and the shared write connection of one open SQLite database."""

    def __init__(self, db):
        self.db = db
        # Called after every successful COMMIT, if set (the WAL checkpointer's `wrote`).
        self.committed = None
        # Called with the write connection right before each COMMIT, if set: more writes in the
        # batch's transaction (sqlite.py, UnreadIndexer). An error it raises is logged, and the
        # batch is committed without what its failed statement would have written.
        self.before_commit = None
        self.lock = threading.Lock()
        self.guard = threading.Lock()  # protects `waiting`, and a batch's held answers and callbacks
        self.waiting = 0
        self.connection: Any = None
        self.batch: Any = None
        self.local = threading.local()

    def close(self) -> None:
        with self.lock:
            if self.connection is not None:
                self.connection.close()
                self.connection = None

    def between_writes(self, fn: Callable[..., Any]) -> bool:
        """fn() with the writer lock held and no write transaction open (the WAL checkpointer's
        last step, so that no write lands in the log while it finishes). A transaction left open
        (deferred writes, or a batch being handed from one writer to the next) is committed
        first, as its next writer would: under a steady stream of held sends there is rarely a
        moment without one, and the log grew to the automatic checkpoint's 200 MB. False,
        without calling fn, if that COMMIT fails."""
        committed = None
        self.lock.acquire()
        try:
            if self.batch is not None:
                batch = self.batch
                if not self._commit(batch):
                    return False
                committed = batch
            fn()
        finally:
            self.lock.release()
            if committed is not None:  # its callbacks and held answers, outside the lock
                self._announce(committed)
        return True

    @contextmanager
    def transaction(self, after_commit: Callable[..., Any] | None = None,
                    deferrable: bool = False) -> Iterator[None]:
        """A write transaction; `after_commit` runs once it is committed. Nested, a savepoint.
        `deferrable`: when the thread's request allows it (turns.deferring), the transaction
        ends without waiting for its COMMIT, and the request's answer waits instead (_Debt)."""
        if getattr(self.local, "depth", 0):
            self.local.depth += 1
            try:
                with self.db.atomic():
                    yield
            finally:
                self.local.depth -= 1
            return
        batch = self._acquire()
        # peewee's per-thread state points at the shared connection for the transaction's length.
        state = self.db._state
        saved = (state.conn, state.closed, state.transactions)
        state.conn, state.closed, state.transactions = self.connection, False, [IN_BATCH]
        self.local.depth = 1
        # The first writer of a batch needs no savepoint: if it fails, the whole (so far only
        # its own) transaction rolls back.
        joined = batch.size > 0
        failed = True
        try:
            if joined:
                self.connection.execute("SAVEPOINT write_transaction")
            try:
                yield
            except BaseException:
                if joined:
                    self._undo_savepoint(batch)
                else:
                    self._fail(batch, None)
                raise
            if joined:
                self.connection.execute("RELEASE write_transaction")
            failed = False
        finally:
            self.local.depth = 0
            state.conn, state.closed, state.transactions = saved
            if failed:
                self._hand_on(batch)
        batch.callbacks.append(after_commit)
        batch.size += 1
        if deferrable and batch.size < MAX_BATCH and turns.deferring():
            # Left open: the next writer continues it, and whoever finds nobody behind it (or
            # the bridge, when its worker's run of requests ends) commits it.
            turns.owe(_Debt(self, batch))
            self.lock.release()
            return
        self._hand_on(batch)
        if not batch.done.is_set():
            with turns.waiting_on_others():
                if not batch.done.wait(COMMIT_WAIT_SECONDS):
                    raise sqlite3.OperationalError(
                        f"the transaction's COMMIT did not happen within {COMMIT_WAIT_SECONDS} s")
        if batch.error is not None:
            raise sqlite3.OperationalError(f"the transaction could not be committed: {batch.error}") from batch.error

    # --- inside ------------------------------------------------------------------------------

    def _acquire(self):
        """Take the writer lock; the batch to write in (a new SQLite transaction if none is open)."""
        self._take_lock()
        try:
            if self.connection is None:
                # A connection of its own, outside the pool, with the same pragmas and functions.
                self.connection = SqliteDatabase._connect(self.db)
            if self.batch is None:
                self.connection.execute("BEGIN IMMEDIATE")
                self.batch = _Batch()
            return self.batch
        except BaseException:
            self.lock.release()
            raise

    def _take_lock(self):
        """Take the writer lock, counted in `waiting` meanwhile (a writer that ends its
        transaction leaves it open for those). Its holder is most often a COMMIT that ends within
        a millisecond or two: the turn is kept for that long, since any other worker it went to
        would soon wait for this lock too, each handing the turn on again. Past the turns'
        patience it is given up, so that a slow holder, or one that waits for the turn itself,
        holds nobody up."""
        with self.guard:
            self.waiting += 1
        try:
            if not (self.lock.acquire(blocking=False) or self.lock.acquire(timeout=turns.patience)):
                with turns.waiting_on_others():
                    self.lock.acquire()
        finally:
            with self.guard:
                self.waiting -= 1

    def _undo_savepoint(self, batch):
        """Roll a failed writer back to its savepoint. Some errors (a full disk, say) make SQLite
        roll the whole transaction back: then the batch is lost, and its writers are told."""
        if self.connection.in_transaction:
            try:
                self.connection.execute("ROLLBACK TO write_transaction")
                self.connection.execute("RELEASE write_transaction")
                return
            except sqlite3.Error as error:
                log.exception("could not roll back to a savepoint")
                self._fail(batch, error)
                return
        self._fail(batch, sqlite3.OperationalError("SQLite rolled the transaction back"))

    def _fail(self, batch, error):
        if self.connection.in_transaction:
            try:
                self.connection.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("rollback failed")
        batch.error = error if error is not None else sqlite3.OperationalError("the transaction was rolled back")
        self.batch = None
        with self.guard:
            batch.ended = True
            held, batch.held = batch.held, []
        batch.done.set()
        for _committed, failed in held:
            failed(batch.error)

    def _settle(self, batch):
        """Commit an open batch that deferred writers left (see _Debt), unless it has ended."""
        if batch.ended:
            return
        self._take_lock()
        committed = False
        mine = self.batch is batch
        try:
            if mine:
                committed = self._commit(batch)
        finally:
            self.lock.release()
        if committed:
            self._announce(batch)
        elif not mine and not batch.done.is_set():
            with turns.waiting_on_others():
                batch.done.wait(COMMIT_WAIT_SECONDS)

    def _hand_on(self, batch):
        """After a writer: commit now if nobody waits (or the batch is full), else leave the
        transaction open for the next writer. Releases the writer lock; a batch's callbacks run
        after that, since they may write themselves."""
        committed = False
        try:
            if self.batch is batch and (batch.size >= MAX_BATCH or not self._others_waiting()):
                committed = self._commit(batch)
        finally:
            self.lock.release()
        if committed:
            self._announce(batch)

    def _others_waiting(self):
        with self.guard:
            return self.waiting > 0

    def _commit(self, batch):
        """COMMIT the batch; False (its writers told) if that fails."""
        self.batch = None
        if self.before_commit is not None:
            try:
                with turns.waiting_on_others():  # as the COMMIT: SQLite's work, without the GIL
                    self.before_commit(self.connection)
            except sqlite3.Error:  # SQLite undid the failed statement; the batch's own writes stand
                log.exception("a write before a group COMMIT failed")
        try:
            with turns.waiting_on_others():
                self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            # A full disk is the operator's to fix, not a bug: one line, no traceback.
            if is_full_disk_error(error):
                log.error("group commit failed: %s", error)
            else:
                log.exception("group commit failed")
            self._fail(batch, error)
            return False
        if self.committed is not None:
            self.committed()
        return True

    def _announce(self, batch):
        """Run the committed writers' callbacks in commit order, then let the writers return and
        the held answers go."""
        done = 0
        while True:
            with self.guard:
                if done == len(batch.callbacks):
                    batch.ended = True
                    held, batch.held = batch.held, []
                    break
                callback = batch.callbacks[done]
            done += 1
            if callback is None:
                continue
            try:
                callback()
            except Exception:  # a committed change stays committed; its announcement is best effort
                log.exception("a callback after commit failed")
        batch.done.set()
        for committed, _failed in held:
            committed()
