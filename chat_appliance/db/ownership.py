"""Who owns a database: one `serve` per SQLite database, and on PostgreSQL either one plain
`serve` or any number of shards.

Two servers on one database without shards would each keep their own event queues: a message
sent through one never reaches the browsers of the other, and both write the instance's files.
So a server holds a lock on the database itself (not on the folder: two instance folders may
name the same database) for the whole life of its process:

- SQLite: an fcntl lock on the file DATABASE-lock beside the database, exclusive. The holder
  writes its pid and command into it, which the refusal quotes.
- PostgreSQL: an advisory lock, taken on a connection of its own: exclusive for a plain
  `serve`, shared for each `serve --shard-id`; its holders are named by their connection's
  application_name.

Either lock belongs to the process (its open file, its connection), so a server that dies,
however it dies, leaves no stale lock. migrate-database takes the same lock, exclusively, on the
database it copies from.
"""

from __future__ import annotations

import errno
import fcntl
import os
from dataclasses import dataclass
from typing import Any

from chat_appliance.db import backends

# The advisory lock's key: a constant that none of the other advisory locks uses (the writer
# lock's "chat", the leader's "chld", the shards' 0x5348...); this one spells "chsv" in ASCII.
ADVISORY_KEY = 0x63687376
LOCK_SUFFIX = "-lock"


class DatabaseBusy(Exception):
    """Another process owns the database; the message names it and says what to do."""


@dataclass
class Ownership:
    """A held lock; `release` gives it up (the end of the process does too)."""

    handle: Any

    def release(self) -> None:
        if isinstance(self.handle, int):
            os.close(self.handle)
        else:
            self.handle.close()


def lock_path(database_url: str) -> str:
    """The SQLite lock file of a sqlite:// DATABASE_URL."""
    return backends.backend_for(database_url).path_from_url(database_url) + LOCK_SUFFIX


def own_database(database_url: str, command: str, *, shard: bool = False) -> Ownership:
    """Take the database for `command` (e.g. "chat-appliance serve") for the life of the process,
    or raise DatabaseBusy naming the process that holds it. `shard`: one of several shards on
    PostgreSQL, which share the lock among themselves."""
    backend = backends.backend_for(database_url)
    if backend.NAME == "postgres":
        return _own_postgres(backend, database_url, command, shard)
    return _own_sqlite(database_url, command)


def _own_sqlite(database_url: str, command: str) -> Ownership:
    path = lock_path(database_url)
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as error:
        raise DatabaseBusy(f"Cannot open the lock file {path} of the database {database_url}: "
                           f"{error.strerror or error}") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        holder = os.read(descriptor, 200).decode("utf-8", "replace").strip() or "another process"
        os.close(descriptor)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            advice = ("stop serve first, or use the server it runs" if "serve" in holder
                      else "wait until it has finished")
            raise DatabaseBusy(f"The database {database_url} is in use by {holder}: {advice} (only one process at a "
                               "time may own a SQLite database).") from None
        raise
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"pid {os.getpid()} ({command})\n".encode(), 0)
    return Ownership(descriptor)


def _own_postgres(backend: Any, database_url: str, command: str, shard: bool) -> Ownership:
    conn = backend.autocommit_connection(database_url)
    kind = "shard" if shard else "plain"
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT set_config('application_name', %s, false)",
                           (f"pid {os.getpid()} ({command}, {kind})"[:63],))
            take = "pg_try_advisory_lock_shared" if shard else "pg_try_advisory_lock"
            cursor.execute(f"SELECT {take}(%s)", (ADVISORY_KEY,))
            if cursor.fetchone()[0]:
                return Ownership(conn)
            cursor.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = %s "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (ADVISORY_KEY,))
            holders = sorted({row[0] or "another process" for row in cursor.fetchall()}) or ["another process"]
    except BaseException:
        conn.close()
        raise
    conn.close()
    who = ", ".join(holders)
    if shard:
        advice = ("A shard cannot join a database that a server without --shard-id serves: stop it, then start "
                  "every server with its own --shard-id (docs/scaling.md).")
    else:
        advice = ("Only one server without --shard-id may serve a database: stop it first, or run several "
                  "servers as shards, each with its own --shard-id (docs/scaling.md).")
    raise DatabaseBusy(f"The database is in use by {who}. {advice}")
