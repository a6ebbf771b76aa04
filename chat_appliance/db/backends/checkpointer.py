"""WAL checkpoints in a thread of their own, off the request path.

In WAL mode every commit appends pages to the write-ahead log, and a checkpoint copies them back
into the database file and syncs both. SQLite checkpoints automatically in the connection whose
COMMIT takes the log past `wal_autocheckpoint` pages: that send then paid for copying some
10,000 pages and two fsyncs (25-28 ms, the p99 of a single client's sends), and every sender
queued behind it waited too. Here a thread checkpoints shortly after writes, on a connection of
its own, while requests go on: a PASSIVE checkpoint blocks neither readers nor the writer, and
SQLite lets go of the GIL while it copies and syncs, so the work lands on another core.

A checkpoint that runs beside a steady stream of writes never catches up with the end of the
log, and SQLite starts the log again from its beginning only after a checkpoint that did: the
log then grows until something checkpoints with the writes held off (it reached 50,000 pages
within a second of one client sending). So once the log is past RESTART_AFTER_PAGES, the thread
checkpoints once more between two write transactions, holding the writer lock: only the few
pages written during the first pass are left to copy, and the next write starts the log afresh.

The automatic checkpoint stays as a fallback (at `wal_autocheckpoint`, far beyond what this
thread lets the log reach), so that a log still cannot grow without bound if this thread fails.
"""

from __future__ import annotations

import logging
import sqlite3
import threading

from chat_appliance.db.backends.group_commit import is_full_disk_error

log = logging.getLogger(__name__)

# After a commit, wait this long for more commits before checkpointing: a burst of sends shares
# one checkpoint.
DELAY_SECONDS = 0.05
# Past this many pages in the log, finish the checkpoint between two write transactions. Each
# such finish holds the writers off for 3-4 ms, and the write after it starts the log afresh,
# which syncs the log's new header inside that write's COMMIT. At 4,000 pages (16 MiB) a single
# client sending to a 50-subscriber channel (about 135 pages a send) paid that every 30 sends;
# at 16,000 (64 MiB, reached only under sustained writes: a checkpoint that catches up during
# any pause lets the next write start the log afresh anyway) every 120, and a send took 4-9%
# less time in process.
RESTART_AFTER_PAGES = 16000


class Checkpointer:
    """Checkpoints the database at `path` after writes; `wrote()` is cheap enough for every commit."""

    def __init__(self, path, between_writes, delay=DELAY_SECONDS):
        self.path = path
        # between_writes(fn): run fn with the writer lock held and no write transaction open;
        # False if it could not now (GroupCommit.between_writes).
        self.between_writes = between_writes
        self.delay = delay
        self.restart_after = RESTART_AFTER_PAGES
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()
        self.checkpoints = 0  # how many ran (for tests)

    def wrote(self) -> None:
        """A commit happened: checkpoint soon."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop.is_set():
                    self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)
                    self._thread.start()
        self._pending.set()

    def close(self) -> None:
        """Stop the thread after the checkpoint under way, if any."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._pending.set()
        if thread is not None:
            thread.join(timeout=30)

    def _run(self):
        connection = None
        try:
            connection = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            while not self._stop.is_set():
                self._pending.wait()
                # Let a burst of commits finish; commits during the checkpoint set `_pending` again.
                if self._stop.wait(self.delay):
                    return
                self._pending.clear()
                try:
                    self._checkpoint(connection)
                except sqlite3.Error as error:  # the automatic checkpoint is still there
                    if is_full_disk_error(error):
                        # The operator's to fix (the sends say so too), not a bug: no traceback.
                        log.error("background WAL checkpoint failed: %s", error)
                    else:
                        log.exception("background WAL checkpoint failed")
        except Exception:
            log.exception("the WAL checkpoint thread stopped")
        finally:
            if connection is not None:
                connection.close()

    def _checkpoint(self, connection):
        def one_pass():
            """(busy, pages in the log, pages copied) of one PASSIVE checkpoint."""
            return connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

        _busy, pages, _copied = one_pass()
        self.checkpoints += 1
        if pages >= self.restart_after:
            # Once more without the lock, for the pages written during the first pass, so that
            # the pass under the lock has only a few left (measured: 3-4 ms held, else 6-7).
            one_pass()
            if not self.between_writes(one_pass):
                self._pending.set()  # a batch was being handed on: try again shortly
