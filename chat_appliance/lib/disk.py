"""A full disk, told apart from other failures, so that the operator is told what to fix.

Every send and upload answered `500 Internal server error` while `/health` said all was well.
Errors that mean "no space left" (the operating system's ENOSPC and EDQUOT, SQLite's "database or
disk is full", PostgreSQL's disk_full class 53100) answer 507 DISK_FULL with a message an
operator can act on. After one, /health probes the disk again (a small file written and synced
in the instance folder, at most once a second) rather than trusting the memory of it: space freed
is seen within a second, and a load balancer does not keep a working server out. It also reports
full while the instance folder's file system has almost no space left.
"""

from __future__ import annotations

import errno
import os
import time

DISK_FULL_MESSAGE = ("The server's disk is full: nothing was saved. An administrator must free space on the "
                     "server; try again later.")
# /health probes the disk while a disk-full error is this recent, and reports full whenever
# fewer bytes than LOW_SPACE_BYTES are free where the instance lives.
REMEMBER_SECONDS = 300
LOW_SPACE_BYTES = 16 * 1024 * 1024
# The probe writes this much (a few database pages: a send needs at least that), and its answer
# is reused for PROBE_SECONDS so that a monitor polling fast does not write all the time.
PROBE_BYTES = 64 * 1024
PROBE_SECONDS = 1.0
PROBE_NAME = ".disk-probe"

# Values only ever read or replaced whole (each a single dict operation, atomic), so the
# requests that note and read them need no lock.
_last_seen: dict[str, float | None] = {"at": None}
_last_probe: dict[str, tuple[float, bool] | None] = {"result": None}


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


def failed_write_status(error: BaseException | None) -> int:
    """The status of a request whose write failed after its view returned (a group commit's
    COMMIT): 507 for a full disk (noted for /health), else 500."""
    if is_disk_full(error):
        note_disk_full()
        return 507
    return 500


def note_disk_full() -> None:
    _last_seen["at"] = time.monotonic()
    _last_probe["result"] = None


def probe_writes(path: str | os.PathLike[str]) -> bool:
    """Whether PROBE_BYTES can be written and synced in `path` now (the file is removed)."""
    # A name per probe: two requests probing at once must not remove each other's file.
    target = os.path.join(path, f"{PROBE_NAME}-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        with open(target, "wb") as probe:
            probe.write(b"\0" * PROBE_BYTES)
            probe.flush()
            os.fsync(probe.fileno())
        return True
    except OSError as error:
        if is_disk_full(error):
            return False
        return True  # another failure (permissions, a read-only mount) is not a full disk
    finally:
        try:
            os.unlink(target)
        except OSError:
            pass


def disk_state(path: str | os.PathLike[str]) -> str:
    """"ok" or "full": full while a recent disk-full error is confirmed by a probe write, or
    while the file system holding `path` has less than LOW_SPACE_BYTES free."""
    at = _last_seen["at"]
    now = time.monotonic()
    if at is not None and now - at < REMEMBER_SECONDS:
        last = _last_probe["result"]
        if last is None or now - last[0] >= PROBE_SECONDS:
            last = _last_probe["result"] = (now, probe_writes(path))
        if not last[1]:
            return "full"
        _last_seen["at"] = None  # space is back: writes work again
    try:
        info = os.statvfs(path)
    except (OSError, AttributeError):
        return "ok"
    return "full" if info.f_bavail * info.f_frsize < LOW_SPACE_BYTES else "ok"


def reset() -> None:
    """Forget the last disk-full error (tests)."""
    _last_seen["at"] = None
    _last_probe["result"] = None
