"""A database outage, answered as one: 503 DATABASE_UNAVAILABLE with Retry-After, logged once.

While the database was down, every request answered `500 Internal server error` and logged a
traceback (over a thousand in ten seconds) although /health said DATABASE_UNAVAILABLE. An error
that means the database cannot be reached (each backend's `unavailable`) now answers 503 with a
code a client can wait on and a Retry-After; the log says when the outage starts and when the
database answers again, once each, instead of a line per request.
"""

from __future__ import annotations

import logging
import time

from chat_appliance.db.connection import backend

log = logging.getLogger("chat_appliance")

DATABASE_UNAVAILABLE_MESSAGE = "The server's database is unavailable; try again later."
RETRY_AFTER_SECONDS = 5
# While an outage lasts, requests probe the database at most this often to see it end.
PROBE_SECONDS = 1.0

# "since" (monotonic) is present only during an outage, "probed" is the last probe's time. Only
# setdefault and pop, each a single atomic dict operation, change them: the requests that note
# an outage and its end need no lock, and exactly one of them logs each.
_state: dict[str, float] = {}


def note_unavailable(error: BaseException) -> None:
    """A request failed because the database cannot be reached: log it if the outage starts now."""
    now = time.monotonic()
    if _state.setdefault("since", now) == now:
        log.error("the database is unavailable: %s", _first_line(error))


def in_outage() -> bool:
    return "since" in _state


def should_probe() -> bool:
    """During an outage, whether this request should check if the database answers again (at
    most once per PROBE_SECONDS across all requests)."""
    if "since" not in _state:
        return False
    now = time.monotonic()
    last = _state.get("probed", 0.0)
    if now - last < PROBE_SECONDS:
        return False
    _state["probed"] = now
    return True


def note_available() -> None:
    """The database answered: log the end of an outage, if one was going on."""
    since = _state.pop("since", None)
    if since is not None:
        log.warning("the database is available again after %.0f s", time.monotonic() - since)


def log_failure(logger: logging.Logger, error: BaseException, message: str, *args: object) -> None:
    """A background job failed: during a database outage, the outage's one line (noted here),
    else the job's own line with its traceback."""
    if backend().unavailable(error):
        note_unavailable(error)
    else:
        logger.error(message, *args, exc_info=error)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def reset() -> None:
    """Forget any outage (tests)."""
    _state.clear()
