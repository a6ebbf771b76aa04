"""Read an export in Zulip's layout (layout.py) into a new, empty instance.

Sources: this server's exports and a Zulip server's `manage.py export` (a folder, or the .tar.gz
Zulip writes). The whole archive is checked first, every file and every reference between rows;
only then is anything written. The rows go in with their exported ids; the organization keeps
its id, so upload and emoji URLs inside messages stay valid.

The message files (the bulk of an export: a message per row, and a row per recipient of each)
are streamed, in both passes: the check reads them one at a time and keeps only the message ids
(8 bytes each) and the direct conversations; the write reads each again, writes its messages and
per-user rows in bulk and forgets them. So memory is that of the realm tables and one message
file, whatever the number of messages. Everything is still written in one transaction, which
keeps the all-or-nothing promise on SQLite and PostgreSQL alike with nothing to clean up: the
rows written so far live in the database (SQLite spills them from its page cache to the WAL,
which grows to about the database's size until the commit), not in Python. Writing into a
temporary database and moving it in at the end would have served SQLite only.

Decisions where Zulip's format and this server differ:
- One-to-one conversations (Zulip's personal recipients) and group conversations (huddles)
  both become direct-message groups; a group's recipient keeps its id.
- Cross-realm system bots keep their ids as this organization's system bots.
- Passwords and API keys are not in exports: every account gets a new API key and no password.
- Anonymous groups used as settings become the setting's inline {direct_members, direct_subgroups}.
"""

import bisect
import json
import mimetypes
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from array import array
from itertools import islice
from pathlib import Path

from chat_appliance.lib.user_settings_defaults import STORAGE_KEY
from chat_appliance.markdown.sanitize import sanitize_html
from chat_appliance.config import load_config
from chat_appliance.db.connection import (backend, bulk_insert, init_database, load_flat_rows, migrate,
                                          write_transaction)
from chat_appliance.lib.groups import NOBODY_GROUP, ROLE_GROUP_NAME, SYSTEM_GROUPS
from chat_appliance.lib.message_permissions import REALM_MESSAGE_SETTING_DEFAULTS
from chat_appliance.lib.passwords import generate_api_key
from chat_appliance.lib.serializers import STREAM_GROUP_SETTINGS, USER_GROUP_SETTINGS
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS
from chat_appliance.models import (
    FLAG_BITS,
    RECIPIENT_DIRECT_MESSAGE_GROUP,
    RECIPIENT_STREAM,
    AlertWord,
    Attachment,
    AttachmentMessage,
    BaseModel,
    BotStorageData,
    ChannelFolder,
    CustomProfileField,
    CustomProfileFieldValue,
    DirectMessageGroup,
    DirectMessageGroupMember,
    GroupGroupMembership,
    Linkifier,
    Message,
    MutedUser,
    NavigationView,
    Reaction,
    Realm,
    RealmEmoji,
    RealmPlayground,
    Recipient,
    SavedSnippet,
    Stream,
    Subscription,
    UserGroup,
    UserGroupMembership,
    UserMessage,
    UserPresence,
    UserProfile,
    UserStatus,
    UserTopic,
    database,
)
from chat_appliance.models import EMAIL_VISIBLE_EVERYONE
from chat_appliance.lib.rendering import render_message
from chat_appliance.ops.instance_files import InstanceBusy, exclusively, make_instance_folder
from chat_appliance.ops.transfer import layout
from chat_appliance.ops.transfer.message_files import (ArchiveError, MessageFiles, helpers_for, in_order,
                                                       open_regular, read_json, regular_file, rows_with)


# Processes that read and check message files beside the import (message_files.in_order; the
# --helpers option). None: as many as the cores and the message files' size allow
# (message_files.helpers_for), since each holds a parsed file: about 150 MiB for one of a quarter
# of a million per-user rows, with which an import of a million messages would not fit in its
# 400 MiB.
HELPERS = None


def _major(version):
    match = re.match(r"(\d+)", str(version or ""))
    return int(match.group(1)) if match else None


def _stored_html(value) -> str:
    """HTML from an archive, through the renderer's allow-list: the archive is whoever made it,
    and its rendered_content, rendered_description and rendered_value reach every client as
    they are stored (a <script> or a javascript: link in them would run in the web client)."""
    return sanitize_html(value) if isinstance(value, str) and value else ""


def _int(value):
    return None if value is None else int(value)


