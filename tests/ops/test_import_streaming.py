"""`import-zulip` streams: its memory does not grow with the export's message count, and every
message and per-user row arrives. Each import runs in its own process, measured with tracemalloc
(the memory Python holds, which is what an import that kept every row would spend)."""

import json

import pytest

from ..support.big_export import write_export
from ..support.helpers import ok
from ..support.imports import REGISTER_EXTRA, UNREAD, all_messages, clients_for, import_measured


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
