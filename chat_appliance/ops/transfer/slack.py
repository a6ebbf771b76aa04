"""`import-slack`: a Slack workspace export (the .zip Slack's "Export data" page gives) into a new
instance.

The archive, as Slack documents it: users.json and channels.json at the top; groups.json
(private channels), dms.json, mpims.json and integration_logs.json when the export includes
them; one folder per conversation (the channel's name, the DM's id, the group DM's name) of
YYYY-MM-DD.json files, each a list of that day's messages.

All or nothing, in three steps: read and check every entry (converting messages as they are
read), download every file Slack hosts, and only then write the organization, through the same
Writer as import-zulip, in one transaction. Messages are written in batches, each batch's
per-user rows made and inserted before the next, so that a big export never holds every
recipient's row at once. Behaviour follows Zulip's Slack importer (see docs/import-slack.md).
"""

from __future__ import annotations

import html
import json
import mimetypes
import os
import secrets
import shutil
import tempfile
import unicodedata
import urllib.error
import urllib.request
import zipfile
from urllib.parse import urlsplit
import zlib
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from peewee import DatabaseError

from chat_appliance.config import load_config
from chat_appliance.db.connection import backend, bulk_insert, close_connection, init_database, migrate
from chat_appliance.lib.thumbnails import thumbnail_dir, thumbnail_upload
from chat_appliance.lib.rendering import invalidate_render_context, render_message, render_plain
from chat_appliance.models import (
    FLAG_BITS,
    RECIPIENT_DIRECT_MESSAGE_GROUP,
    Attachment,
    AttachmentMessage,
    DirectMessageGroup,
    DirectMessageGroupMember,
    Message,
    Reaction,
    Realm,
    Recipient,
    Stream,
    UserMessage,
    UserProfile,
    database,
)
from chat_appliance.ops.instance_files import InstanceBusy, exclusively, make_instance_folder
from chat_appliance.ops.transfer import layout
from chat_appliance.ops.transfer.importer import (
    MAX_RATIO,
    MAX_UNPACKED_BYTES,
    RATIO_FLOOR_BYTES,
    ArchiveError,
    Writer,
)
from chat_appliance.ops.transfer.slack_text import Converter, collapse, zulip_emoji

# The topic of channel messages outside threads, as Zulip's importer names it.
SLACK_TOPIC = "imported from Slack"
MAX_TOPIC_LENGTH = 60
# Notices Slack writes into the conversation that say nothing a reader needs (Zulip skips them).
NOTICE_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave", "channel_name", "group_name",
                   "pinned_item", "unpinned_item"}
# Subtypes whose text is an action ("started a call"), shown as /me (as Zulip does).
ME_SUBTYPES = {"me_message", "bot_add", "sh_room_created"}
# A file record Slack keeps after the file itself is gone (deleted, or past a free plan's limit).
GONE_FILE_MODES = {"tombstone": "deleted in Slack", "hidden_by_limit": "hidden by Slack's plan limit"}
GONE_FILE_ACCESS = {"access_denied": "not accessible to the export", "file_not_found": "deleted in Slack"}
# A Slack export is two levels deep (folder/day.json), three when zipped inside a folder.
MAX_ENTRY_DEPTH = 3
MAX_ENTRIES = 2_000_000
# One entry's JSON is parsed in memory: a day of one conversation, or the list of people, is far
# below this even in the largest workspaces.
MAX_JSON_ENTRY_BYTES = 1024 ** 3
MESSAGE_BATCH = 1000
DOWNLOAD_TIMEOUT_SECONDS = 60
REALM_ID = 1
GENERIC_BOT = 1
ROLE_OWNER, ROLE_ADMINISTRATOR, ROLE_MEMBER, ROLE_GUEST = 100, 200, 400, 600
OPTIONAL_LISTS = ("groups.json", "dms.json", "mpims.json")
# Where Slack serves the files it hosts (url_private); the token is sent to this host only.
SLACK_FILES_HOST = "files.slack.com"


def _safe_file_name(name: str) -> str:
    """A file name that is safe in an upload URL and on disk (the rule actions/uploads.py applies
    to uploads, repeated here because transfer/ sits below the actions)."""
    ascii_name = unicodedata.normalize("NFKD", name or "").encode("ascii", "ignore").decode("ascii")
    kept = "".join(c for c in "_".join(ascii_name.replace("/", " ").split()) if c.isalnum() or c in "_.-")
    return kept.strip("._") or "uploaded-file"


def _truncate(text: str, length: int) -> str:
    return text if len(text) <= length else text[:length - 1] + "…"


def _ts(value: Any) -> float:
    return float(value)


# --- the archive ------------------------------------------------------------------------------