class Archive:
    """An export read into memory and checked: realm tables, message files, attachments, file records."""
    def __init__(self, folder, given=None, helpers=HELPERS):
        """`given`: what the person named (a tarball unpacks into a temporary folder, whose name
        would tell them nothing); `helpers`: processes that read the message files (0: none;
        None: as many as the machine and the files' size allow)."""
        self.folder = Path(folder)
        self.given = given if given is not None else self.folder
        self.helpers = helpers
        self.problems = []

    # --- reading ------------------------------------------------------------------------------

    def has(self, relative):
        """Whether the export holds `relative` as a regular file (ArchiveError for a link)."""
        return regular_file(self.folder, relative) is not None

    def read_json(self, relative, expected_type, *, required=True, default=None):
        return read_json(self.folder, relative, expected_type, self.problems, required=required, default=default)

    def check_version(self):
        status = self.read_json("migration_status.json", dict, required=False)
        if status is None:
            if self.has("migration_status.json"):
                raise ArchiveError("migration_status.json is unreadable: " + "; ".join(self.problems))
            if not self.has("realm.json"):
                hint = (" It looks like a backup made by `chat-appliance backup`: restore it with "
                        "`chat-appliance restore`." if self.has("manifest.json") else "")
                raise ArchiveError(f"{self.given} is not an export in Zulip's layout: it has no realm.json "
                                   f"and no migration_status.json.{hint}")
            # Zulip wrote migration_status.json from version 10 on; an export without one comes
            # from an earlier Zulip, whose layout of the tables read here is the same.
            self.flavor, self.version = "zulip", "before 10.0"
            return
        if layout.FORMAT_KEY in status:
            version = status[layout.FORMAT_KEY]
            if version not in layout.SUPPORTED_FORMAT_VERSIONS:
                raise ArchiveError(
                    f"Unknown export format version {version!r}: this chat-appliance reads format version(s) "
                    f"{', '.join(map(str, sorted(layout.SUPPORTED_FORMAT_VERSIONS)))}. "
                    "Import it with the chat-appliance version that wrote it, or a newer one.")
            self.flavor = "chat-appliance"
        else:
            major = _major(status.get("zulip_version"))
            if major not in layout.SUPPORTED_ZULIP_MAJORS:
                raise ArchiveError(
                    f"Unknown export format: zulip_version {status.get('zulip_version')!r} in "
                    f"migration_status.json; this importer reads exports of Zulip "
                    f"{layout.SUPPORTED_ZULIP_MAJORS.start}.x to {layout.SUPPORTED_ZULIP_MAJORS.stop - 1}.x.")
            self.flavor = "zulip"
        self.version = status.get("zulip_version")

    def load(self):
        """Read and check everything; raise ArchiveError listing the problems found."""
        self.check_version()
        self.realm_data = self.read_json("realm.json", dict) or {}
        for table in layout.REQUIRED_REALM_TABLES:
            if not isinstance(self.realm_data.get(table), list):
                self.problems.append(f"realm.json has no {table} table")
        # Only the names here: the message files are read one at a time, by check_messages and
        # again by the Writer, so that an export's size never decides the memory an import needs.
        self.message_files = []
        while self.has(layout.MESSAGE_FILE_TEMPLATE.format(len(self.message_files) + 1)):
            self.message_files.append(layout.MESSAGE_FILE_TEMPLATE.format(len(self.message_files) + 1))
        if self.helpers is None:
            self.helpers = helpers_for([self.folder / name for name in self.message_files])
        self.attachments = (self.read_json("attachment.json", dict, required=False, default={})
                            .get("zerver_attachment", []))
        self.upload_records = self.read_json("uploads/records.json", list, required=False, default=[])
        self.emoji_records = self.read_json("emoji/records.json", list, required=False, default=[])
        if self.problems:
            raise ArchiveError(self.summary())
        self.check_references()
        if self.problems:
            raise ArchiveError(self.summary())
        return self

    def summary(self):
        shown = self.problems[:10]
        more = f" (and {len(self.problems) - 10} more)" if len(self.problems) > 10 else ""
        return "The export cannot be imported: " + "; ".join(shown) + more

    def table(self, name):
        rows = self.realm_data.get(name, [])
        return rows if isinstance(rows, list) else []

    # --- checking -----------------------------------------------------------------------------

    def rows_with(self, table, rows, *fields):
        """Rows that are objects with these fields; a problem for each that is not."""
        return rows_with(table, rows, fields, self.problems)

    def check_references(self):
        realms = self.rows_with("zerver_realm", self.table("zerver_realm"), "id", "name")
        if len(realms) != 1:
            self.problems.append(f"zerver_realm must hold exactly one organization, not {len(realms)}")
            return
        self.realm_row = realms[0]
        self.users = self.rows_with("zerver_userprofile", self.table("zerver_userprofile")
                                    + self.table("zerver_userprofile_mirrordummy"), "id", "full_name")
        self.crossrealm = self.rows_with("zerver_userprofile_crossrealm",
                                         self.table("zerver_userprofile_crossrealm"), "id", "email")
        user_ids = {u["id"] for u in self.users}
        all_user_ids = user_ids | {b["id"] for b in self.crossrealm}
        if len(user_ids) != len(self.users):
            self.problems.append("zerver_userprofile has repeated ids")
        self.streams = self.rows_with("zerver_stream", self.table("zerver_stream"), "id", "name")
        stream_ids = {s["id"] for s in self.streams}
        self.recipients = self.rows_with("zerver_recipient", self.table("zerver_recipient"), "id", "type", "type_id")
        self.recipient_by_id = {r["id"]: r for r in self.recipients}
        # Zulip renamed Huddle to DirectMessageGroup; accept the table under either name.
        self.huddles = self.rows_with("zerver_huddle", self.table("zerver_huddle")
                                      + self.table("zerver_directmessagegroup"), "id")
        huddle_ids = {h["id"] for h in self.huddles}
        for r in self.recipients:
            known = {layout.RECIPIENT_PERSONAL: all_user_ids, layout.RECIPIENT_STREAM: stream_ids,
                     layout.RECIPIENT_HUDDLE: huddle_ids}.get(r["type"])
            if known is None:
                self.problems.append(f"recipient {r['id']} has unknown type {r['type']!r}")
            elif r["type_id"] not in known and r["type"] != layout.RECIPIENT_PERSONAL:
                self.problems.append(f"recipient {r['id']} names missing {r['type_id']}")
        self.subscriptions = self.rows_with("zerver_subscription", self.table("zerver_subscription"),
                                            "id", "user_profile", "recipient")
        for sub in self.subscriptions:
            if sub["recipient"] not in self.recipient_by_id:
                self.problems.append(f"subscription {sub['id']} names missing recipient {sub['recipient']}")
            if sub["user_profile"] not in all_user_ids:
                self.problems.append(f"subscription {sub['id']} names missing user {sub['user_profile']}")
        self.all_user_ids = all_user_ids
        self.check_messages()
        self.reactions = self.rows_with("zerver_reaction", self.table("zerver_reaction"), "id", "user_profile",
                                        "message", "emoji_name", "emoji_code")
        for r in self.reactions:
            if not self.has_message(r["message"]) or r["user_profile"] not in all_user_ids:
                self.problems.append(f"reaction {r['id']} names a missing message or user")
        self.check_files(all_user_ids)
        self.check_field_types()

    # --- the message files, streamed -----------------------------------------------------------

    def check_messages(self):
        """The validation pass: read each message file, check it, and keep only what the import
        needs of it later: the message ids (8 bytes each, sorted, to check references from
        reactions and attachments) and the direct conversations' (recipient, sender) pairs."""
        ids = array("q")
        self.conversations = {}  # (archive recipient, sender) -> None, in order of first message
        self.message_count = 0
        self.files = MessageFiles(self.folder, self.all_user_ids, self.recipient_by_id)
        for surveyed, problems in in_order(self.files, "survey", self.message_files, self.helpers):
            self.problems.extend(problems)
            if surveyed is None:
                continue
            file_ids, pairs, count = surveyed
            ids.extend(file_ids)
            for pair in pairs:
                self.conversations.setdefault(pair, None)
            self.message_count += count
        # Both Zulip and this server write messages in id order: sort (through a list) only when not.
        if any(before > after for before, after in zip(ids, islice(ids, 1, None))):
            ids = array("q", sorted(ids))
        self.message_ids = ids
        for before, after in zip(ids, islice(ids, 1, None)):
            twice = f"message {after} appears twice"
            if before == after and twice not in self.problems:  # not again if within one file
                self.problems.append(twice)

    def has_message(self, message_id):
        """Whether the export holds a message of this id (after check_messages)."""
        at = bisect.bisect_left(self.message_ids, message_id) if isinstance(message_id, int) else -1
        return 0 <= at < len(self.message_ids) and self.message_ids[at] == message_id

    def message_chunks(self, plan):
        """Each message file's checked messages, in id order, and its per-user rows as stored
        (MessageFiles.prepare, by `plan`), one file at a time. A file is checked again as it is
        read, in case it changed since the validation pass: the import then ends with
        ArchiveError inside its transaction, which writes nothing."""
        self.files.plan = plan
        for name, (prepared, problems) in zip(self.message_files,
                                              in_order(self.files, "prepare", self.message_files, self.helpers)):
            self.problems.extend(problems)
            if self.problems or prepared is None:
                raise ArchiveError(self.summary() + f" ({name} changed during the import)")
            yield prepared

    def check_field_types(self):
        """Every organization and account field the import stores has the type the API would
        accept: a value of another type ("forever" as a time limit) would be stored as it is,
        and every request that reads it would then fail."""
        realm = self.realm_row
        self._check_type("zerver_realm", realm, REALM_FIELD_TYPES)
        self._check_type("zerver_realm", realm, {k: _setting_type(k, v) for k, v in REALM_MESSAGE_SETTING_DEFAULTS.items()
                                                 if not k.endswith("_group")})
        for user in self.users:
            self._check_type(f"zerver_userprofile {user['id']}", user, USER_FIELD_TYPES)
            self._check_type(f"zerver_userprofile {user['id']}", user,
                             {k: _setting_type(k, v) for k, v in USER_SETTING_DEFAULTS.items()})
        for stream in self.streams:
            self._check_type(f"zerver_stream {stream['id']}", stream, STREAM_FIELD_TYPES)
        for sub in self.subscriptions:
            self._check_type(f"zerver_subscription {sub.get('id')}", sub, SUBSCRIPTION_FIELD_TYPES)

    def _check_type(self, where, row, types):
        for key, accepted in types.items():
            value = row.get(key)
            if value is None or key not in row:
                continue
            if isinstance(value, bool) and bool not in accepted or not isinstance(value, accepted):
                names = " or ".join(t.__name__ for t in accepted)
                self.problems.append(f"{where}: {key} must be {names}, not {value!r}")
            elif isinstance(value, int) and not isinstance(value, bool) and key.endswith("_seconds") and value < 0:
                self.problems.append(f"{where}: {key} must not be negative, not {value!r}")

    def check_files(self, user_ids):
        self.attachments = self.rows_with("zerver_attachment", self.attachments, "id", "path_id", "owner")
        records = {r.get("path"): r for r in self.upload_records if isinstance(r, dict)}
        self.upload_sources = {}
        for a in self.attachments:
            if ".." in Path(a["path_id"]).parts or Path(a["path_id"]).is_absolute():
                self.problems.append(f"attachment {a['id']} has an unsafe path {a['path_id']!r}")
                continue
            record = records.get(a["path_id"]) or records.get(a.get("path_id"))
            relative = Path("uploads") / str(record["path"] if record else a["path_id"])
            if ".." in relative.parts or relative.is_absolute():
                self.problems.append(f"attachment {a['id']} has an unsafe path {relative.as_posix()!r}")
                continue
            source = regular_file(self.folder, relative)
            if source is None:
                self.problems.append(f"uploads/{a['path_id']} (attachment {a['id']}) is missing")
            else:
                # A file cut short (or changed) would import with the exported size in its row
                # and serve other bytes than it says.
                actual = source.stat().st_size
                for said in (a.get("size"), record.get("size") if record else None):
                    if isinstance(said, int) and not isinstance(said, bool) and said != actual:
                        self.problems.append(f"uploads/{a['path_id']} (attachment {a['id']}) holds {actual} bytes, "
                                             f"but the export says {said}: it was cut short or changed")
                        break
            if a["owner"] not in user_ids:
                self.problems.append(f"attachment {a['id']} has missing owner {a['owner']}")
            self.upload_sources[a["id"]] = source
        self.emoji = self.rows_with("zerver_realmemoji", self.table("zerver_realmemoji"), "id", "name", "file_name")
        emoji_records = {(r.get("file_name"), r.get("name")): r for r in self.emoji_records if isinstance(r, dict)}
        self.emoji_sources = {}
        for e in self.emoji:
            if not e["file_name"] or "/" in e["file_name"] or e["file_name"].startswith("."):
                self.problems.append(f"custom emoji {e['name']!r} has an unsafe file name")
                continue
            record = emoji_records.get((e["file_name"], e["name"]))
            relative = record["path"] if record else f"{self.realm_data['zerver_realm'][0]['id']}/emoji/images/" \
                                                       f"{e['file_name']}"
            source = regular_file(self.folder, Path("emoji") / relative) if ".." not in Path(relative).parts else None
            if source is None:
                self.problems.append(f"emoji/{relative} (custom emoji {e['name']!r}) is missing")
            self.emoji_sources[e["id"]] = source


