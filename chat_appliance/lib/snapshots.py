"""Reads kept while the database is unchanged.

A trivial authenticated request (GET /users/me) read its account, its newest message id and its
profile data: three statements, each of which the SQLite driver runs with the interpreter's
lock released. Under concurrent load the event loop's thread takes the lock at each release, and
the worker waits to get it back: those hand-overs, not the lookups, were most of the request's
time (BENCHMARKS.md, fourteenth round). Here a read is kept with the number
`Runtime.data_version` gave before it, and served again while that number has not moved: one
statement on an idle connection per request instead, and nothing kept at all where the engine
cannot tell (PostgreSQL; then every read goes to the database, as before).

The number moves with every transaction committed by any connection of any process, so a kept
read is exactly what reading again would return. Nothing is kept or served while the thread's own
connection has a transaction open: reads there see its writes before they are committed.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

from chat_appliance.db import runtime
from chat_appliance.db.runtime import SNAPSHOT_SECONDS
from chat_appliance.models import database


def snapshot_version() -> int | None:
    """The database's data version now, to read rows at; None when kept reads must not be used
    (a transaction is open on this thread, or the engine cannot tell)."""
    if database.in_transaction():
        return None
    return runtime.current().data_version()


def read_through(kind: str, key: Hashable, version: int | None, read: Callable[[], Any]) -> Any:
    """What `read()` returns, kept under (kind, key) and served again while the database's data
    version is still `version`. `version` must come from snapshot_version() before the caller
    read or wrote anything it depends on; None reads every time."""
    if version is None:
        return read()
    snapshots = runtime.current().snapshots
    entry = snapshots.get((kind, key))
    if entry is not None and entry[0] == version:
        return entry[1]
    value = read()
    snapshots.put((kind, key), (version, value), SNAPSHOT_SECONDS)
    return value
