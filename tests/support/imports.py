"""Importing an export in a process of its own and reading the new instance through the API
(tests/ops/test_import_streaming.py, tests/ops/test_import_soft_deactivation.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from chat_appliance.app import create_app
from chat_appliance.config import load_config
from chat_appliance.models import UserProfile, database

from . import pg
from .helpers import FAST_HASH, ApiClient, ok

ROOT = Path(__file__).resolve().parents[2]
# /register keys real Zulip sends that this copy of the API description lacks.
REGISTER_EXTRA = ("server_report_message_types",)
# Zulip sends unread_msgs only to a client that follows both new messages and flag changes.
UNREAD = ["message", "update_message_flags"]

# The import reads its message files itself (helpers=0): tracemalloc sees this process only, and
# the question is whether what the import holds grows with the export (a helper process holds
# the file it reads; tests/ops/test_import_helpers.py shows helpers write the same rows).
MEASURE = """
import json, sys, tracemalloc
tracemalloc.start()
from chat_appliance.ops.transfer.importer import import_export
summary = import_export(sys.argv[1], sys.argv[2], helpers=0)
print(json.dumps({"peak": tracemalloc.get_traced_memory()[1], "summary": summary}))
"""


def import_measured(export, instance, monkeypatch):
    """Import in a fresh process; (peak bytes Python held, the import's summary)."""
    pg.use_fresh_database(monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", MEASURE, str(export), str(instance)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["peak"], result["summary"]


IMPORT_WITH_HELPERS = """
import json, os, sys
from chat_appliance.models import Message, database
from chat_appliance.ops.transfer import message_files
from chat_appliance.ops.transfer.importer import ArchiveError, Writer, import_export

message_files.HELPERS_FROM_FILES = 1  # helpers even for a test's few files
export, instance, helpers, change = sys.argv[1:5]


def missing_person(path):
    data = json.loads(path.read_text())
    data["zerver_usermessage"][0]["user_profile"] = 999_999
    path.write_text(json.dumps(data))


def link(path):
    os.replace(path, path.with_suffix(".moved"))
    os.symlink(path.with_suffix(".moved"), path)


if change != "none":  # the third message file changed once the check has passed, before the write
    checked = Writer.write_direct_conversations

    def then_change(self):
        checked(self)
        globals()[change](self.a.folder / "messages-000003.json")

    Writer.write_direct_conversations = then_change
try:
    print(json.dumps(import_export(export, instance, helpers=int(helpers))))
except ArchiveError as error:
    with database.connection_context():
        print(json.dumps({"error": str(error), "messages written": Message.select().count()}))
"""


def import_with_helpers(export, instance, monkeypatch, helpers, change="none"):
    """Import in a fresh process with `helpers` processes reading the message files, however
    few; the summary, or {"error", "messages written"} when it failed. `change` ("missing_person",
    "link") changes the third message file after the check, before the write."""
    pg.use_fresh_database(monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", IMPORT_WITH_HELPERS, str(export), str(instance), str(helpers),
                           change], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def clients_for(instance, *user_ids):
    """API clients on the imported instance as the people with these ids."""
    app = create_app({"INSTANCE_PATH": str(instance), "DATABASE_URL": load_config(instance)["DATABASE_URL"],
                      "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False, "TESTING": True})
    with database.connection_context():
        users = [UserProfile.get_by_id(user_id) for user_id in user_ids]
    return [ApiClient(app.test_client(), user.email, user.api_key) for user in users]


def all_messages(client, **params):
    """Every message the client can fetch with these parameters, oldest first, page by page."""
    found, anchor = [], "oldest"
    while True:
        page = ok(client.get("messages", anchor=anchor, num_before=0, num_after=1000, **params))
        found += [m for m in page["messages"] if not found or m["id"] > found[-1]["id"]]
        if page["found_newest"]:
            return found
        anchor = found[-1]["id"]