# Unpacking limits (a 306 KiB archive can unpack to 300 MiB). An
# export's JSON compresses about tenfold and its uploads hardly at all; an archive that grows more
# than RATIO times past a floor, or beyond the total, is refused before its files fill the disk.
MAX_UNPACKED_BYTES = 50 * 1024 ** 3
MAX_RATIO = 100
RATIO_FLOOR_BYTES = 64 * 1024 ** 2


def open_archive(path, *, max_unpacked_bytes=MAX_UNPACKED_BYTES, max_ratio=MAX_RATIO):
    """(folder, temporary dir or None) for an export folder or a .tar.gz of one."""
    path = Path(path)
    if path.is_dir():
        return _export_root(path), None
    if not path.is_file():
        raise ArchiveError(f"No export at {path}")
    if not tarfile.is_tarfile(path):
        raise ArchiveError(f"{path} is neither an export folder nor a .tar.gz of one")
    temporary = Path(tempfile.mkdtemp(prefix="chat-appliance-import-"))
    try:
        _unpack(path, temporary, max_unpacked_bytes, max_ratio)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return _export_root(temporary), temporary


def _unpack(path, destination, max_unpacked_bytes, max_ratio):
    """Unpack regular files and folders only, each inside `destination`, counting the bytes
    written against the limits; then read the compressed stream to its end, so that its checksum
    is verified (tarfile takes a damaged header for the end of the archive, and the files after
    it would be reported missing)."""
    root = destination.resolve()
    packed = max(path.stat().st_size, 1)
    limit = min(max_unpacked_bytes, max(RATIO_FLOOR_BYTES, packed * max_ratio))
    written = 0
    try:
        with tarfile.open(path) as tar:
            for member in tar:
                target = (root / member.name).resolve()
                if root not in target.parents or not (member.isfile() or member.isdir()):
                    kind = "a link" if member.issym() or member.islnk() else (
                        "outside the archive's folder" if member.isfile() or member.isdir() else "a special file")
                    raise ArchiveError(f"{path} holds an unsafe entry ({kind}): {member.name}")
                if member.isdir():
                    target.mkdir(mode=0o700, parents=True, exist_ok=True)
                    continue
                if written + member.size > limit:
                    raise ArchiveError(
                        f"{path} unpacks to more than {limit // 1024 ** 2} MiB ({packed // 1024} KiB packed): "
                        f"refused as a likely archive bomb (limits: {max_unpacked_bytes // 1024 ** 3} GiB in all, "
                        f"and {max_ratio} times the archive's size beyond {RATIO_FLOOR_BYTES // 1024 ** 2} MiB).")
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                source = tar.extractfile(member)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                with os.fdopen(os.open(target, flags, 0o600), "wb") as out:
                    shutil.copyfileobj(source, out)
                written += member.size
            if tar.fileobj is not None:
                while tar.fileobj.read(1 << 20):
                    pass
    except FileExistsError as error:
        raise ArchiveError(f"{path} holds the entry {error.filename} twice") from None
    except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
        if isinstance(error, OSError) and error.errno is not None:
            raise  # the disk, not the archive
        raise ArchiveError(f"{path} is damaged ({error}): it cannot be unpacked. Copy the export again from "
                           "its source.") from None


