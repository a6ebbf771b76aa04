"""After a burst of concurrent requests the database pool holds a connection per worker that
took part; `serve` closes those no request took for a sweep, all but a few, so that
memory falls back after load."""

import asyncio
import platform
import sys
import threading

import pytest
import uvicorn

from chat_appliance.server import asgi
from chat_appliance.server.asgi import POOL_KEEP, release_unused_memory
from chat_appliance.web.context import EXTENSION

from ..support.helpers import ok


def burst(db, size):
    """`size` threads holding a pooled connection at the same moment, then giving it back."""
    together = threading.Barrier(size)

    def hold():
        with db.connection_context():
            db.execute_sql("SELECT 1").fetchall()
            together.wait(timeout=30)

    threads = [threading.Thread(target=hold) for _ in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_connections_unused_for_a_sweep_are_closed_beyond_the_few_kept(app, org):
    runtime = app.extensions[EXTENSION].runtime
    db = runtime.database
    burst(db, POOL_KEEP + 6)
    pooled = len(db._connections)
    assert pooled >= POOL_KEEP + 6
    # The first sweep only marks: any connection could have been taken just before it.
    assert release_unused_memory(runtime) == 0
    # One used meanwhile stays, as do the others up to POOL_KEEP.
    with db.connection_context():
        db.execute_sql("SELECT 1").fetchall()
    assert release_unused_memory(runtime) == pooled - POOL_KEEP
    assert len(db._connections) == POOL_KEEP
    # Nothing more to close; requests go on with the connections kept, and new ones as needed.
    assert release_unused_memory(runtime) == 0
    ok(org.client(org.hamlet).get("/users/me"))
    burst(db, POOL_KEEP + 2)
    ok(org.client(org.hamlet).get("/users/me"))


def test_a_steady_load_keeps_its_connections(app, org):
    runtime = app.extensions[EXTENSION].runtime
    db = runtime.database
    burst(db, POOL_KEEP + 3)
    release_unused_memory(runtime)
    pooled = len(db._connections)
    burst(db, POOL_KEEP + 3)  # every connection taken again before the next sweep
    assert release_unused_memory(runtime) == 0
    assert len(db._connections) == pooled


def test_a_failing_sweep_is_logged_and_the_server_loop_goes_on(app, monkeypatch, caplog):
    state = app.extensions[EXTENSION]
    server = asgi.Server(uvicorn.Config(app), state.queues, runtime=state.runtime)
    server.last_sweep -= asgi.POOL_SWEEP_SECONDS

    def broken(keep):
        raise RuntimeError("the pool broke")

    monkeypatch.setattr(state.runtime, "close_unused_connections", broken)
    assert asyncio.run(server.on_tick(1)) is False  # not told to exit
    assert "closing unused database connections failed" in caplog.text


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt and malloc_trim are glibc's")
def test_the_c_library_is_found_without_looking_it_up_by_name():
    """The arena cap and the heap trim above call glibc through the symbols the interpreter has
    loaded (no `ldconfig` run at start-up): are both there?"""
    assert asgi._LIBC is not None
    assert hasattr(asgi._LIBC, "mallopt") and hasattr(asgi._LIBC, "malloc_trim")
