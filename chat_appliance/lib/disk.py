"""A full disk, told apart from other failures, so that the operator is told what to fix.

Every send and upload answered `500 Internal server error` while `/health` said all was well.
Errors that mean "no space left" (the operating system's ENOSPC and EDQUOT, SQLite's "database or
disk is full", PostgreSQL's disk_full class 53100) answer 507 DISK_FULL with a message an
operator can act on, and /health reports the disk as full for a while after the last one, or
while the instance folder's file system has almost no space left.
"""

from __future__ import annotations

import errno
import os
import time

DISK_FULL_MESSAGE = ("The server's disk is full: nothing was saved. An administrator must free space on the "
                     "server; try again later.")
# /health reports "full" this long after the last disk-full error, and whenever fewer bytes than
# this are free where the instance lives.
REMEMBER_SECONDS = 300
LOW_SPACE_BYTES = 16 * 1024 * 1024

# One value, only ever read or replaced whole (each a single dict operation, atomic), so the
# requests that note and read it need no lock.
_last_seen: dict[str, float | None] = {"at": None}


def is_disk_full(error: BaseException | None) -> bool:
    """Whether an exception (or one it was raised from) means the disk or quota is full."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if getattr(error, "pgcode", None) == "53100":  # PostgreSQL's disk_full
            return True
        text = str(error).lower()
        if "database or disk is full" in text or "no space left on device" in text:
            return True
        error = error.__cause__ or error.__context__ or getattr(error, "orig", None)
    return False


def note_disk_full() -> None:
    _last_seen["at"] = time.monotonic()


def disk_state(path: str | os.PathLike[str]) -> str:
    """"ok" or "full": full if a disk-full error happened in the last REMEMBER_SECONDS or the file
    system holding `path` has less than LOW_SPACE_BYTES free."""
    at = _last_seen["at"]
    if at is not None and time.monotonic() - at < REMEMBER_SECONDS:
        return "full"
    try:
        info = os.statvfs(path)
    except (OSError, AttributeError):
        return "ok"
    return "full" if info.f_bavail * info.f_frsize < LOW_SPACE_BYTES else "ok"


def reset() -> None:
    """Forget the last disk-full error (tests)."""
    _last_seen["at"] = None