def _export_root(folder):
    """The folder holding realm.json: the given one, or its one subfolder (Zulip's tarball shape)."""
    if (folder / "realm.json").exists() or (folder / "migration_status.json").exists():
        return folder
    children = [c for c in folder.iterdir() if c.is_dir() and not c.is_symlink()]
    if len(children) == 1 and ((children[0] / "realm.json").exists()
                               or (children[0] / "migration_status.json").exists()):
        return children[0]
    return folder


# --- writing ----------------------------------------------------------------------------------

SYSTEM_BOT_NAMES = {"welcome-bot": "Welcome Bot", "notification-bot": "Notification Bot",
                    "emailgateway": "Email Gateway"}
# Zulip wrote system group names with a leading "@" before version 8.
LEGACY_SYSTEM_GROUP_PREFIX = "@role:"
INSERT_BATCH = 300


# The types the API accepts for the realm and account fields the import stores (None is
# accepted where the column allows it: it means the default or "no limit").
REALM_FIELD_TYPES = {"name": (str,), "description": (str,), "allow_message_editing": (bool,),
                     "message_content_edit_limit_seconds": (int,), "date_created": (int, float)}
USER_FIELD_TYPES = {"full_name": (str,), "email": (str,), "delivery_email": (str,), "timezone": (str,),
                    "role": (int,), "is_active": (bool,), "is_bot": (bool,), "bot_type": (int,),
                    "avatar_version": (int,), "date_joined": (int, float), "long_term_idle": (bool,),
                    "last_active_message_id": (int,)}

STREAM_FIELD_TYPES = {"name": (str,), "description": (str,), "rendered_description": (str,),
                      "invite_only": (bool,), "history_public_to_subscribers": (bool,), "is_web_public": (bool,),
                      "deactivated": (bool,), "message_retention_days": (int,), "date_created": (int, float)}
SUBSCRIPTION_FIELD_TYPES = {"color": (str,), "active": (bool,), "is_muted": (bool,), "in_home_view": (bool,),
                            "pin_to_top": (bool,), "desktop_notifications": (bool,), "audible_notifications": (bool,),
                            "push_notifications": (bool,), "email_notifications": (bool,),
                            "wildcard_mentions_notify": (bool,)}


def _setting_type(key, default):
    """The types a setting accepts, from its default's type."""
    if isinstance(default, bool):
        return (bool,)
    return (type(default),)


def _chunks(rows, size=INSERT_BATCH):
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


