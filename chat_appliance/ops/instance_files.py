"""The instance folder's protection: who may read it, and which command may change it.

Permissions: anyone else on the machine must read nothing of it. The database holds API keys and password hashes, the
folder a secret key, uploads and backups: the folder is 0700 and every file 0600. `chat-appliance`
sets its umask to 077 at start, so that everything it creates (SQLite's WAL and journal
included, which SQLite creates itself) gets these modes; `tighten` corrects an instance created
before, once, with a line in the log.

The lock. `serve` holds a shared fcntl lock on INSTANCE/serve.lock for its lifetime (several
servers may share an instance on PostgreSQL). The commands that must not run beside a server
(migrate-database, restore, import-zulip) take the lock exclusively and refuse while any server
holds it: copying a database that a server is writing loses the writes, or fails halfway. The
lock belongs to the open file: it goes away with the process however it ends, so a crashed
server never leaves a stale lock behind.
"""

import contextlib
import errno
import fcntl
import logging
import os
import stat
from pathlib import Path

LOCK_NAME = "serve.lock"
# The ACME account and the certificates with their keys (server/acme_client.py); backups hold it.
TLS_FOLDER = "tls"
UMASK = 0o077
FOLDER_MODE, FILE_MODE = 0o700, 0o600

log = logging.getLogger(__name__)


class InstanceBusy(Exception):
    """The instance is in use by a server (or a server by another command)."""


def restrict_new_files():
    """Files and folders this process creates are its owner's only."""
    os.umask(UMASK)


def make_instance_folder(instance):
    """Create the instance folder (and its parents) with mode 0700."""
    Path(instance).mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)


def tighten(instance):
    """Take group and other permissions away from the instance folder and everything in it (not
    following links); log one line when anything changed. Returns how many entries changed."""
    instance = Path(instance)
    changed = 0
    for folder, dirs, files in os.walk(instance):
        for name, mode in [(folder, FOLDER_MODE)] + [(os.path.join(folder, f), FILE_MODE) for f in files]:
            try:
                info = os.lstat(name)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
                continue
            try:
                os.chmod(name, stat.S_IMODE(info.st_mode) & mode)
                changed += 1
            except OSError as error:
                log.warning("could not restrict the permissions of %s: %s", name, error)
    if changed:
        log.warning("Restricted the permissions of %d files and folders in %s to their owner (0700 folders, "
                    "0600 files): they held API keys, password hashes or uploads readable by other accounts.",
                    changed, instance)
    return changed


def _open_lock(instance):
    return os.open(Path(instance) / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)


def hold_for_serving(instance):
    """The shared lock a server holds for its lifetime (keep the returned descriptor open)."""
    descriptor = _open_lock(instance)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as error:
        os.close(descriptor)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise InstanceBusy(f"Another command (migrate-database, restore or import-zulip) is working on {instance}: "
                               "wait until it has finished, then start serve.") from None
        raise
    return descriptor


@contextlib.contextmanager
def exclusively(instance, command):
    """Hold the instance for `command` (a command that must not run beside a server); raises
    InstanceBusy, with "stop serve first", while a server uses the folder."""
    instance = Path(instance)
    if not instance.is_dir():
        yield
        return
    descriptor = _open_lock(instance)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise InstanceBusy(f"A server (chat-appliance serve) is using {instance}: stop serve first, then run "
                                   f"{command} again. Nothing was changed.") from None
            raise
        yield
    finally:
        os.close(descriptor)