class SlackZip:
    """A Slack export's zip, its entries bounded (count, depth, unpacked size) before any is read."""

    def __init__(self, path: Path, *, max_unpacked_bytes: int = MAX_UNPACKED_BYTES, max_ratio: int = MAX_RATIO):
        self.path = path
        if not path.is_file():
            raise ArchiveError(f"No export at {path}")
        if not zipfile.is_zipfile(path):
            raise ArchiveError(f"{path} is not a ZIP file (or is truncated): a Slack export is the .zip that "
                               "Slack's export page gives.")
        try:
            self.zip = zipfile.ZipFile(path)
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as error:
            raise ArchiveError(f"{path} is damaged ({error}): copy the export again from Slack.") from None
        if len(infos) > MAX_ENTRIES:
            raise ArchiveError(f"{path} holds {len(infos)} entries, more than a Slack export ({MAX_ENTRIES}).")
        packed = max(path.stat().st_size, 1)
        limit = min(max_unpacked_bytes, max(RATIO_FLOOR_BYTES, packed * max_ratio))
        total = 0
        self.infos: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            parts = PurePosixPath(name).parts
            if name.startswith("/") or ".." in parts or "\\" in name:
                raise ArchiveError(f"{path} holds an unsafe entry: {name}")
            if len(parts) > MAX_ENTRY_DEPTH:
                raise ArchiveError(f"{path} holds {name}, nested deeper than a Slack export's folders.")
            total += info.file_size
            if total > limit:
                raise ArchiveError(
                    f"{path} unpacks to more than {limit // 1024 ** 2} MiB ({packed // 1024} KiB packed): refused "
                    f"as a likely archive bomb (limits: {max_unpacked_bytes // 1024 ** 3} GiB in all, and "
                    f"{max_ratio} times the archive's size beyond {RATIO_FLOOR_BYTES // 1024 ** 2} MiB).")
            if not info.is_dir():
                self.infos[name] = info
        self.prefix = ""
        if "users.json" not in self.infos or "channels.json" not in self.infos:
            tops = {PurePosixPath(n).parts[0] for n in self.infos if len(PurePosixPath(n).parts) > 1}
            if len(tops) == 1:
                top = tops.pop()
                if f"{top}/users.json" in self.infos and f"{top}/channels.json" in self.infos:
                    self.prefix = top + "/"
        if self.prefix + "users.json" not in self.infos or self.prefix + "channels.json" not in self.infos:
            raise ArchiveError(f"{path} is not a Slack export: it has no users.json and channels.json at its top.")

    def has(self, name: str) -> bool:
        return self.prefix + name in self.infos

    def json(self, name: str, expected: type | None) -> Any:
        """The JSON of one entry; ArchiveError naming the entry when it is damaged or not JSON."""
        full = self.prefix + name
        if self.infos[full].file_size > MAX_JSON_ENTRY_BYTES:
            raise ArchiveError(f"{full} unpacks to more than {MAX_JSON_ENTRY_BYTES // 1024 ** 2} MiB: too big for "
                               "an entry of a Slack export.")
        try:
            raw = self.zip.read(self.infos[full])
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as error:
            raise ArchiveError(f"{full} in {self.path} is damaged ({error}): copy the export again from Slack.") \
                from None
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as error:
            raise ArchiveError(f"{full} is not valid JSON ({error}).") from None
        except RecursionError:
            raise ArchiveError(f"{full} is nested too deeply to be part of a Slack export.") from None
        if expected is not None and not isinstance(data, expected):
            raise ArchiveError(f"{full} does not hold a JSON {'list' if expected is list else 'object'}.")
        return data

    def conversation_days(self) -> dict[str, list[str]]:
        """{folder: [its YYYY-MM-DD.json entries, in date order]}."""
        days: dict[str, list[str]] = defaultdict(list)
        for name in self.infos:
            if not name.startswith(self.prefix):
                continue
            parts = PurePosixPath(name[len(self.prefix):]).parts
            if len(parts) == 2 and parts[1].endswith(".json"):
                days[parts[0]].append(parts[1])
        return {folder: sorted(files) for folder, files in days.items()}