class Writer:
    """Writes a checked Archive into the (empty, migrated) database bound to models.database."""
    def __init__(self, archive, instance_path, realm_url, progress):
        self.a = archive
        self.instance = Path(instance_path)
        self.realm_url = realm_url
        self.progress = progress

    def insert(self, model, rows, label=None):
        """Insert dict rows (field name -> value) with one executemany per batch: peewee's
        insert_many builds a node per value, which costs more than the insert itself."""

        rows = list(rows)
        meta = model._meta
        for done, chunk in enumerate(_chunks(rows, 2000), 1):
            by_shape = {}
            for row in chunk:
                by_shape.setdefault(tuple(row), []).append(row)
            for names, same in by_shape.items():
                # Fields the rows leave out take the model's defaults, as peewee would give them.
                defaults = {f.name: f.default for f in meta.sorted_fields
                            if f.name not in names and f.default is not None and not f.primary_key}
                fields = [meta.fields[name] for name in (*names, *defaults)]
                # Quoted: some column names ("order") are SQL keywords.
                bulk_insert(f'"{meta.table_name}"', [f'"{f.column_name}"' for f in fields],
                            [tuple(f.db_value(row[f.name] if f.name in row else
                                              defaults[f.name]() if callable(defaults[f.name]) else defaults[f.name])
                                   for f in fields) for row in same])
            if label:
                self.progress(label, min(done * 2000, len(rows)), len(rows))
        if label and not rows:
            self.progress(label, 0, 0)

    # --- organization, users, groups ------------------------------------------------------------

    def write_realm(self):
        from urllib.parse import urlparse


        row, extra = self.a.realm_row, (self.a.table("chat_appliance_realm") or [{}])[0]
        url = extra.get("url") or self.realm_url
        host = extra.get("host") or urlparse(url).hostname or "localhost"
        self.host = host
        settings = dict(extra.get("settings") or {})
        if "settings" not in extra:

            for key in REALM_MESSAGE_SETTING_DEFAULTS:
                if key in row and row[key] is not None:
                    settings[key] = row[key]
            if row.get("mandatory_topics"):
                settings["mandatory_topics"] = True
        policy = row.get("message_edit_history_visibility_policy")
        Realm.insert(
            id=row["id"], name=str(row["name"])[:40], host=host, url=url,
            date_created=_int(row.get("date_created")) or 0, description=row.get("description") or "",
            moderation_request_channel_id=row.get("moderation_request_channel"),
            message_edit_history_visibility_policy=policy if policy in (1, 2, 3) else 1,
            allow_message_editing=row.get("allow_message_editing", True),
            message_content_edit_limit_seconds=row.get("message_content_edit_limit_seconds") or 0,
            settings=settings,
        ).execute()
        self.realm = Realm.get_by_id(row["id"])

    def user_row(self, row):

        visibility = row.get("email_address_visibility") or EMAIL_VISIBLE_EVERYONE
        delivery = row.get("delivery_email") or row.get("email") or f"user{row['id']}@{self.host}"
        is_bot = bool(row.get("is_bot"))
        role = row.get("role") or (200 if row.get("is_realm_admin") else 600 if row.get("is_guest") else 400)
        return {
            "id": row["id"], "realm": self.realm.id,
            "email": delivery if is_bot or visibility == EMAIL_VISIBLE_EVERYONE else f"user{row['id']}@{self.host}",
            "delivery_email": delivery, "full_name": row["full_name"][:100], "role": role,
            "is_active": bool(row.get("is_active", True)) and not row.get("is_mirror_dummy"),
            "is_bot": is_bot, "bot_type": row.get("bot_type") if is_bot else None, "bot_owner": None,
            "is_system_bot": False, "api_key": generate_api_key(), "password": None,
            "date_joined": _int(row.get("date_joined")) or 0, "timezone": row.get("timezone") or "",
            "email_address_visibility": visibility, "avatar_version": row.get("avatar_version") or 1,
            "settings": {k: row[k] for k in USER_SETTING_DEFAULTS if k in row and row[k] is not None},
            # Soft deactivation needs both: without the window's start, the person is active.
            "long_term_idle": bool(row.get("long_term_idle")) and not is_bot
            and isinstance(row.get("last_active_message_id"), int),
            "last_active_message_id": row.get("last_active_message_id"),
        }

    def write_users(self):

        rows = [self.user_row(u) for u in self.a.users]
        taken = {r["id"] for r in rows}
        bots = {}
        for bot in self.a.crossrealm:
            short = bot["email"].split("@")[0]
            bots[short] = bot["id"]
        for short in ("welcome-bot", "notification-bot"):
            if short not in bots:
                bots[short] = max(taken | set(bots.values()) | {0}) + 1
        for short, bot_id in bots.items():
            rows.append({"id": bot_id, "realm": self.realm.id, "email": f"{short}@{self.host}",
                         "delivery_email": f"{short}@{self.host}",
                         "full_name": SYSTEM_BOT_NAMES.get(short, short), "role": 400, "is_active": True,
                         "is_bot": True, "bot_type": 1, "bot_owner": None, "is_system_bot": True,
                         "api_key": generate_api_key(), "password": None, "date_joined": 0, "timezone": "",
                         "email_address_visibility": 1, "avatar_version": 1, "settings": {}})
        self.insert(UserProfile, rows, "users")
        # {idle person: the last message of their window's start} (actions/soft_deactivation.py).
        self.idle_since = {r["id"]: r["last_active_message_id"] for r in rows if r.get("long_term_idle")}
        for u in self.a.users:
            if u.get("bot_owner") in taken:
                UserProfile.update(bot_owner=u["bot_owner"]).where(UserProfile.id == u["id"]).execute()
        self.user_ids = {r["id"] for r in rows}

    def write_groups(self):

        named = {row.get("usergroup_ptr", row.get("id")): row for row in self.a.table("zerver_namedusergroup")}
        for row in self.a.table("zerver_usergroup"):
            if "name" in row:  # before Zulip 10, every group row was named
                named.setdefault(row["id"], row)
        members, subgroups = {}, {}
        for m in self.a.table("zerver_usergroupmembership"):
            members.setdefault(m["user_group"], []).append(m["user_profile"])
        for m in self.a.table("zerver_groupgroupmembership"):
            subgroups.setdefault(m["supergroup"], []).append(m["subgroup"])
        self.anonymous = {gid: {"direct_members": sorted(members.get(gid, [])),
                                "direct_subgroups": sorted(s for s in subgroups.get(gid, []) if s in named)}
                          for gid in {r["id"] for r in self.a.table("zerver_usergroup")} - set(named)}
        self.group_ids = set(named)
        rows = []
        for gid, row in named.items():
            name = row["name"]
            if name.startswith(LEGACY_SYSTEM_GROUP_PREFIX):
                name = name[1:]
            rows.append({"id": gid, "realm": self.realm.id, "name": name[:100],
                         "description": row.get("description") or "", "is_system_group": bool(row.get("is_system_group")),
                         "deactivated": bool(row.get("deactivated")), "date_created": _int(row.get("date_created")) or 0,
                         "creator": row.get("creator") if row.get("creator") in self.user_ids else None,
                         "settings": {}})
        self.insert(UserGroup, rows, "groups")
        existing = {r["name"]: r["id"] for r in rows if r["is_system_group"]}
        next_id = max(self.group_ids | {0}) + 1
        for name, doc in [(n, d) for n, d, _r in SYSTEM_GROUPS] + [NOBODY_GROUP]:
            if name not in existing:
                UserGroup.insert(id=next_id, realm=self.realm.id, name=name, description=doc, is_system_group=True,
                                 settings={}).execute()
                existing[name] = next_id
                self.group_ids.add(next_id)
                next_id += 1
        self.system = existing
        self.insert(UserGroupMembership, [
            {"user_group": gid, "user_profile": uid} for gid, uids in members.items() if gid in named
            for uid in sorted(set(uids)) if uid in self.user_ids])
        links = {(sup, sub) for sup, subs in subgroups.items() for sub in subs
                 if sup in self.group_ids and sub in self.group_ids and sup in named}
        chain = [existing[n] for n, _d, _r in SYSTEM_GROUPS]
        links |= set(zip(chain, chain[1:]))
        self.insert(GroupGroupMembership, [{"supergroup": a, "subgroup": b} for a, b in sorted(links)])
        # Each account's direct system-group membership is its role's group (as
        # set_role_group_membership makes it), in two statements for every account: one call per
        # account cost seconds for a few thousand.
        system_ids = list(existing.values())
        UserGroupMembership.delete().where(UserGroupMembership.user_group.in_(system_ids)).execute()
        self.insert(UserGroupMembership, [
            {"user_group": existing[ROLE_GROUP_NAME[role]], "user_profile": uid}
            for uid, role in UserProfile.select(UserProfile.id, UserProfile.role)
            .where(UserProfile.realm == self.realm.id).tuples()])

        for gid, row in named.items():
            values = {k: self.group_setting(row[k]) for k in USER_GROUP_SETTINGS if row.get(k) is not None}
            values = {k: v for k, v in values.items() if v is not None}
            if values:
                UserGroup.update(settings=values).where(UserGroup.id == gid).execute()

    def group_setting(self, value):
        """A group-setting value: a named group's id, an anonymous group inline, else None."""
        if isinstance(value, dict):
            return value
        if value in self.group_ids:
            return value
        return self.anonymous.get(value)

    # --- channels, conversations, messages ------------------------------------------------------

    def write_channels(self):

        folders = [r for r in self.a.table("zerver_channelfolder") if "id" in r and "name" in r]
        self.insert(ChannelFolder, [{
            "id": r["id"], "realm": self.realm.id, "name": r["name"][:60], "description": r.get("description") or "",
            "rendered_description": _stored_html(r.get("rendered_description")),
            "date_created": _int(r.get("date_created")) or 0,
            "creator": r.get("creator") if r.get("creator") in self.user_ids else None,
            "order": r.get("order") or 0, "is_archived": bool(r.get("is_archived")),
        } for r in folders])
        self.folder_ids = {r["id"] for r in folders}

        stream_recipient = {r["type_id"]: r["id"] for r in self.a.recipients if r["type"] == layout.RECIPIENT_STREAM}
        self.insert(Recipient, [{"id": rid, "type": RECIPIENT_STREAM} for rid in sorted(stream_recipient.values())])
        rows = []
        for s in self.a.streams:
            settings = {key: self.system[group] for key, group in STREAM_GROUP_SETTINGS.items()}
            for key in STREAM_GROUP_SETTINGS:
                value = self.group_setting(s.get(key))
                if value is not None:
                    settings[key] = value
            rows.append({
                "id": s["id"], "realm": self.realm.id, "name": s["name"][:60], "name_key": s["name"][:60].lower(),
                "description": (s.get("description") or "")[:1024],
                "rendered_description": _stored_html(s.get("rendered_description")),
                "invite_only": bool(s.get("invite_only")),
                "history_public_to_subscribers": bool(s.get("history_public_to_subscribers", True)),
                "is_web_public": bool(s.get("is_web_public")), "date_created": _int(s.get("date_created")) or 0,
                "creator": s.get("creator") if s.get("creator") in self.user_ids else None,
                "recipient": stream_recipient[s["id"]], "first_message_id": None,
                "message_retention_days": s.get("message_retention_days"),
                "folder_id": s.get("folder") if s.get("folder") in self.folder_ids else None,
                "deactivated": bool(s.get("deactivated")), "settings": settings,
            })
        self.insert(Stream, rows, "channels")
        self.stream_by_recipient = {rid: sid for sid, rid in stream_recipient.items()}
        subs = []
        for sub in self.a.subscriptions:
            stream_id = self.stream_by_recipient.get(sub["recipient"])
            if stream_id is None or sub["user_profile"] not in self.user_ids:
                continue
            subs.append({"id": sub["id"], "user_profile": sub["user_profile"], "stream": stream_id,
                         "active": bool(sub.get("active", True)), "color": (sub.get("color") or "#c2c2c2")[:10],
                         "is_muted": bool(sub.get("is_muted", sub.get("in_home_view") is False)),
                         "pin_to_top": bool(sub.get("pin_to_top")),
                         **{k: sub.get(k) for k in ("desktop_notifications", "audible_notifications",
                                                    "push_notifications", "email_notifications",
                                                    "wildcard_mentions_notify")}})
        self.insert(Subscription, subs, "subscriptions")
        # The channels each idle person is in now: a catch-up adds their rows there, and only there.
        self.idle_channels = {}
        for sub in subs:
            if sub["active"] and sub["user_profile"] in self.idle_since:
                self.idle_channels.setdefault(sub["user_profile"], set()).add(sub["stream"])

    def conversation_members(self):
        """{recipient id: member ids} for huddle recipients (from their subscriptions)."""
        members = {}
        for sub in self.a.subscriptions:
            recipient = self.a.recipient_by_id.get(sub["recipient"])
            if recipient and recipient["type"] == layout.RECIPIENT_HUDDLE:
                members.setdefault(sub["recipient"], set()).add(sub["user_profile"])
        return members

    def write_direct_conversations(self):
        """A direct-message group per distinct set of members, from the (recipient, sender) pairs
        the validation pass kept, in the order of their first message."""
        huddle_members = self.conversation_members()
        next_recipient = max([r["id"] for r in self.a.recipients] + [0]) + 1
        groups = {}  # member key -> recipient id
        self.dm_recipient = {}
        for archive_recipient, sender in self.a.conversations:
            recipient = self.a.recipient_by_id[archive_recipient]
            if archive_recipient in self.dm_recipient:
                continue
            if recipient["type"] == layout.RECIPIENT_HUDDLE:
                ids = huddle_members.get(archive_recipient, set()) | {sender}
                preferred = archive_recipient
            else:
                ids = {sender, recipient["type_id"]}
                preferred = None
            ids = {i for i in ids if i in self.user_ids}
            key = ",".join(str(i) for i in sorted(ids))
            if key not in groups:
                if preferred is None or preferred in groups.values():
                    preferred, next_recipient = next_recipient, next_recipient + 1
                groups[key] = preferred
            if recipient["type"] == layout.RECIPIENT_PERSONAL:
                self.dm_recipient.setdefault(("personal", sender, recipient["type_id"]), groups[key])
            else:
                self.dm_recipient[archive_recipient] = groups[key]
        self.insert(Recipient, [{"id": rid, "type": RECIPIENT_DIRECT_MESSAGE_GROUP} for rid in groups.values()])
        # In bulk, with ids given (the table is new): an import of 100,000 messages has 10,674
        # conversations, a million about ten times as many, and two statements for each took
        # seconds.
        members = {number: [int(i) for i in key.split(",")] for number, key in enumerate(groups, 1)}
        self.insert(DirectMessageGroup, [{"id": number, "member_key": key, "recipient": groups[key],
                                          "group_size": len(members[number])}
                                         for number, key in enumerate(groups, 1)])
        self.insert(DirectMessageGroupMember, [{"group": number, "user_profile": i}
                                               for number, ids in members.items() for i in ids])

    def message_recipient(self, m):
        recipient = self.a.recipient_by_id[m["recipient"]]
        if recipient["type"] == layout.RECIPIENT_STREAM:
            return m["recipient"], self.stream_by_recipient[m["recipient"]]
        if recipient["type"] == layout.RECIPIENT_PERSONAL:
            return self.dm_recipient[("personal", m["sender"], recipient["type_id"])], None
        return self.dm_recipient[m["recipient"]], None

    def message_row(self, m, clients, senders):
        """Our Message row for an archive message, rendered here if the export has no HTML."""
        recipient_id, stream_id = self.message_recipient(m)
        topic = (m.get("subject") if m.get("subject") is not None else m.get("topic_name")) or ""
        history = m.get("edit_history")
        if isinstance(history, str):
            history = json.loads(history) if history else None
        moved = [e.get("timestamp") for e in history or [] if isinstance(e, dict)
                 and ("prev_topic" in e or "prev_stream" in e)]
        html = _stored_html(m.get("rendered_content"))
        if not html:
            sender = senders.get(m["sender"]) or senders.setdefault(m["sender"], UserProfile.get_by_id(m["sender"]))
            html = render_message(m["content"], realm=self.realm, sender=sender).html
        return {
            "id": m["id"], "realm": self.realm.id, "sender": m["sender"], "recipient": recipient_id,
            "stream": stream_id, "topic": topic[:60], "topic_key": topic[:60].casefold(),
            "content": m["content"], "rendered_content": html,
            "date_sent": _int(m.get("date_sent", m.get("pub_date"))),
            "sending_client": str(clients.get(m.get("sending_client"), ""))[:60],
            "last_edit_time": _int(m.get("last_edit_time")), "last_moved_time": _int(max(moved)) if moved else None,
            "edit_history": history, "is_me_message": (m["content"] or "").startswith("/me "),
            "has_link": bool(m.get("has_link")), "has_image": bool(m.get("has_image")),
            "has_attachment": bool(m.get("has_attachment")),
        }

    def write_messages(self):
        """Stream the message files: each file's messages, their search index and their per-user
        rows are written, then forgotten, so memory stays that of a few files (at most 1000
        messages each) whatever the export's size. The per-user rows, the bulk of an export, are
        read and made ready beside this process (Archive.message_chunks) and go in as flat
        integers without Writer.insert's per-value conversion."""
        clients = {c["id"]: c["name"] for c in self.a.table("zerver_client") if "id" in c}
        senders, firsts = {}, {}
        meta = UserMessage._meta
        columns = [f'"{meta.fields[name].column_name}"' for name in ("message", "user_profile", "flags")]
        total, done = self.a.message_count, 0
        plan = {"user_ids": self.user_ids, "idle_since": self.idle_since, "idle_channels": self.idle_channels,
                "stream_by_recipient": self.stream_by_recipient, "flag_bits": FLAG_BITS}
        for messages, user_rows in self.a.message_chunks(plan):
            rows = [self.message_row(m, clients, senders) for m in messages]
            self.insert(Message, rows)
            for chunk in _chunks(rows, 200):
                backend().index_messages(Message._meta.database,
                                         [(r["id"], r["topic"], r["rendered_content"]) for r in chunk], new=True)
            for row in rows:
                if row["stream"] is not None and row["id"] < firsts.get(row["stream"], row["id"] + 1):
                    firsts[row["stream"]] = row["id"]
            load_flat_rows(f'"{meta.table_name}"', columns, user_rows)
            done += len(rows)
            self.progress("messages", done, total)
            del messages, rows, user_rows
        if not total:
            self.progress("messages", 0, 0)
        for stream_id, first in firsts.items():
            Stream.update(first_message_id=first).where(Stream.id == stream_id).execute()
        reactions, seen_reactions = [], set()
        for r in self.a.reactions:
            reaction_type = r.get("reaction_type") or "unicode_emoji"
            if reaction_type == "zulip_extra_emoji":
                reaction_type = "service_extra_emoji"
            reaction_key = (r["message"], r["user_profile"], r["emoji_code"], reaction_type)
            if reaction_key in seen_reactions or r["user_profile"] not in self.user_ids:
                continue
            seen_reactions.add(reaction_key)
            reactions.append({"id": r["id"], "message": r["message"], "user_profile": r["user_profile"],
                              "emoji_name": r["emoji_name"], "emoji_code": str(r["emoji_code"]),
                              "reaction_type": reaction_type})
        self.insert(Reaction, reactions, "reactions")

    # --- files and the rest ---------------------------------------------------------------------

    def write_files(self):
        """Attachment and emoji rows; their files are copied by copy_files."""
        rows = []
        for a in self.a.attachments:
            name = a.get("file_name") or Path(a["path_id"]).name
            rows.append({"id": a["id"], "realm": self.realm.id, "owner": a["owner"], "path_id": a["path_id"],
                         "file_name": name[:255],
                         "content_type": a.get("content_type") or mimetypes.guess_type(name)[0]
                         or "application/octet-stream",
                         "size": a.get("size") or self.a.upload_sources[a["id"]].stat().st_size,
                         "create_time": _int(a.get("create_time")) or 0})
        self.insert(Attachment, rows, "uploads")
        # The messages that share each file (Zulip exports Attachment.messages): only they give
        # access to it here, as a URL alone does not (actions/uploads.py).
        self.insert(AttachmentMessage, [{"attachment_id": a["id"], "message_id": message_id}
                                        for a in self.a.attachments
                                        for message_id in sorted(set(a.get("messages") or ()))
                                        if self.a.has_message(message_id)],
                    "shared files")
        self.insert(RealmEmoji, [{
            "id": e["id"], "realm": self.realm.id, "name": e["name"],
            "author": e.get("author") if e.get("author") in self.user_ids else None, "file_name": e["file_name"],
            "is_animated": bool(e.get("is_animated")), "deactivated": bool(e.get("deactivated")),
        } for e in self.a.emoji], "custom emoji")

    def copy_files(self):
        """Copy uploads and emoji images into the instance; returns the files written."""
        written = []
        for a in self.a.attachments:
            target = self.instance / "uploads" / a["path_id"]
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(self.a.upload_sources[a["id"]], target)
            written.append(target)
        for e in self.a.emoji:
            target = self.instance / "avatars" / str(self.a.realm_row["id"]) / "emoji" / "images" / e["file_name"]
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(self.a.emoji_sources[e["id"]], target)
            written.append(target)
        return written

    def write_personal_tables(self):

        users, t = self.user_ids, self.a.table
        streams = {s["id"] for s in self.a.streams}
        self.insert(UserTopic, [{
            "user_profile": r["user_profile"], "stream": r["stream"], "topic": (r.get("topic_name") or "")[:60],
            "topic_key": (r.get("topic_name") or "")[:60].casefold(), "visibility_policy": r.get("visibility_policy", 1),
            "last_updated": _int(r.get("last_updated")) or 0,
        } for r in t("zerver_usertopic") if r.get("user_profile") in users and r.get("stream") in streams])
        words, seen = [], set()
        for r in t("zerver_alertword"):
            key = (r.get("user_profile"), str(r.get("word", "")).lower()[:100])
            if key[0] in users and key[1] and key not in seen:
                seen.add(key)
                words.append({"user_profile": key[0], "word": r["word"], "word_key": key[1]})
        self.insert(AlertWord, words)
        self.insert(MutedUser, [{"user_profile": r["user_profile"], "muted_user": r["muted_user"],
                                 "date_muted": _int(r.get("date_muted")) or 0}
                                for r in t("zerver_muteduser")
                                if r.get("user_profile") in users and r.get("muted_user") in users])
        self.insert(UserStatus, [{"user_profile": r["user_profile"], "status_text": r.get("status_text") or "",
                                  "emoji_name": r.get("emoji_name") or "", "emoji_code": r.get("emoji_code") or "",
                                  "reaction_type": (r.get("reaction_type") or "") if r.get("emoji_name") else "",
                                  "timestamp": _int(r.get("timestamp")) or 0}
                                 for r in {r.get("user_profile"): r for r in t("zerver_userstatus")}.values()
                                 if r.get("user_profile") in users])
        self.insert(UserPresence, [{"user_profile": r["user_profile"],
                                    "last_connected_time": _int(r.get("last_connected_time")) or 0,
                                    "last_active_time": _int(r.get("last_active_time")),
                                    "last_update_id": r.get("last_update_id") or 0}
                                   for r in {r.get("user_profile"): r for r in t("zerver_userpresence")}.values()
                                   if r.get("user_profile") in users and "last_connected_time" in r])
        self.insert(BotStorageData, [{"bot_profile": r["bot_profile"], "key": r["key"], "value": r["value"]}
                                     for r in t("zerver_botstoragedata") if r.get("bot_profile") in users])
        self.insert(Linkifier, [{"realm": self.realm.id, "pattern": r["pattern"],
                                 "url_template": r.get("url_template")
                                 or re.sub(r"%\((\w+)\)s", r"{\1}", r.get("url_format_string", "")),
                                 "order": r.get("order") or 0} for r in t("zerver_realmfilter") if "pattern" in r])
        self.insert(RealmPlayground, [{"realm": self.realm.id, "name": r["name"],
                                       "pygments_language": r["pygments_language"],
                                       "url_template": r.get("url_template") or r.get("url_prefix", "") + "{code}"}
                                      for r in t("zerver_realmplayground") if "name" in r])
        self.insert(SavedSnippet, [{"user_profile": r["user_profile"], "title": r.get("title") or "",
                                    "content": r.get("content") or "", "date_created": _int(r.get("date_created")) or 0}
                                   for r in t("zerver_savedsnippet") if r.get("user_profile") in users])
        views = {(r.get("user"), r.get("fragment")): r for r in t("zerver_navigationview")}
        self.insert(NavigationView, [{"user_profile": user, "fragment": fragment, "is_pinned": bool(r.get("is_pinned")),
                                      "name": r.get("name")}
                                     for (user, fragment), r in views.items() if user in users and fragment])
        fields = [r for r in t("zerver_customprofilefield") if "id" in r and "name" in r]
        self.insert(CustomProfileField, [{
            "id": r["id"], "realm": self.realm.id, "name": r["name"][:40], "hint": (r.get("hint") or "")[:80],
            "field_type": r.get("field_type", 1), "field_data": r.get("field_data") or "", "order": r.get("order") or 0,
            "display_in_profile_summary": bool(r.get("display_in_profile_summary")),
            "required": bool(r.get("required")), "editable_by_user": r.get("editable_by_user", True),
        } for r in fields])
        field_ids = {r["id"] for r in fields}
        self.insert(CustomProfileFieldValue, [{
            "user_profile": r["user_profile"], "field": r["field"], "value": r["value"],
            "rendered_value": None if r.get("rendered_value") is None else _stored_html(r.get("rendered_value")),
        } for r in t("zerver_customprofilefieldvalue")
            if r.get("user_profile") in users and r.get("field") in field_ids])

    def finish_realm(self):
        """Settings that name other rows: default channels, new-user defaults, group settings."""
        streams = {s["id"] for s in self.a.streams}
        settings = dict(self.realm.settings or {})
        settings["default_stream_ids"] = [r["stream"] for r in self.a.table("zerver_defaultstream")
                                          if r.get("stream") in streams]
        defaults = (self.a.table("zerver_realmuserdefault") or [{}])[0]
        known = set(USER_SETTING_DEFAULTS) | {"email_address_visibility"}
        stored = {k: v for k, v in defaults.items() if k in known and v is not None}
        if stored:
            settings[STORAGE_KEY] = stored
        mention = self.group_setting(self.a.realm_row.get("can_mention_many_users_group"))
        Realm.update(settings=settings,
                     can_mention_many_users_group_id=mention if isinstance(mention, int)
                     else self.system["role:administrators"]).where(Realm.id == self.realm.id).execute()

    def write_tables(self):
        """Every table, in an order that satisfies the foreign keys (inside run's transaction)."""
        self.write_realm()
        self.write_users()
        self.write_groups()
        self.write_channels()
        self.write_direct_conversations()
        self.write_messages()
        self.write_files()
        self.write_personal_tables()
        self.finish_realm()

    def run(self):
        """The files first, then every table in one transaction; the files go again if it fails."""
        written = self.copy_files()
        try:
            with backend().bulk_load(database), write_transaction():
                # The per-user rows' indexes (and the messages') are built once at the end, from
                # sorted runs: kept up row by row, each row landed in another leaf of each index
                # (rows come by message, the indexes are by person), and the load ran 10x slower.
                deferred = [index for table in ("user_message", "message")
                            for index in backend().secondary_indexes(database, table)]
                for name, _sql in deferred:
                    database.execute_sql(f'DROP INDEX "{name}"')
                self.write_tables()
                self.progress("indexes", 0, len(deferred))
                for done, (_name, sql) in enumerate(deferred, 1):
                    database.execute_sql(sql)
                    self.progress("indexes", done, len(deferred))
        except BaseException:
            for path in written:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            raise
        reset_sequences()


