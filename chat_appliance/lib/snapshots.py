"""Reads kept while the database, or its configuration, is unchanged.

A trivial authenticated request (GET /users/me) read its account, its newest message id and its
profile data: three statements, each of which the SQLite driver runs with the interpreter's
lock released. Under concurrent load the event loop's thread takes the lock at each release, and
the worker waits to get it back: those hand-overs, not the lookups, were most of the request's
time under load. Here a read is kept with a number `Runtime.versions` gave
before it, and served again while that number has not moved: one statement on an idle connection
per request instead, and nothing kept at all where the engine cannot tell (PostgreSQL; then every
read goes to the database, as before).

Two numbers, read together (backends/sqlite.Versions):
- the data version moves with every transaction committed by any connection of any process.
  Reads that depend on messages (GET /users/me's newest message id) are kept with it.
- the configuration generation moves with every transaction that changes a row of the tables
  migration 117 puts triggers on (accounts, the organization, channels, subscriptions, groups,
  mutes), by any connection of any process. Every send moves the data version, so a send's reads
  of its account, channel, subscription, permission groups and mutes are kept with this one
  instead: a send writes none of those tables (a channel's first message aside).
Either way a kept read is exactly what reading again would return. Nothing is kept or served while
the thread's own connection has a transaction open: reads there see its writes before they are
committed. Each kind is always kept with the same one of the two numbers.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

from chat_appliance.db import runtime
from chat_appliance.db.runtime import SNAPSHOT_SECONDS
from chat_appliance.models import database


def snapshot_versions() -> tuple[int | None, int | None]:
    """(data version, configuration generation) now, to read rows at; None for each that kept
    reads must not use (a transaction is open on this thread, or the engine cannot tell)."""
    if database.in_transaction():
        return None, None
    return runtime.current().versions()


def read_through(kind: str, key: Hashable, version: int | None, read: Callable[[], Any]) -> Any:
    """What `read()` returns, kept under (kind, key) and served again while the number `version`
    came from has not moved. `version` must come from snapshot_versions() before the caller read or
    wrote anything it depends on; None reads every time, as does a transaction open on this thread
    (it may have written since). What is kept is shared by every request: keep rows, tuples and
    frozensets, and make objects of them per request."""
    if version is None or database.in_transaction():
        return read()
    snapshots = runtime.current().snapshots
    entry = snapshots.get((kind, key))
    if entry is not None and entry[0] == version:
        return entry[1]
    value = read()
    snapshots.put((kind, key), (version, value), SNAPSHOT_SECONDS)
    return value
