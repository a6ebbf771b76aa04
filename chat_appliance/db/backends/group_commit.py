"""Group commit for SQLite: concurrent write transactions share one COMMIT.

A send to a channel of 50 writes a row per recipient, and those rows land on about 140 pages of
the per-user indexes; COMMIT writes every dirty page to the write-ahead log, so one send cost
about 1 ms of COMMIT against 0.2 ms of inserts (BENCHMARKS.md, "Speed work"). Sends queued
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

    __slots__ = ("callbacks", "done", "error", "size")

    def __init__(self):
        self.callbacks = []
        self.done = threading.Event()
        self.error = None
        self.size = 0


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
        self.lock = threading.Lock()
        self.guard = threading.Lock()  # protects `waiting`
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
        last step, so that no write lands in the log while it finishes). False, without calling
        fn, if a batch is being handed from one writer to the next."""
        with self.lock:
            if self.batch is not None:
                return False
            fn()
            return True

    @contextmanager
    def transaction(self, after_commit: Callable[..., Any] | None = None) -> Iterator[None]:
        """A write transaction; `after_commit` runs once it is committed. Nested, a savepoint."""
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
        self._hand_on(batch)
        if not batch.done.is_set():
            with turns.waiting_on_others():
                if not batch.done.wait(COMMIT_WAIT_SECONDS):
                    raise sqlite3.OperationalError(
                        f"the transaction's COMMIT did not happen within {COMMIT_WAIT_SECONDS} s")
        if batch.error is not None:
            raise sqlite3.OperationalError(f"the transaction could not be committed: {batch.error}")

    # --- inside ------------------------------------------------------------------------------

    def _acquire(self):
        """Take the writer lock; the batch to write in (a new SQLite transaction if none is open)."""
        with self.guard:
            self.waiting += 1
        if not self.lock.acquire(blocking=False):
            with turns.waiting_on_others():
                self.lock.acquire()
        with self.guard:
            self.waiting -= 1
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
        batch.error = error
        self.batch = None
        batch.done.set()

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
        try:
            with turns.waiting_on_others():
                self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            log.exception("group commit failed")
            self._fail(batch, error)
            return False
        if self.committed is not None:
            self.committed()
        return True

    @staticmethod
    def _announce(batch):
        """Run the committed writers' callbacks in commit order, then let the writers return."""
        for callback in batch.callbacks:
            if callback is None:
                continue
            try:
                callback()
            except Exception:  # a committed change stays committed; its announcement is best effort
                log.exception("a callback after commit failed")
        batch.done.set()
