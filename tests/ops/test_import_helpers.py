"""`import-zulip` with helper processes reading the message files: the same organization as an
import that reads them itself, and an export changed under it still refused as a whole."""

import json
import shutil

from chat_appliance.models import database

from ..support.big_export import write_export
from ..support.imports import all_messages, clients_for, import_with_helpers

SHAPE = {"people": 30, "channels": 20, "messages": 3500}  # four message files, some people idle


def stored(instance, reader):
    """What the import wrote that the helpers shaped: every message, every per-user row, and
    what a member finds by searching."""
    client, = clients_for(instance, reader)  # binds the models to this instance
    with database.connection_context():
        messages = database.execute_sql(
            "SELECT id, sender_id, recipient_id, stream_id, topic, content, rendered_content, date_sent"
            " FROM message ORDER BY id").fetchall()
        rows = database.execute_sql(
            "SELECT message_id, user_profile_id, flags FROM user_message ORDER BY message_id, user_profile_id").fetchall()
    found = [m["id"] for m in all_messages(client, narrow=json.dumps([{"operator": "search", "operand": "the"}]))]
    return [tuple(m) for m in messages], [tuple(r) for r in rows], found


def test_helpers_write_what_the_import_alone_writes(tmp_path, monkeypatch):
    """Do two helper processes, and one, give the same messages, per-user rows (idle people's
    left out alike) and search results as an import that reads its files itself?"""
    # With every row of the idle people in it, as a server without soft deactivation writes it:
    # the plain rows of their idle window are the ones the import leaves out.
    stats = write_export(tmp_path / "export", idle_rows="all", **SHAPE)
    assert stats["idle"]
    results = {}
    for helpers in (0, 1, 2):
        summary = import_with_helpers(tmp_path / "export", tmp_path / f"instance-{helpers}", monkeypatch, helpers)
        assert summary["messages"] == SHAPE["messages"], summary
        results[helpers] = stored(tmp_path / f"instance-{helpers}", stats["reader"])
    messages, rows, found = results[0]
    assert len(messages) == SHAPE["messages"] and len(rows) > SHAPE["messages"] and found
    assert results[1] == results[0]
    assert results[2] == results[0]


def test_a_file_changed_after_the_check_stops_the_import_whole(tmp_path, monkeypatch):
    """If a message file changes between the check and the write (a row naming a missing person;
    the file replaced by a link), does the helpers' second read find it, does the import end
    with a message naming the file, and is nothing written?"""
    write_export(tmp_path / "export", **SHAPE)
    for change, said in (("missing_person", "messages-000003.json changed during the import"),
                         ("link", "messages-000003.json in the export is a symbolic link")):
        export = tmp_path / f"export-{change}"
        shutil.copytree(tmp_path / "export", export)
        result = import_with_helpers(export, tmp_path / f"instance-{change}", monkeypatch, 2, change)
        assert said in result.get("error", ""), result
        assert result["messages written"] == 0


def test_rows_in_any_order_and_repeated_arrive_once(tmp_path, monkeypatch):
    """If a message file's per-user rows are shuffled and some repeated (next to each other, and
    apart), does the import store each (message, person) once, as from the file as written?"""
    import random

    stats = write_export(tmp_path / "export", idle_rows="all", **SHAPE)
    shuffled = tmp_path / "shuffled"
    shutil.copytree(tmp_path / "export", shuffled)
    for name, mix in (("messages-000002.json", "apart"), ("messages-000003.json", "adjacent")):
        data = json.loads((shuffled / name).read_text())
        rows = data["zerver_usermessage"]
        if mix == "apart":
            random.Random(2).shuffle(rows)
            rows += rows[:50]
        else:
            rows[10:10] = rows[:10]
        (shuffled / name).write_text(json.dumps(data))
    for export in ("export", "shuffled"):
        summary = import_with_helpers(tmp_path / export, tmp_path / f"instance-{export}", monkeypatch, 1)
        assert summary["messages"] == SHAPE["messages"], summary
    assert stored(tmp_path / "instance-shuffled", stats["reader"]) == stored(tmp_path / "instance-export", stats["reader"])
