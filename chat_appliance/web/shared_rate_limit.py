"""Rate limits counted in PostgreSQL, for shards (several `serve --shard-id` processes).

The same rules and answers as web/rate_limit.py's in-memory RateLimiter, with the same methods,
but the token buckets and the failed-login windows are rows (tables of migration 114), so a
client's budget is one budget whichever shard answers it: three shards do not make a limit three
times higher. Only shards use it; a single process keeps counting in memory, with no database
round trip per request.

Times are the database server's clock (clock_timestamp()), the one clock every shard shares.
Each check is one short transaction on a connection of the limiter's own (outside the request's
pool): the buckets of a request are locked with SELECT ... FOR UPDATE, so two shards taking the
last token at once cannot both have it.

A long poll only reports its user's budget (consume=False, never refused); it answers from the
last status this shard saw for that key, without asking the database: polls come back without
pause and wait on the event loop, which must not wait on the database.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from chat_appliance.web.rate_limit import Status

# Prune rows that no longer limit anyone every this many checks.
_PRUNE_EVERY = 1000
# Connections kept for the checks (more are opened while that many are busy, then closed).
_KEEP_CONNECTIONS = 4


class SharedRateLimiter:
    """RateLimiter's interface (hit, failures_status, record_failure, clear), counted in
    PostgreSQL."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._checks = 0
        self._last: dict[Any, tuple[bool, list[Status]]] = {}

    # --- connections ------------------------------------------------------------------------

    def _run(self, work: Callable[[Any], Any]) -> Any:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
            self._checks += 1
            prune = self._checks % _PRUNE_EVERY == 0
        if conn is None or conn.closed:
            conn = self._connect()
            conn.autocommit = False
        try:
            with conn, conn.cursor() as cursor:
                result = work(cursor)
                if prune:
                    cursor.execute("DELETE FROM rate_limit_bucket WHERE updated + seconds"
                                   " < extract(epoch FROM clock_timestamp())")
                    cursor.execute("DELETE FROM rate_limit_failure WHERE at + seconds"
                                   " < extract(epoch FROM clock_timestamp())")
        except Exception:
            conn.close()
            raise
        with self._lock:
            if len(self._idle) < _KEEP_CONNECTIONS:
                self._idle.append(conn)
                conn = None
        if conn is not None:
            conn.close()
        return result

    def clear(self) -> None:
        """Close the limiter's connections (the counts stay in the database, shared)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._last.clear()
        for conn in idle:
            conn.close()

    # --- token buckets ----------------------------------------------------------------------

    @staticmethod
    def _key(domain, key, seconds, limit):
        return f"{domain}|{key}|{seconds}|{limit}"

    def hit(self, domain: str, key: Any, rules: list[tuple[int, int]], *, consume: bool = True) -> Any:
        """As RateLimiter.hit: take one token from every rule's bucket for `key` if all have one."""
        memo = (domain, key, tuple(rules))
        if not consume:
            last = self._last.get(memo)
            if last is not None:
                return True, last[1]
            return True, [Status(limit=limit, remaining=limit, reset=0.0, retry_after=0.0) for _s, limit in rules]
        names = [self._key(domain, key, seconds, limit) for seconds, limit in rules]

        def work(cursor):
            cursor.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
            (now,) = cursor.fetchone()
            for name, (seconds, limit) in zip(names, rules):
                cursor.execute("INSERT INTO rate_limit_bucket (key, tokens, updated, seconds) VALUES (%s, %s, %s, %s)"
                               " ON CONFLICT (key) DO NOTHING", (name, float(limit), now, seconds))
            cursor.execute("SELECT key, tokens, updated FROM rate_limit_bucket WHERE key = ANY(%s) ORDER BY key"
                           " FOR UPDATE", (names,))
            rows = {name: (tokens, updated) for name, tokens, updated in cursor.fetchall()}
            buckets = []
            for name, (seconds, limit) in zip(names, rules):
                tokens, updated = rows[name]
                tokens = min(float(limit), tokens + max(0.0, now - updated) * limit / seconds)
                buckets.append([name, tokens, seconds, limit])
            allowed = all(bucket[1] >= 1 for bucket in buckets)
            if allowed:
                for bucket in buckets:
                    bucket[1] -= 1
            for name, tokens, _seconds, _limit in buckets:
                cursor.execute("UPDATE rate_limit_bucket SET tokens = %s, updated = %s WHERE key = %s",
                               (tokens, now, name))
            statuses = []
            for _name, tokens, seconds, limit in buckets:
                rate = limit / seconds
                statuses.append(Status(limit=limit, remaining=int(tokens + 1e-9), reset=now + (limit - tokens) / rate,
                                       retry_after=0.0 if tokens >= 1 else (1 - tokens) / rate))
            return allowed, statuses

        result = self._run(work)
        self._last[memo] = result
        return result

    # --- failed-login windows ---------------------------------------------------------------

    def failures_status(self, domain: str, key: Any, rules: list[tuple[int, int]]) -> list[Status]:
        """As RateLimiter.failures_status, over every shard's failures."""
        def work(cursor):
            cursor.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
            (now,) = cursor.fetchone()
            statuses = []
            for seconds, limit in rules:
                cursor.execute("SELECT count(*), min(at) FROM rate_limit_failure WHERE key = %s AND at > %s",
                               (self._key(domain, key, seconds, limit), now - seconds))
                count, oldest = cursor.fetchone()
                retry_after = oldest + seconds - now if count >= limit else 0.0
                reset = now + (oldest + seconds - now if count else 0.0)
                statuses.append(Status(limit=limit, remaining=max(0, limit - count), reset=reset,
                                       retry_after=retry_after))
            return statuses

        return self._run(work)

    def record_failure(self, domain: str, key: Any, rules: list[tuple[int, int]]) -> None:
        """Count one failure of `key` in every rule's window."""
        def work(cursor):
            for seconds, limit in rules:
                cursor.execute("INSERT INTO rate_limit_failure (key, at, seconds)"
                               " VALUES (%s, extract(epoch FROM clock_timestamp()), %s)",
                               (self._key(domain, key, seconds, limit), seconds))

        self._run(work)
