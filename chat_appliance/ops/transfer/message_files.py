"""An export's files, read safely, and its message files read and checked one at a time, in
helper processes when the machine has cores to spare.

The message files are most of an export (a file of 1,000 messages to a big organization holds a
quarter of a million per-user rows), and an import reads each twice: once to check the whole
export before anything is written, once to write it. Parsing, checking and turning the per-user
rows into what the database stores is work per file that needs nothing of the database, so it
runs in separate processes (a process each, not threads: it is Python work that holds the
interpreter), while the importing process writes the file before. The helpers import only this
module and ``layout``: they start in the time Python takes.

Every result is that of one file, in file order, so problems are reported as a single process
would report them.
"""

import json
import multiprocessing
import os
import stat
from array import array
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from chat_appliance.ops.transfer import layout

# Below this many message files an import reads them itself: a helper's start (about a tenth of
# a second) would cost more than it saves.
HELPERS_FROM_FILES = 8

# A helper holds one parsed message file and what it makes of it: measured at about 8 bytes of
# resident memory per byte of the file (48 MiB for a file of 6 MB, 150 MiB for one of 21 MB).
HELPER_BYTES_PER_FILE_BYTE = 8
# The memory an import gives its helpers when it picks their number itself. Within it, an export
# whose messages have a few dozen recipients each (about 6 MB a file) gets two helpers; one of a
# quarter of a million per-user rows a file (21 MB) gets none, and the import of a million such
# messages stays within the 400 MiB it fits in alone.
HELPER_MEMORY = 128 * 2**20


class ArchiveError(Exception):
    """The archive cannot be imported; the message says why (nothing has been written)."""


# An export is read from regular files only, every component of their path below the export
# folder a real directory: a symbolic link in an export folder once copied another instance's
# secret_key into the new instance's uploads, where anyone could download it.
def regular_file(folder: Any, relative: Any) -> Optional[Path]:
    """`folder / relative` if it is a regular file reached without following any link below
    `folder`; None if it does not exist; ArchiveError if a link or a special file is in the way."""
    path = Path(folder)
    parts = Path(relative).parts
    for index, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        if stat.S_ISLNK(mode):
            raise ArchiveError(f"{Path(*parts[:index + 1])} in the export is a symbolic link: an export holds "
                               "regular files only, and links are never followed.")
        last = index == len(parts) - 1
        if last and not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                return None
            raise ArchiveError(f"{relative} in the export is not a regular file.")
        if not last and not stat.S_ISDIR(mode):
            return None
    return path


def open_regular(path: Any) -> Any:
    """Open a file for reading without following a link at its last component."""
    return os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb")


