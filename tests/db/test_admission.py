"""Turns for worker threads (lib/admission.py): one runs at a time, waiters go in turn, a slow
holder does not hold the others up for longer than the patience, and giving the turn up for a
wait on another thread lets the others in."""

import threading
import time

from chat_appliance.db.admission import Turns


def run_in_thread(target):
    thread = threading.Thread(target=target)
    thread.start()
    return thread


def test_one_holder_at_a_time():
    turns = Turns(patience=5.0)
    inside, most, lock = [0], [0], threading.Lock()

    def work():
        for _ in range(50):
            turns.take()
            try:
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.0002)  # lets go of the GIL, as SQLite's driver does
                with lock:
                    inside[0] -= 1
            finally:
                turns.give_back()

    threads = [run_in_thread(work) for _ in range(8)]
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert not turns.holding()


def test_a_slow_holder_lets_the_next_go_after_the_patience():
    turns = Turns(patience=0.05)
    holding, release = threading.Event(), threading.Event()

    took = {}

    def slow():
        turns.take()
        took["at"] = time.monotonic()
        holding.set()
        release.wait(5)
        turns.give_back()

    slow_thread = run_in_thread(slow)
    holding.wait(5)
    went = {}

    def waiter():
        turns.take()
        went["at"] = time.monotonic()
        went["held"] = turns.holding()
        turns.give_back()

    waiter_thread = run_in_thread(waiter)
    waiter_thread.join(5)
    # Once the holder is known to be slow, later takers do not wait at all.
    started = time.monotonic()
    turns.take()
    # Waiting would mean waiting for the holder, who holds until release (5 s): a bound far
    # below that and far above a loaded machine's scheduling delays.
    assert time.monotonic() - started < 2
    assert not turns.holding()
    turns.give_back()  # holds nothing: a no-op
    release.set()
    slow_thread.join(5)
    # It went ahead beside the slow holder, without the turn, about the patience after the holder
    # took it (counted from then: on a loaded machine the waiter's thread may start after that).
    assert 0.04 <= went["at"] - took["at"] < 2
    assert went["held"] is False
    # The slow holder's give_back still frees the turn for later takers.
    turns.take()
    assert turns.holding()
    turns.give_back()


def test_waiting_on_others_gives_the_turn_up_and_takes_it_back():
    turns = Turns(patience=5.0)
    turns.take()
    order = []

    def other():
        turns.take()
        order.append("other ran")
        turns.give_back()

    thread = run_in_thread(other)
    time.sleep(0.05)
    assert order == []  # still waiting: this thread holds the turn
    with turns.waiting_on_others():
        assert not turns.holding()
        thread.join(5)
    assert order == ["other ran"]
    assert turns.holding()
    turns.give_back()


def test_threads_without_a_turn_are_not_affected():
    turns = Turns(patience=5.0)
    turns.take()
    done = []

    def untouched():
        with turns.waiting_on_others():  # holds no turn: nothing to give up or take back
            done.append(turns.holding())

    thread = run_in_thread(untouched)
    thread.join(5)
    turns.give_back()
    assert done == [False]


def test_serve_takes_turns_on_sqlite_only(app):
    """On SQLite queries are in-process and workers take turns; on PostgreSQL every query waits
    on the network, and a turn held through those waits would hold every request up."""
    from chat_appliance.web.context import EXTENSION
    from chat_appliance.server.asgi import ChatApplianceASGI
    from chat_appliance.db.admission import turns

    server = ChatApplianceASGI(app, 2)
    try:
        on_sqlite = app.extensions[EXTENSION].runtime.backend.NAME == "sqlite"
        assert server.wsgi.turns is (turns if on_sqlite else None)
    finally:
        server.executor.shutdown()
