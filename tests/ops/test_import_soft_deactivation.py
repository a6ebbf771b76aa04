"""`import-zulip` and soft deactivation: the export's long_term_idle and last_active_message_id
arrive, an idle person's plain rows in their window are not written (their catch-up adds them),
and on their return the API shows them every message and unread count the export gave them."""

import json

from chat_appliance.models import database

from ..support.big_export import write_export
from ..support.helpers import ok
from ..support.imports import REGISTER_EXTRA, UNREAD, all_messages, clients_for, import_measured


def idle_state(user_ids):
    with database.connection_context():
        return {uid: (bool(idle), last) for uid, idle, last in database.execute_sql(
            "SELECT id, long_term_idle, last_active_message_id FROM user_profile WHERE id IN (%s)"
            % ",".join(str(int(u)) for u in user_ids)).fetchall()}


def rows_of(user_id):
    with database.connection_context():
        return database.execute_sql("SELECT COUNT(*) FROM user_message WHERE user_profile_id = %s"
                                    % int(user_id)).fetchone()[0]


def test_idle_people_arrive_idle_and_whole_on_return(tmp_path, monkeypatch):
    """From an export that carries every row of its idle people (as a server without soft
    deactivation has them), does the import mark them idle with their window, leave out their
    plain rows in it, and on an idle person's first request give them every message they
    received, their unread count and their unread mentions, as the export had them?"""
    shape = {"people": 30, "channels": 20, "messages": 1500}
    stats = write_export(tmp_path / "export", idle_rows="all", **shape)
    assert len(stats["idle"]) >= 5
    import_measured(tmp_path / "export", tmp_path / "instance", monkeypatch)
    person, since = max(stats["idle"].items(), key=lambda item: stats["received"][item[0]] - item[1])
    client, = clients_for(tmp_path / "instance", person)
    assert idle_state(stats["idle"]) == {uid: (True, last) for uid, last in stats["idle"].items()}
    assert rows_of(person) < stats["received"][person]  # the plain rows of the window wait
    mine = all_messages(client)
    assert not idle_state([person])[person][0]  # that request brought them back
    assert len(mine) == stats["received"][person] == rows_of(person)
    state = ok(client.post("register", fetch_event_types=UNREAD), undocumented=REGISTER_EXTRA)
    assert state["unread_msgs"]["count"] == stats["unread"][person]
    unread = all_messages(client, narrow=json.dumps([{"operator": "is", "operand": "unread"}]))
    assert len(unread) == stats["unread"][person]
    assert all(m["id"] > since or m["type"] == "private" or "read" not in m["flags"] for m in unread)


def test_import_of_soft_deactivated_export_matches(tmp_path, monkeypatch):
    """From an export written as a soft-deactivating server writes it (idle people's rows in their
    window only where flagged), does an idle person get on return exactly what the export says
    they received and have unread, with the rows added by their catch-up?"""
    stats = write_export(tmp_path / "export", people=30, channels=20, messages=1500)
    import_measured(tmp_path / "export", tmp_path / "instance", monkeypatch)
    person = max(stats["idle"], key=lambda uid: stats["received"][uid] - stats["idle"][uid])
    client, = clients_for(tmp_path / "instance", person)  # binds the models to the new instance
    before = rows_of(person)
    assert len(all_messages(client)) == stats["received"][person] > before
    state = ok(client.post("register", fetch_event_types=UNREAD), undocumented=REGISTER_EXTRA)
    assert state["unread_msgs"]["count"] == stats["unread"][person]
