"""`import-zulip` streams: its memory does not grow with the export's message count, and every
message and per-user row arrives. Each import runs in its own process, measured with tracemalloc
(the memory Python holds, which is what an import that kept every row would spend)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chat_appliance.app import create_app
from chat_appliance.config import load_config
from chat_appliance.models import UserProfile, database

from ..support import pg
from ..support.big_export import write_export
from ..support.helpers import FAST_HASH, ApiClient, ok

ROOT = Path(__file__).resolve().parents[2]
# /register keys real Zulip sends that this copy of the API description lacks.
REGISTER_EXTRA = ("server_report_message_types",)
# Zulip sends unread_msgs only to a client that follows both new messages and flag changes.
UNREAD = ["message", "update_message_flags"]

MEASURE = """
import json, sys, tracemalloc
tracemalloc.start()
from chat_appliance.ops.transfer.importer import import_export
summary = import_export(sys.argv[1], sys.argv[2])
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


@pytest.mark.timeout(600)  # two imports and two exports: 55 s alone, 200 s on a loaded 2-core machine
def test_import_memory_does_not_grow_with_the_message_count(tmp_path, monkeypatch):
    """Does importing eight times the messages (and of per-user rows) leave the import's peak
    memory about where it was, and does everything arrive: every message in the summary, each
    person's received and unread messages, the big channel's history, through the API?"""
    shape = {"people": 30, "channels": 80}
    small = write_export(tmp_path / "small", messages=1000, **shape)
    large = write_export(tmp_path / "large", messages=8000, **shape)
    assert large["user_messages"] > 7 * small["user_messages"]
    small_peak, _ = import_measured(tmp_path / "small", tmp_path / "small-instance", monkeypatch)
    large_peak, summary = import_measured(tmp_path / "large", tmp_path / "large-instance", monkeypatch)
    # Holding the extra 7,000 messages and their per-user rows would cost tens of MiB more; a
    # streaming import's extra is its 8 bytes per message id and the reactions of realm.json.
    print(f"peak traced memory: {small_peak / 2**20:.1f} MiB for 1,000 messages, "
          f"{large_peak / 2**20:.1f} MiB for 8,000")
    assert large_peak < small_peak * 1.25 + 2 * 1024 ** 2, (small_peak, large_peak)

    assert (summary["messages"], summary["users"], summary["channels"]) == (8000, 30, 80)
    assert summary["reactions"] == large["reactions"] and summary["uploads"] == large["uploads"]
    reader, other = clients_for(tmp_path / "large-instance", large["reader"], large["unread_5k"])
    mine = all_messages(reader)
    assert len(mine) == large["received"][large["reader"]]
    unread = ok(reader.post("register", fetch_event_types=UNREAD), undocumented=REGISTER_EXTRA)
    assert unread["unread_msgs"]["count"] == large["unread"][large["reader"]]
    unread = ok(other.post("register", fetch_event_types=UNREAD), undocumented=REGISTER_EXTRA)
    assert unread["unread_msgs"]["count"] == large["unread"][large["unread_5k"]]
    big = all_messages(other, narrow=json.dumps([{"operator": "channel", "operand": "big-channel"}]))
    assert big and all(m["display_recipient"] == "big-channel" for m in big)
    assert sum(1 for m in mine if m.get("display_recipient") == "big-channel") in (0, len(big))