class SlackExport:
    """An export read, checked and converted into rows for the Writer (users, channels,
    conversations, messages with their topics, reactions and files), plus what was skipped."""

    def __init__(self, archive: SlackZip, *, host: str, org_name: str | None, progress,
                 files_host: str = SLACK_FILES_HOST):
        self.z = archive
        self.files_host = files_host.lower()
        self.host = host
        self.progress = progress
        self.skipped: list[str] = []
        self.notices = 0
        self.unknown_senders = 0
        self.empty = 0
        self.custom_emoji: Counter[str] = Counter()
        self.org_name = org_name
        self.written: Counter[str] = Counter()

    # --- people -------------------------------------------------------------------------------

    def read_people(self):
        raw_users = self.z.json("users.json", list)
        self.users: list[dict[str, Any]] = []
        self.user_by_slack: dict[str, int] = {}
        emails: set[str] = set()
        bot_users: dict[str, int] = {}
        for index, u in enumerate(raw_users):
            if not isinstance(u, dict) or not isinstance(u.get("id"), str):
                raise ArchiveError(f"users.json[{index}] is not a Slack user (it has no id).")
            if u["id"] in self.user_by_slack:
                continue
            uid = len(self.users) + 1
            profile = u.get("profile") if isinstance(u.get("profile"), dict) else {}
            name = (u.get("real_name") or profile.get("real_name") or u.get("name") or u["id"]).strip()
            is_bot = bool(u.get("is_bot")) or u["id"] == "USLACKBOT"
            email = str(profile.get("email") or "").strip()
            if not email or email.casefold() in emails or len(email) > 254 or "@" not in email:
                short = _safe_file_name(str(u.get("name") or u["id"])).lower()
                email = f"{short}-bot@{self.host}" if is_bot else f"{short}@{self.host}"
                if email.casefold() in emails:
                    email = f"user{uid}@{self.host}"
            emails.add(email.casefold())
            if u.get("is_restricted") or u.get("is_ultra_restricted"):
                role = ROLE_GUEST
            elif u.get("is_owner") or u.get("is_primary_owner"):
                role = ROLE_OWNER
            elif u.get("is_admin"):
                role = ROLE_ADMINISTRATOR
            else:
                role = ROLE_MEMBER
            self.users.append({
                "id": uid, "slack_id": u["id"], "full_name": name[:100], "email": email, "delivery_email": email,
                "role": ROLE_MEMBER if is_bot else role, "is_active": not u.get("deleted"), "is_bot": is_bot,
                "bot_type": GENERIC_BOT if is_bot else None, "timezone": str(u.get("tz") or "")[:64],
                "date_joined": 0, "email_address_visibility": 1,
            })
            self.user_by_slack[u["id"]] = uid
            if is_bot and profile.get("bot_id"):
                bot_users[str(profile["bot_id"])] = uid
        self._emails = emails
        # An app's bot user answers for its bot_id: its bot_message posts are that user's.
        self.bot_by_id: dict[str, int] = bot_users

    def bot_for(self, bot_id: str, message: dict[str, Any]) -> int:
        """The generic bot standing for one Slack bot_id (a bot without a user of its own)."""
        if bot_id in self.bot_by_id:
            return self.bot_by_id[bot_id]
        profile: dict[str, Any] = message["bot_profile"] if isinstance(message.get("bot_profile"), dict) else {}
        name = str(profile.get("name") or message.get("username") or bot_id).strip() or bot_id
        return self._add_bot(name, bot_id, key=bot_id)

    def _add_bot(self, name: str, short: str, *, key: str) -> int:
        uid = len(self.users) + 1
        email = f"{_safe_file_name(short).lower()}-bot@{self.host}"
        if email.casefold() in self._emails:
            email = f"bot{uid}@{self.host}"
        self._emails.add(email.casefold())
        self.users.append({"id": uid, "slack_id": key, "full_name": name[:100], "email": email,
                           "delivery_email": email, "role": ROLE_MEMBER, "is_active": True, "is_bot": True,
                           "bot_type": GENERIC_BOT, "timezone": "", "date_joined": 0, "email_address_visibility": 1})
        self.bot_by_id[key] = uid
        return uid

    # --- channels and conversations -----------------------------------------------------------

    def read_conversations(self):
        self.streams: list[dict[str, Any]] = []
        self.members: dict[str, set[int]] = {}      # folder -> member ids
        self.stream_of: dict[str, dict[str, Any]] = {}  # folder -> stream row
        self.dm_folders: dict[str, frozenset[int]] = {}
        channel_names: dict[str, str] = {}
        taken_names: set[str] = set()
        lists = {"channels.json": self.z.json("channels.json", list)}
        for name in OPTIONAL_LISTS:
            lists[name] = self.z.json(name, list) if self.z.has(name) else []
        if self.z.has("integration_logs.json"):  # not imported (apps' settings), but checked
            self.z.json("integration_logs.json", None)
        for source in ("channels.json", "groups.json"):
            for index, c in enumerate(lists[source]):
                if not isinstance(c, dict) or not c.get("name") or not c.get("id"):
                    raise ArchiveError(f"{source}[{index}] is not a Slack channel (it lacks an id or a name).")
                if c["name"] in self.stream_of:
                    continue
                purpose = (c.get("purpose") or {}).get("value") if isinstance(c.get("purpose"), dict) else None
                topic = (c.get("topic") or {}).get("value") if isinstance(c.get("topic"), dict) else None
                description = html.unescape(str(purpose or topic or ""))[:1024]
                archived = bool(c.get("is_archived"))
                sid = len(self.streams) + 1
                # Slack allows 80 characters, this server 60: names that meet once cut get a number.
                name = str(c["name"])[:60]
                number = 2
                while name.lower() in taken_names:
                    name = f"{str(c['name'])[:60 - len(str(number)) - 1]}-{number}"
                    number += 1
                taken_names.add(name.lower())
                row = {"id": sid, "name": name, "description": description,
                       "rendered_description": render_plain(description) if description else "",
                       "invite_only": source == "groups.json", "history_public_to_subscribers": True,
                       "date_created": int(c.get("created") or 0), "deactivated": archived,
                       "default": not archived and (bool(c.get("is_general")) or c["name"] == "random")}
                self.streams.append(row)
                self.stream_of[str(c["name"])] = row
                channel_names[str(c["id"])] = row["name"]
                self.members[str(c["name"])] = {self.user_by_slack[m] for m in c.get("members") or []
                                                if m in self.user_by_slack}
        for source, folder_key in (("dms.json", "id"), ("mpims.json", "name")):
            for index, d in enumerate(lists[source]):
                if not isinstance(d, dict) or not d.get(folder_key) or not isinstance(d.get("members"), list):
                    raise ArchiveError(f"{source}[{index}] is not a Slack conversation (it lacks "
                                       f"{folder_key} or members).")
                ids = frozenset(self.user_by_slack[m] for m in d["members"] if m in self.user_by_slack)
                if ids:
                    self.dm_folders[str(d[folder_key])] = ids
        self.channel_names = channel_names

    def mention_for(self, slack_id: str):
        uid = self.user_by_slack.get(slack_id)
        if uid is None:
            return None
        name = self.users[uid - 1]["full_name"]
        return (f"{name}|{uid}" if self._name_counts[name.casefold()] > 1 else name), uid

    # --- messages -----------------------------------------------------------------------------

    def read_messages(self):
        self._name_counts = Counter(u["full_name"].casefold() for u in self.users)
        self.converter = Converter(self.mention_for, self.channel_names)
        days = self.z.conversation_days()
        total = sum(len(files) for folder, files in days.items())
        self.messages: list[dict[str, Any]] = []
        self.files: dict[str, dict[str, Any]] = {}  # Slack file id -> download and upload facts
        seen: set[tuple[str, str]] = set()
        done = 0
        for folder in sorted(days):
            if folder not in self.stream_of and folder not in self.dm_folders:
                # Checked all the same (all or nothing), though nothing in it is imported.
                for day in days[folder]:
                    self.z.json(f"{folder}/{day}", None)
                self.skipped.append(f"folder {folder}/: not a conversation named in channels.json, groups.json, "
                                    "dms.json or mpims.json")
                done += len(days[folder])
                continue
            for day in days[folder]:
                entry = f"{folder}/{day}"
                for index, m in enumerate(self.z.json(entry, list)):
                    if not isinstance(m, dict) or "ts" not in m:
                        raise ArchiveError(f"{self.z.prefix}{entry}[{index}] is not a Slack message (it has no ts).")
                    try:
                        _ts(m["ts"])
                    except (TypeError, ValueError):
                        raise ArchiveError(f"{self.z.prefix}{entry}[{index}] has a ts that is not a time.") from None
                    key = (folder, str(m["ts"]))
                    if key in seen:
                        continue
                    seen.add(key)
                    try:
                        self.read_message(folder, m)
                    except (TypeError, ValueError, AttributeError, KeyError) as error:
                        # A field of another type than Slack writes: named, as bad JSON is.
                        raise ArchiveError(f"{self.z.prefix}{entry}[{index}] is not a message in Slack's format "
                                           f"({type(error).__name__}: {error}).") from None
                done += 1
                self.progress("reading", done, total)
        if not total:
            self.progress("reading", 0, 0)
        self.messages.sort(key=lambda r: (r["ts"], r["folder"]))
        self.assign_topics()

    def read_message(self, folder: str, m: dict[str, Any]):
        subtype = m.get("subtype")
        if subtype in NOTICE_SUBTYPES:
            self.notices += 1
            return
        slack_user = m.get("user")
        if subtype == "file_comment" and isinstance(m.get("comment"), dict):
            slack_user = m["comment"].get("user")
        if isinstance(slack_user, str) and slack_user in self.user_by_slack:
            sender = self.user_by_slack[slack_user]
        elif slack_user == "USLACKBOT":
            sender = self.bot_by_id.get("USLACKBOT") or self._add_bot("Slackbot", "slackbot", key="USLACKBOT")
        elif not slack_user and m.get("bot_id"):
            sender = self.bot_for(str(m["bot_id"]), m)
        else:
            self.unknown_senders += 1
            return
        mentioned: set[int] = set()
        content = self.converter.rich_text(m.get("blocks"), mentioned)
        if content is None:
            content = self.converter.mrkdwn(str(m.get("text") or ""), mentioned)
        if subtype == "bot_message" or self.users[sender - 1]["is_bot"]:
            # An app's layout blocks say what its text only summarises (Zulip's importer shows
            # them instead of the text); its legacy attachments come after.
            laid_out = self.converter.layout_blocks(m.get("blocks"), mentioned)
            extra = self.converter.attachments(m.get("attachments"), mentioned)
            content = "\n".join(p for p in (laid_out or content, extra) if p)
        if subtype in ME_SUBTYPES and content:
            content = "/me " + content
        ts = _ts(m["ts"])
        links, file_ids = self.read_files(m, sender, folder, ts)
        if links:
            content = "\n".join(p for p in (content, *links) if p)
        if not content.strip():
            self.empty += 1
            return
        reactions = []
        merged: dict[str, set[int]] = {}
        for r in m.get("reactions") or []:
            if not isinstance(r, dict) or not isinstance(r.get("name"), str):
                continue
            base = r["name"].split("::", 1)[0]
            merged.setdefault(base, set()).update(self.user_by_slack[u] for u in r.get("users") or []
                                                   if u in self.user_by_slack)
        for name, users in merged.items():
            found = zulip_emoji(name)
            if found is None:
                self.custom_emoji[name] += len(users) or 1
                continue
            reactions += [(uid, found[0], found[1]) for uid in sorted(users)]
        thread = None
        if folder in self.stream_of and m.get("thread_ts"):
            thread = str(m["thread_ts"])
            _ts(thread)  # a thread's date names its topic: a ts that is not a time is refused
        self.messages.append({"ts": ts, "folder": folder, "sender": sender, "content": content,
                              "mentioned": mentioned, "thread": thread, "reactions": reactions,
                              "files": file_ids})

    def read_files(self, m: dict[str, Any], sender: int, folder: str, ts: float):
        """Markdown links for a message's files, and the ids of those to re-host."""
        files: list[Any] = m["files"] if isinstance(m.get("files"), list) else []
        if m.get("subtype") == "file_share" and isinstance(m.get("file"), dict) and not files:
            files = [m["file"]]
        links, ids = [], []
        where = f"{'#' + folder if folder in self.stream_of else 'a direct message'} on " \
                f"{datetime.fromtimestamp(ts, timezone.utc):%Y-%m-%d}"
        for f in files:
            if not isinstance(f, dict):
                continue
            title = str(f.get("title") or f.get("name") or f.get("id") or "file")
            gone = GONE_FILE_MODES.get(str(f.get("mode"))) or GONE_FILE_ACCESS.get(str(f.get("file_access")))
            if gone or not f.get("url_private"):
                self.skipped.append(f"file {title!r} in {where}: {gone or 'no download URL in the export'}")
                continue
            # Slack's own files are on its file host; any other URL is an external file's (Google
            # Drive, ...) and stays a link, as in Zulip's importer. So an export can never make the
            # importer send the token to another host, nor read a file:// URL.
            url = urlsplit(str(f["url_private"]))
            if f.get("is_external") or url.scheme not in ("http", "https") \
                    or (url.hostname or "").lower() != self.files_host:
                links.append(f"[{title}]({f['url_private']})")
                continue
            file_id = str(f.get("id") or f["url_private"])
            record = self.files.get(file_id)
            if record is None:
                name = str(f.get("name") or title)
                record = {"id": len(self.files) + 1, "slack_id": file_id, "url": str(f["url_private"]),
                          "title": title, "name": name[:255], "owner": sender,
                          "content_type": str(f.get("mimetype") or mimetypes.guess_type(name)[0]
                                              or "application/octet-stream")[:255],
                          "path_id": f"{REALM_ID}/{secrets.token_urlsafe(18)}/{_safe_file_name(name)}",
                          "create_time": int(f.get("created") or ts)}
                self.files[file_id] = record
            links.append(f"[{title}](/user_uploads/{record['path_id']})")
            ids.append(record["id"])
        return links, ids

    def assign_topics(self):
        """Topics, in time order: a thread is one topic named after its first message, as Zulip's
        importer names it; everything else in a channel goes to SLACK_TOPIC."""
        threads: dict[tuple[str, str], str] = {}
        counters: dict[str, Counter[str]] = defaultdict(Counter)
        for number, r in enumerate(self.messages, 1):
            r["id"] = number
            if r["folder"] not in self.stream_of:
                r["topic"] = ""
            elif r["thread"] is None:
                r["topic"] = SLACK_TOPIC
            else:
                key = (r["folder"], r["thread"])
                if key not in threads:
                    date = datetime.fromtimestamp(_ts(r["thread"]), timezone.utc).strftime("%Y-%m-%d")
                    name = collapse(f"{date} {r['content']}")
                    counter = counters[r["folder"]]
                    collision = counter[_truncate(name, MAX_TOPIC_LENGTH)]
                    counter[_truncate(name, MAX_TOPIC_LENGTH)] += 1
                    suffix = f" ({collision + 1})" if collision else ""
                    threads[key] = _truncate(name, MAX_TOPIC_LENGTH - len(suffix)) + suffix
                r["topic"] = threads[key]

    def load(self):
        for step, entries in ((self.read_people, "users.json"),
                              (self.read_conversations, "channels.json, groups.json, dms.json or mpims.json")):
            try:
                step()
            except (TypeError, ValueError, AttributeError, KeyError) as error:
                raise ArchiveError(f"{entries} is not in Slack's format ({type(error).__name__}: {error}).") from None
        self.read_messages()
        return self

    # --- the Writer's view (import-zulip's Archive attributes) ----------------------------------

    def writer_tables(self):
        first = int(self.messages[0]["ts"]) if self.messages else 0
        name = self.org_name or "Slack import"
        self.realm_row = {"id": REALM_ID, "name": name, "date_created": first}
        self.crossrealm: list[dict[str, Any]] = []
        self.recipients = [{"id": s["id"], "type": layout.RECIPIENT_STREAM, "type_id": s["id"]} for s in self.streams]
        self.recipient_by_id = {r["id"]: r for r in self.recipients}
        subs = []
        for folder, stream in self.stream_of.items():
            for uid in sorted(self.members[folder]):
                subs.append({"id": len(subs) + 1, "user_profile": uid, "recipient": stream["id"], "active": True})
        self.subscriptions = subs
        self.tables = {"zerver_defaultstream": [{"stream": s["id"]} for s in self.streams if s["default"]]}

    def table(self, name: str) -> list[dict[str, Any]]:
        return self.tables.get(name, [])


