"""Slack workspace exports for the import-slack tests and benchmark, written as Slack documents its
export (slack.com/help/articles/220556107): users.json and channels.json at the top, groups.json,
dms.json and mpims.json beside them, and one folder of YYYY-MM-DD.json days per conversation.

Also a file host standing in for files.slack.com: files served from 127.0.0.1, only to a request
bearing the right token, with every request's path and Authorization header recorded."""

import json
import threading
import zipfile
from collections import defaultdict
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "xoxp-test-token-123"
DAY = 86400
START = 1_700_000_000  # 2023-11-14


def ts(seconds, micro=0):
    """Slack's message id: UNIX seconds with six decimals, as a string."""
    return f"{seconds}.{micro:06d}"


def day_of(stamp):
    return datetime.fromtimestamp(float(stamp), timezone.utc).strftime("%Y-%m-%d")


class SlackExportBuilder:
    """Collects users, conversations and messages; `write(path)` zips them as Slack does."""

    def __init__(self):
        self.users, self.channels, self.groups, self.dms, self.mpims = [], [], [], [], []
        self.days = defaultdict(lambda: defaultdict(list))  # folder -> day -> messages
        self.extra_entries = {}

    def user(self, uid, name, real_name, email=None, **flags):
        profile = {"real_name": real_name, "display_name": name, "email": email,
                   "image_72": f"https://avatars.example/{uid}.png"}
        if email is None:
            profile.pop("email")
        row = {"id": uid, "team_id": "T0001", "name": name, "deleted": False, "real_name": real_name,
               "tz": "Europe/London", "tz_label": "Greenwich Mean Time", "tz_offset": 0, "is_admin": False,
               "is_owner": False, "is_primary_owner": False, "is_restricted": False, "is_ultra_restricted": False,
               "is_bot": False, "is_app_user": False, "updated": START, "profile": profile}
        row.update(flags)
        self.users.append(row)
        return row

    def channel(self, cid, name, members, *, private=False, purpose="", topic="", **flags):
        row = {"id": cid, "name": name, "created": START - DAY, "creator": members[0], "is_archived": False,
               "is_general": False, "members": list(members),
               "topic": {"value": topic, "creator": members[0], "last_set": 0},
               "purpose": {"value": purpose, "creator": members[0], "last_set": 0}, "pins": []}
        row.update(flags)
        (self.groups if private else self.channels).append(row)
        return row

    def dm(self, did, members):
        self.dms.append({"id": did, "created": START, "members": list(members)})

    def mpim(self, gid, name, members):
        self.mpims.append({"id": gid, "name": name, "created": START, "creator": members[0], "is_archived": False,
                           "members": list(members), "topic": {"value": "", "creator": "", "last_set": 0},
                           "purpose": {"value": "", "creator": "", "last_set": 0}})

    def message(self, folder, stamp, user=None, text="", **fields):
        row = {"type": "message", "text": text, "ts": stamp}
        if user is not None:
            row["user"] = user
            row["team"] = "T0001"
        row.update(fields)
        self.days[folder][day_of(stamp)].append(row)
        return row

    def write(self, path):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("users.json", json.dumps(self.users))
            z.writestr("channels.json", json.dumps(self.channels))
            z.writestr("groups.json", json.dumps(self.groups))
            z.writestr("dms.json", json.dumps(self.dms))
            z.writestr("mpims.json", json.dumps(self.mpims))
            z.writestr("integration_logs.json", json.dumps({"ok": True, "logs": []}))
            for folder, days in self.days.items():
                for day, messages in sorted(days.items()):
                    z.writestr(f"{folder}/{day}.json", json.dumps(messages, indent=4))
            for name, data in self.extra_entries.items():
                z.writestr(name, data)
        return path


class FileHost:
    """A local stand-in for Slack's file host: GET /files/NAME answers the file's bytes to a
    request bearing `Bearer TOKEN`, 403 to any other; every request is recorded."""

    def __init__(self, files=None, token=TOKEN):
        self.files = dict(files or {})
        self.requests = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                host.requests.append((self.path, self.headers.get("Authorization")))
                name = self.path.split("/files/", 1)[-1]
                if self.headers.get("Authorization") != f"Bearer {token}":
                    self.send_response(403)
                    self.end_headers()
                    return
                if name not in host.files:
                    self.send_response(404)
                    self.end_headers()
                    return
                body = host.files[name]
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name):
        return f"http://127.0.0.1:{self.server.server_address[1]}/files/{name}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def slack_file(fid, name, url, *, mimetype="text/plain", title=None, **fields):
    row = {"id": fid, "created": START, "timestamp": START, "name": name, "title": title or name,
           "mimetype": mimetype, "filetype": name.rsplit(".", 1)[-1], "user": "U01", "mode": "hosted",
           "is_external": False, "external_type": "", "size": 0, "url_private": url,
           "url_private_download": url + "?download=1"}
    row.update(fields)
    return row


def text_block(*elements):
    """A rich_text block of the given block elements."""
    return [{"type": "rich_text", "block_id": "b1", "elements": list(elements)}]


def section(*elements):
    return {"type": "rich_text_section", "elements": list(elements)}


def t(text, **style):
    row = {"type": "text", "text": text}
    if style:
        row["style"] = style
    return row