def _copy_regular(source, target):
    """Copy a checked export file (not following a link, in case one appeared since the check)
    into a new file of mode 0600."""
    with open_regular(source) as reader, os.fdopen(
            os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600), "wb") as out:
        shutil.copyfileobj(reader, out)


def reset_sequences():
    """On PostgreSQL, rows inserted with explicit ids leave the id sequences behind: move them on."""
    from peewee import PostgresqlDatabase


    if not isinstance(database.obj, PostgresqlDatabase):
        return
    for model in _all_models(BaseModel):
        table = model._meta.table_name
        if model._meta.primary_key is not None and model._meta.primary_key.name == "id":
            database.execute_sql(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
                                 f"COALESCE((SELECT MAX(id) FROM \"{table}\"), 1))")


def _all_models(base):
    for sub in base.__subclasses__():
        yield sub
        yield from _all_models(sub)


def import_export(path, instance_path, *, realm_url="http://localhost:9991", progress=None, helpers=HELPERS):
    """Check the export at `path`, then write it into a new instance at `instance_path`, with
    `helpers` processes reading the message files beside it (0: this process reads them; None:
    as many as the machine and the files' size allow).

    Raises ArchiveError (nothing written) when the archive is unusable or the instance is not new.
    Returns a summary dict of what was imported.
    """

    progress = progress or (lambda label, done, total: None)
    instance = Path(instance_path)
    try:
        with exclusively(instance, "import-zulip"):
            return _import_into(path, instance, realm_url, progress, helpers)
    except InstanceBusy as error:
        raise ArchiveError(str(error)) from None


def _import_into(path, instance, realm_url, progress, helpers):
    folder, temporary = open_archive(path)
    try:
        archive = Archive(folder, given=path, helpers=helpers).load()
        config = load_config(instance) if instance.exists() else None
        if config is None or config["DATABASE_URL"].startswith("sqlite:"):
            database_file = instance / "chat.sqlite3"
            if database_file.exists():
                raise ArchiveError(f"{instance} already holds a database: import into a new instance folder.")
        make_instance_folder(instance)
        config = load_config(instance)
        init_database(config["DATABASE_URL"], inline_image_preview=config["INLINE_IMAGE_PREVIEW"], offline=True)
        migrate()
        with database.connection_context():
            if Realm.select().exists():
                raise ArchiveError(f"The database of {instance} already holds an organization.")
            Writer(archive, instance, realm_url, progress).run()
        return {"users": len(archive.users), "channels": len(archive.streams), "messages": archive.message_count,
                "reactions": len(archive.reactions), "uploads": len(archive.attachments),
                "custom_emoji": len(archive.emoji), "source": archive.flavor, "version": archive.version}
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