# --- downloads --------------------------------------------------------------------------------

class _WebRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http(s) URLs only (urllib would follow one to ftp://)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urlsplit(newurl).scheme not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, f"redirect to {urlsplit(newurl).scheme}: refused", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_WebRedirects)

def download_files(export: SlackExport, token: str | None, folder: Path, progress, *,
                   max_bytes: int = MAX_UNPACKED_BYTES):
    """Fetch every file Slack hosts into `folder`, the token sent as a Bearer header on the first
    request only (urllib keeps an unredirected header off redirects, so another host never sees
    it). ArchiveError naming the file when one cannot be downloaded."""
    records = list(export.files.values())
    if records and not token:
        raise ArchiveError(f"The export links {len(records)} files hosted by Slack (the first: "
                           f"{records[0]['title']!r}): pass --token with a Slack token that can read them.")
    total = 0
    for done, record in enumerate(records, 1):
        request = urllib.request.Request(record["url"], headers={"User-Agent": "chat-appliance import-slack"})
        request.add_unredirected_header("Authorization", f"Bearer {token}")
        target = folder / str(record["id"])
        try:
            with _OPENER.open(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response, \
                    open(target, "wb") as out:
                while chunk := response.read(1 << 20):
                    total += len(chunk)
                    if total > max_bytes:
                        raise ArchiveError(f"The export's files add up to more than {max_bytes // 1024 ** 3} GiB.")
                    out.write(chunk)
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = f"HTTP {error.code}" if isinstance(error, urllib.error.HTTPError) else \
                str(getattr(error, "reason", None) or error)
            raise ArchiveError(f"The file {record['title']!r} (Slack file {record['slack_id']}) could not be "
                               f"downloaded: {reason}.") from None
        record["source"] = target
        record["size"] = target.stat().st_size
        progress("files", done, len(records))


# --- writing ----------------------------------------------------------------------------------

class SlackWriter(Writer):
    """import-zulip's Writer, given the converted export; conversations, files and messages are
    written here, messages streamed in batches."""

    def __init__(self, export: SlackExport, instance_path, realm_url, progress):
        super().__init__(export, instance_path, realm_url, progress)
        self.export = export

    def write_direct_conversations(self):
        groups: dict[frozenset[int], int] = {}
        next_recipient = max([r["id"] for r in self.export.recipients] + [0]) + 1
        for members in self.export.dm_folders.values():
            if members not in groups:
                groups[members] = next_recipient
                next_recipient += 1
        self.insert(Recipient, [{"id": rid, "type": RECIPIENT_DIRECT_MESSAGE_GROUP} for rid in groups.values()])
        for members, rid in groups.items():
            ids = sorted(members)
            group = DirectMessageGroup.create(member_key=",".join(map(str, ids)), recipient=rid, group_size=len(ids))
            DirectMessageGroupMember.insert_many([{"group": group.id, "user_profile": i} for i in ids]).execute()
        self.dm_recipient = {folder: groups[members] for folder, members in self.export.dm_folders.items()}

    def write_files(self):
        self.insert(Attachment, [{
            "id": f["id"], "realm": self.realm.id, "owner": f["owner"], "path_id": f["path_id"],
            "file_name": f["name"], "content_type": f["content_type"], "size": f["size"],
            "create_time": f["create_time"], **f.get("image", {}),
        } for f in self.export.files.values()], "uploads")

    def copy_files(self):
        """Move the downloaded files into the instance and make their thumbnails, so that a
        message linking an image renders its preview, as one sent here would."""
        written = []
        uploads = self.instance / "uploads"
        for f in self.export.files.values():
            target = uploads / f["path_id"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(f["source"]), target)
            os.chmod(target, 0o600)
            written.append(target)
            image = thumbnail_upload(uploads, f["path_id"], f["content_type"])
            if image is not None:
                written.append(thumbnail_dir(uploads, f["path_id"]))
                f["image"] = {"image_width": image.width, "image_height": image.height,
                              "image_frames": image.frames, "thumbnail_formats": " ".join(image.formats)}
        return written

    def write_messages(self):
        export = self.export
        invalidate_render_context(self.realm.id)
        profiles = {u.id: u for u in UserProfile.select().where(UserProfile.realm == self.realm.id)}
        stream_of = {folder: s["id"] for folder, s in export.stream_of.items()}
        read, mentioned_bit, private = FLAG_BITS["read"], FLAG_BITS["mentioned"], FLAG_BITS["is_private"]
        wildcard_bit = FLAG_BITS["stream_wildcard_mentioned"]
        firsts: dict[int, int] = {}
        total = len(export.messages)
        self.counts = Counter()
        reaction_id = 0
        meta = UserMessage._meta
        user_message_columns = [f'"{meta.fields[name].column_name}"' for name in ("message", "user_profile", "flags")]
        for start in range(0, total, MESSAGE_BATCH):
            batch = export.messages[start:start + MESSAGE_BATCH]
            rows, user_rows, reactions, links, index = [], [], [], [], []
            for r in batch:
                stream_id = stream_of.get(r["folder"])
                recipient = stream_id if stream_id is not None else self.dm_recipient[r["folder"]]
                rendered = render_message(r["content"], realm=self.realm, sender=profiles[r["sender"]])
                rows.append({
                    "id": r["id"], "realm": self.realm.id, "sender": r["sender"], "recipient": recipient,
                    "stream": stream_id, "topic": r["topic"], "topic_key": r["topic"].casefold(),
                    "content": r["content"], "rendered_content": rendered.html, "date_sent": int(r["ts"]),
                    "sending_client": "Slack import", "is_me_message": rendered.is_me_message,
                    "has_link": bool(rendered.links) or bool(r["files"]), "has_image": rendered.has_image,
                    "has_attachment": bool(r["files"]),
                })
                index.append((r["id"], r["topic"], rendered.html))
                if stream_id is not None:
                    firsts.setdefault(stream_id, r["id"])
                    audience = export.members[r["folder"]]
                else:
                    audience = export.dm_folders[r["folder"]]
                mentioned = set(rendered.mentioned_user_ids) | r["mentioned"]
                for uid in sorted(audience):
                    bits = read | (private if stream_id is None else 0)
                    if uid in mentioned:
                        bits |= mentioned_bit
                    if rendered.stream_wildcard:
                        bits |= wildcard_bit
                    user_rows.append((r["id"], uid, bits))
                seen = set()
                for uid, name, code in r["reactions"]:
                    if (uid, code) in seen:
                        continue
                    seen.add((uid, code))
                    reaction_id += 1
                    reactions.append({"id": reaction_id, "message": r["id"], "user_profile": uid, "emoji_name": name,
                                      "emoji_code": code, "reaction_type": "unicode_emoji"})
                links += [{"attachment_id": f, "message_id": r["id"]} for f in dict.fromkeys(r["files"])]
            self.insert(Message, rows)
            # The bulk of the rows (one per recipient): inserted as tuples, without the per-value
            # conversion Writer.insert does for rows of any shape.
            bulk_insert(f'"{UserMessage._meta.table_name}"', user_message_columns, user_rows)
            self.insert(Reaction, reactions)
            self.insert(AttachmentMessage, links)
            backend().index_messages(Message._meta.database, index, new=True)
            self.counts["user_messages"] += len(user_rows)
            self.counts["reactions"] += len(reactions)
            self.progress("messages", min(start + MESSAGE_BATCH, total), total)
        if not total:
            self.progress("messages", 0, 0)
        for stream_id, first in firsts.items():
            Stream.update(first_message_id=first).where(Stream.id == stream_id).execute()

    def write_tables(self):
        """The tables a Slack export fills, in foreign-key order (the files before the messages
        that link them)."""
        self.write_realm()
        self.write_users()
        self.write_groups()
        self.write_channels()
        self.write_direct_conversations()
        self.write_files()
        self.write_messages()
        self.finish_realm()


# --- the command ------------------------------------------------------------------------------

def import_slack(path, instance_path, *, token=None, realm_url="http://localhost:9991", org_name=None,
                 progress=None, files_host=SLACK_FILES_HOST):
    """Read, check and download the export at `path`, then write it into a new instance at
    `instance_path` (which must not exist or be empty). Raises ArchiveError, with the instance
    folder as it was, when anything is wrong. Returns a summary dict."""
    from urllib.parse import urlparse

    progress = progress or (lambda label, done, total: None)
    instance = Path(instance_path)
    existed = instance.exists()
    if existed and (not instance.is_dir() or any(instance.iterdir())):
        raise ArchiveError(f"{instance} already holds files (an organization?): import into a new or empty folder.")
    host = urlparse(realm_url).hostname or "localhost"
    archive = SlackZip(Path(path))
    default_name = Path(path).stem.split(" Slack export")[0].strip() or None
    export = SlackExport(archive, host=host, org_name=org_name or default_name, progress=progress,
                         files_host=files_host).load()
    downloads = Path(tempfile.mkdtemp(prefix="chat-appliance-slack-"))
    try:
        download_files(export, token, downloads, progress)
        export.writer_tables()
        try:
            with exclusively(instance, "import-slack"):
                _write(export, instance, realm_url, progress)
        except BaseException as error:
            _restore(instance, existed)
            if isinstance(error, InstanceBusy):
                raise ArchiveError(str(error)) from None
            if isinstance(error, DatabaseError):
                # The checks above should leave nothing for the database to refuse; if it does,
                # the import still ends as a bad input does, with the folder as it was.
                raise ArchiveError(f"The database refused the export's data ({error}); nothing was imported. "
                                   "Please report this with the export's shape.") from None
            raise
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
    return summarize(export)


def _write(export, instance, realm_url, progress):
    make_instance_folder(instance)
    config = load_config(instance)
    init_database(config["DATABASE_URL"], inline_image_preview=config["INLINE_IMAGE_PREVIEW"])
    migrate()
    with database.connection_context():
        if Realm.select().exists():
            raise ArchiveError(f"The database of {instance} already holds an organization.")
        writer = SlackWriter(export, instance, realm_url, progress)
        writer.run()
    export.written = writer.counts


def _restore(instance: Path, existed: bool):
    """Put the instance folder back as it was: gone, or empty."""
    try:
        close_connection()
    except Exception:  # noqa: BLE001 - nothing may hide the error that brought us here
        pass
    if not existed:
        shutil.rmtree(instance, ignore_errors=True)
    elif instance.is_dir():
        for child in instance.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


def summarize(export: SlackExport) -> dict[str, Any]:
    skipped = list(export.skipped)
    if export.notices:
        skipped.append(f"{export.notices} join, leave, rename and pin notices: not imported, as Zulip does")
    if export.unknown_senders:
        skipped.append(f"{export.unknown_senders} messages whose sender is not in users.json")
    if export.empty:
        skipped.append(f"{export.empty} messages with no text or file")
    for name, count in sorted(export.custom_emoji.items()):
        skipped.append(f"reactions with :{name}: ({count}): a custom emoji or one not in the emoji table; "
                       "custom emoji are not part of a Slack export")
    people = [u for u in export.users if not u["is_bot"]]
    return {"users": len(people), "bots": len(export.users) - len(people),
            "deactivated": sum(1 for u in people if not u["is_active"]),
            "channels": len(export.streams),
            "direct_conversations": len(set(export.dm_folders.values())),
            "messages": len(export.messages), "reactions": export.written["reactions"],
            "uploads": len(export.files), "skipped": skipped}
