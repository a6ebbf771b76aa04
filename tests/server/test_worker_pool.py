"""The thread pool behind the event loop (server/thread_pool.StackExecutor)."""

import threading
import time

import pytest

from chat_appliance.server.thread_pool import StackExecutor


def test_runs_jobs_and_returns_results_and_errors():
    pool = StackExecutor(4)
    try:
        assert [pool.submit(pow, n, 2).result(5) for n in range(10)] == [n * n for n in range(10)]
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(5)
    finally:
        pool.shutdown()


def test_the_most_recently_idle_worker_takes_the_next_job():
    pool = StackExecutor(8)
    try:
        # Make several workers at once: each job waits until all have started.
        barrier = threading.Barrier(6)
        names = [pool.submit(lambda: (barrier.wait(5), threading.current_thread().name)[1]) for _ in range(6)]
        started = {future.result(5) for future in names}
        assert len(started) == 6
        time.sleep(0.05)  # all idle again
        # One job at a time now: always the same (warm) worker.
        serving = {pool.submit(lambda: threading.current_thread().name).result(5) for _ in range(20)}
        assert len(serving) == 1
    finally:
        pool.shutdown()


def test_never_more_threads_than_asked_and_queued_jobs_all_run():
    pool = StackExecutor(2)
    try:
        running, most, lock = [0], [0], threading.Lock()

        def job(n):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.005)
            with lock:
                running[0] -= 1
            return n

        futures = [pool.submit(job, n) for n in range(20)]
        assert [future.result(5) for future in futures] == list(range(20))
        assert most[0] == 2
    finally:
        pool.shutdown()


def test_shutdown_ends_idle_workers_and_refuses_new_jobs():
    pool = StackExecutor(3)
    pool.submit(time.sleep, 0.01).result(5)
    pool.shutdown(wait=True)
    assert not any(thread.is_alive() for thread in pool._threads)
    with pytest.raises(RuntimeError):
        pool.submit(print)