def read_json(folder: Any, relative: Any, expected_type: type, problems: list[str], *, required: bool = True,
              default: Any = None) -> Any:
    """The JSON document at `folder / relative`, or `default` with the problem added to `problems`."""
    path = regular_file(folder, relative)
    if path is None:
        if required:
            problems.append(f"{relative} is missing")
        return default
    # The standard library's parser, not orjson: orjson parses a 21 MB message file 1.9x faster,
    # but its parse of one such file peaked at 300 MB of allocations against json's 92 MB, and took
    # a million-message import's peak RSS from 368 to 403 MiB, past its 400 MiB budget.
    try:
        with open_regular(path) as handle:
            data = json.loads(handle.read().decode(), parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as error:
        problems.append(f"{relative} is not valid JSON ({error})")
        return default
    except RecursionError:
        # json's decoder recurses once per level: a document nested deeper than the
        # interpreter's limit would otherwise end the import with a traceback.
        problems.append(f"{relative} is nested too deeply to be an export")
        return default
    if not isinstance(data, expected_type):
        problems.append(f"{relative} does not hold a JSON {expected_type.__name__}")
        return default
    return data


def _no_constant(name: str) -> Any:
    """json reads NaN and the infinities, which are not JSON and which no export holds: refused
    here, they would otherwise reach the checks as floats."""
    raise ValueError(f"{name} is not a JSON value")


def rows_with(table: str, rows: list[Any], fields: tuple[str, ...], problems: list[str]) -> list[dict[str, Any]]:
    """Rows that are objects with these fields; a problem for each that is not."""
    # One C-level key test per row first (a message file holds a quarter of a million rows);
    # the row-by-row pass below only when some row fails it, to name the problems.
    wanted = frozenset(fields)
    good = [row for row in rows if type(row) is dict and row.keys() >= wanted]
    if len(good) == len(rows):
        return good
    good = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or any(field not in row for field in fields):
            missing = [f for f in fields if not isinstance(row, dict) or f not in row]
            problems.append(f"{table}[{index}] lacks {', '.join(missing) or 'an object'}")
        else:
            good.append(row)
    return good


class MessageFiles:
    """Reads and checks message files against the export's users and recipients. `plan`, once
    the organization's rows are written, says how per-user rows are stored (prepare)."""

    def __init__(self, folder: Any, all_user_ids: set[int], recipient_by_id: dict[int, dict[str, Any]]) -> None:
        self.folder = folder
        self.all_user_ids = all_user_ids
        self.recipient_by_id = recipient_by_id
        self.plan: Optional[dict[str, Any]] = None

    def read(self, name: str, problems: list[str]) -> Optional[tuple[list[Any], list[Any]]]:
        """(messages, usermessages) of one message file; None, with the problem noted, if unusable."""
        data = read_json(self.folder, name, dict, problems) or {}
        messages, usermessages = data.get("zerver_message"), data.get("zerver_usermessage")
        if not isinstance(messages, list) or not isinstance(usermessages, list):
            problems.append(f"{name} lacks zerver_message or zerver_usermessage")
            return None
        return messages, usermessages

    def check(self, messages: list[Any], usermessages: list[Any],
              problems: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Check one file's rows; returns those that are objects with their fields. A file's
        usermessage rows belong to its own messages (both Zulip and this server write them so),
        which lets a file be checked, and its rows deduplicated, without the others."""
        messages = rows_with("zerver_message", messages, ("id", "sender", "recipient", "content"), problems)
        in_file = set()
        for m in messages:
            if not isinstance(m["id"], int) or isinstance(m["id"], bool):
                problems.append(f"message {m['id']!r} has an id that is not an integer")
                continue
            if m["id"] in in_file:
                problems.append(f"message {m['id']} appears twice")
            in_file.add(m["id"])
            if m["sender"] not in self.all_user_ids:
                problems.append(f"message {m['id']} has missing sender {m['sender']}")
            if m["recipient"] not in self.recipient_by_id:
                problems.append(f"message {m['id']} has missing recipient {m['recipient']}")
            if "date_sent" not in m and "pub_date" not in m:
                problems.append(f"message {m['id']} has no date_sent")
        usermessages = rows_with("zerver_usermessage", usermessages, ("user_profile", "message"), problems)
        users = self.all_user_ids
        # The rows the checks below would name, found by one comprehension: most files have none.
        for um in [um for um in usermessages if um["message"] not in in_file or um["user_profile"] not in users
                   or type(um.get("flags_mask", 0)) is not int]:
            if um["message"] not in in_file or um["user_profile"] not in users:
                problems.append(f"usermessage of message {um['message']} / user {um['user_profile']} "
                                "names a missing message (in its file) or user")
            elif not isinstance(um.get("flags_mask", 0), int):
                problems.append(f"usermessage of message {um['message']} has a non-integer flags_mask")
        return messages, usermessages

    def survey(self, name: str) -> tuple[Optional[tuple[array, list[tuple[int, int]], int]], list[str]]:
        """For the check of the whole export: one file's message ids, the (recipient, sender)
        pairs of its direct messages in order, and its message count; with its problems."""
        problems: list[str] = []
        chunk = self.read(name, problems)
        if chunk is None:
            return None, problems
        messages, _ = self.check(*chunk, problems)
        ids, pairs = array("q"), []
        for m in messages:
            if not isinstance(m["id"], int):
                continue
            ids.append(m["id"])
            recipient = self.recipient_by_id.get(m["recipient"])
            if recipient is not None and recipient["type"] != layout.RECIPIENT_STREAM:
                pairs.append((m["recipient"], m["sender"]))
        return (ids, pairs, len(messages)), problems

    def prepare(self, name: str) -> tuple[Optional[tuple[list[dict[str, Any]], array]], list[str]]:
        """For the write: one file's checked messages, in id order, and its per-user rows as
        stored, flattened (message, user, flags, message, user, flags, ...); with its problems
        (the file is checked again: it may have changed since the check)."""
        assert self.plan is not None
        problems: list[str] = []
        chunk = self.read(name, problems)
        if chunk is None:
            return None, problems
        messages, usermessages = self.check(*chunk, problems)
        if problems:
            return None, problems
        messages.sort(key=lambda m: m["id"])
        return (messages, self.user_rows(messages, usermessages)), problems

    def user_rows(self, messages: list[dict[str, Any]], usermessages: list[dict[str, Any]],
                  grouped: bool = True) -> array:
        """The file's per-user rows as stored: each (message, user) once, for people imported,
        with this server's flag bits. An idle person's plain row of a channel message in their
        window, in a channel they are still in, is the row their catch-up adds: it is left out.
        Zulip and this server write a message's rows together: a repeated row is then found
        among its message's alone (`grouped`), where a set of every pair in the file cost tens
        of MiB; a file whose message's rows are apart is read again with that set."""
        assert self.plan is not None
        user_ids, idle_since, idle_channels = self.plan["user_ids"], self.plan["idle_since"], self.plan["idle_channels"]
        our_bits = self.plan["flag_bits"]
        bits_of_mask: dict[int, int] = {}
        stream_by_recipient = self.plan["stream_by_recipient"]
        stream_of = {m["id"]: stream_by_recipient.get(m["recipient"]) for m in messages} if idle_since else {}
        finished: set[Any] = set()
        current: Any = None  # the message whose rows come now
        seen: set[Any] = set()  # its users (not grouped: every (message, user) pair so far)
        flat = array("q")
        for um in usermessages:
            message, user = um["message"], um["user_profile"]
            if grouped:
                if message != current:
                    if message in finished:
                        return self.user_rows(messages, usermessages, grouped=False)
                    finished.add(current)
                    current, seen = message, set()
                key: Any = user
            else:
                key = (message, user)
            if key in seen or user not in user_ids:
                continue
            seen.add(key)
            mask = um.get("flags_mask")
            if mask is None:
                mask = sum(1 << layout.FLAG_ORDER.index(f) for f in um.get("flags", []) if f in layout.FLAG_ORDER)
            bits = bits_of_mask.get(mask)
            if bits is None:
                bits = bits_of_mask[mask] = layout.our_flag_bits(mask, our_bits)
            if not bits and user in idle_since and message > idle_since[user] \
                    and stream_of.get(message) in idle_channels.get(user, ()):
                continue
            flat.extend((message, user, bits))
        return flat


# --- helper processes --------------------------------------------------------------------------

_files: Optional[MessageFiles] = None  # a helper process's reader (set by _start)


def _start(files: MessageFiles) -> None:
    global _files
    _files = files


def _run(work: str, name: str) -> Any:
    """In a helper process: `_files.<work>(name)`."""
    assert _files is not None
    return getattr(_files, work)(name)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def helpers_for(paths: list[Path], budget: int = HELPER_MEMORY) -> int:
    """How many helpers read these message files by default: as many as there are cores, at
    most, and as the largest file's parse, once per helper, fits in `budget`. On two cores the
    importing process's own work (the database's) leaves a core to them only part of the time,
    and two helpers still made the import of 100,000 messages 10% faster than none."""
    if len(paths) < HELPERS_FROM_FILES or cores() < 2:
        return 0
    largest = max(path.stat().st_size for path in paths)
    return min(cores(), budget // max(1, largest * HELPER_BYTES_PER_FILE_BYTE))


def in_order(files: MessageFiles, work: str, names: list[str], helpers: int) -> Iterator[Any]:
    """`files.<work>(name)` for each name, in order: in `helpers` processes (at most one per
    core), at most `helpers` files ahead of what the caller has taken, when there are enough
    files and cores; here otherwise. Either way memory holds a few files' results, whatever the
    export's size."""
    available = cores()
    helpers = min(helpers, available)
    if helpers < 1 or available < 2 or len(names) < HELPERS_FROM_FILES:
        method: Callable[[str], Any] = getattr(files, work)
        yield from (method(name) for name in names)
        return
    # Spawned, not forked: the importing process may hold a database connection and threads.
    with ProcessPoolExecutor(max_workers=helpers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_start, initargs=(files,)) as pool:
        pending: deque[Any] = deque()
        for name in names:
            pending.append(pool.submit(_run, work, name))
            if len(pending) > helpers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
