"""The thumbnail worker: makes the thumbnails of uploaded images off the request path, as Zulip's
thumbnail queue worker does (actions/thumbnails.py does the work, lib/thumbnails.py the decoding).

Decoding an image is the costliest thing a member can ask of the server, in CPU and memory, so
it is done by a small fixed pool: DECODERS threads (one on a machine of two cores, never more
than two, never more than half the cores), each at a lower CPU priority than the threads that
answer requests (Linux). Ten simultaneous uploads queue their images instead of decoding ten at
once, and the upload requests answer at once.

It hears of each image after its upload commits (the `thumbnail` job, bus.publish_internal).
Jobs wait in a queue of at most QUEUE_SIZE attachment ids; the database is where pending work
lives (an Attachment with its image's size and no thumbnail formats: actions/thumbnails.py), so
a job that finds the queue full is not lost: the worker looks for it in the database once the
queue has room. It looks there at start too (`resume`, which `serve` calls shortly after it
starts), for the work a previous process left: the images uploaded just before a restart or a
crash.

`drain(timeout)` waits until nothing is queued or being decoded (tests, and a clean stop).

With shards, every process looks at its start: two may decode the same image, which costs time
only (the second finds the job done when it records it, and writes the same files).
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Optional

from chat_appliance.actions.thumbnails import do_make_thumbnails, pending_thumbnail_ids
from chat_appliance.actions.uploads import THUMBNAIL_JOB
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.models import database
from chat_appliance.workers.base import WorkerContext

log = logging.getLogger(__name__)

# Images decoded at once: at most two, and at most half the machine's cores.
DECODERS = max(1, min(2, (os.cpu_count() or 2) // 2))
# Attachment ids waiting in memory; beyond it, the database keeps them.
QUEUE_SIZE = 100
# How much nicer than the request threads a decoder is (Linux: per thread).
DECODER_NICENESS = 10


def _lower_priority() -> None:
    """Let request threads go first when the CPU is busy: on Linux, setpriority on a thread's own
    id concerns that thread alone (elsewhere it would name a process: left alone)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), DECODER_NICENESS)
    except OSError:
        pass


class ThumbnailWorker:
    """The worker (workers/base.py); one per app, its threads stopped by close()."""

    def __init__(self, uploads_root: Path, decoders: int = DECODERS, queue_size: int = QUEUE_SIZE) -> None:
        self.uploads_root = uploads_root
        self.decoders = decoders
        self.queue_size = queue_size
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queue: deque[int] = deque()
        self._known: set[int] = set()  # queued or being decoded
        self._busy = 0
        # The smallest id that may be pending in the database without being queued (a job
        # dropped from a full queue, or work from before the start); None: nothing to look for.
        self._look_from: Optional[int] = None
        self._looking = False
        self._threads: list[threading.Thread] = []
        self._closed = False

    @classmethod
    def start(cls, context: WorkerContext) -> ThumbnailWorker:
        return cls(context.uploads_root)

    def __call__(self, event: dict, user_ids: Any) -> None:
        if event.get("type") != THUMBNAIL_JOB:
            return
        attachment_id = int(event["attachment_id"])
        with self._changed:
            if self._closed or attachment_id in self._known:
                return
            if len(self._queue) >= self.queue_size:
                self._look_later(attachment_id)
            else:
                self._queue.append(attachment_id)
                self._known.add(attachment_id)
            self._start_threads()
            self._changed.notify_all()

    def resume(self) -> None:
        """Look for the work a previous process left (serve calls this after its start)."""
        with self._changed:
            if self._closed:
                return
            self._look_later(0)
            self._start_threads()
            self._changed.notify_all()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job is queued, being decoded or left to look for; False on timeout."""
        with self._changed:
            return self._changed.wait_for(self._idle, timeout)

    def close(self) -> None:
        """Stop taking jobs; let the decodes under way finish (their results commit), then stop.
        Jobs still queued stay pending in the database for the next start."""
        with self._changed:
            self._closed = True
            self._queue.clear()
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads = []

    # -- inside the lock ----------------------------------------------------------------------

    def _idle(self) -> bool:
        return self._closed or (not self._queue and not self._busy and self._look_from is None and not self._looking)

    def _look_later(self, from_id: int) -> None:
        self._look_from = from_id if self._look_from is None else min(self._look_from, from_id)

    def _start_threads(self) -> None:
        while len(self._threads) < self.decoders:
            # Each in a copy of this context: the database of the app that started it.
            thread = threading.Thread(target=contextvars.copy_context().run, args=(self._work,),
                                      name=f"thumbnails-{len(self._threads) + 1}", daemon=True)
            self._threads.append(thread)
            thread.start()

    # -- the decoders -------------------------------------------------------------------------

    def _work(self) -> None:
        _lower_priority()
        while True:
            look_from: Optional[int] = None
            with self._changed:
                while not self._closed and not self._queue and (self._look_from is None or self._looking):
                    self._changed.wait()
                if self._closed:
                    return
                if self._queue:
                    job = self._queue.popleft()
                    self._busy += 1
                else:
                    # Look in the database for what the queue could not hold (one thread at a time).
                    look_from, self._look_from, self._looking = self._look_from, None, True
            if look_from is not None:
                self._look(look_from)
                continue
            try:
                with database.connection_context():
                    do_make_thumbnails(self.uploads_root, job)
            except Exception as error:  # a worker must survive any image, and a database outage
                log_failure(log, error, "thumbnails of attachment %s failed", job)
            finally:
                with self._changed:
                    self._busy -= 1
                    self._known.discard(job)
                    self._changed.notify_all()

    def _look(self, from_id: int) -> None:
        found: list[int] = []
        try:
            with database.connection_context():
                found = pending_thumbnail_ids(from_id, self.queue_size)
        except Exception as error:
            log_failure(log, error, "looking for pending thumbnails failed")
        with self._changed:
            self._looking = False
            room = max(0, self.queue_size - len(self._queue))  # jobs may have come in meanwhile
            new = [attachment_id for attachment_id in found if attachment_id not in self._known]
            self._queue.extend(new[:room])
            self._known.update(new[:room])
            if len(new) > room:
                self._look_later(new[room])  # the first one the queue had no room for
            elif len(found) == self.queue_size:
                self._look_later(found[-1] + 1)  # more may wait beyond this batch
            self._changed.notify_all()
