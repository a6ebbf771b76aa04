"""Organization export (POST/GET /export/realm, /export/realm/consents, `chat-appliance export`) and
import (`chat-appliance import-zulip`): an export re-imports into a fresh instance with everything
intact; a hand-built export shaped like Zulip's imports; bad archives are refused before any write."""

import json
from pathlib import Path

import pytest

from chat_appliance.models import RealmExport, UserProfile, database
from chat_appliance.ops.transfer.importer import ArchiveError, import_export

from ..support import pg
from ..support.helpers import (
    PNG,
    ZULIP_REALM_ID,
    err,
    new_instance_client,
    ok,
    polled,
    queues,
    upload,
    upload_emoji,
    zulip_export,
)


def snapshot(client):
    """Everything a user sees of their messages: ids, text, HTML, flags, reactions, senders, places."""
    body = ok(client.get("messages", anchor="newest", num_before=1000, num_after=0, apply_markdown=True))
    return [(m["id"], m["content"], m["sender_id"], m["subject"], m.get("stream_id"), sorted(m["flags"]),
             sorted((r["user_id"], r["emoji_name"], r["emoji_code"], r["reaction_type"]) for r in m["reactions"]),
             m["timestamp"], m["type"])
            for m in body["messages"]]


def fill_organization(org):
    """Messages of every kind, reactions (one with a custom emoji), flags, an upload, statuses and
    personal lists; returns (upload url, upload bytes)."""
    hamlet, othello, admin = org.client(org.hamlet), org.client(org.othello), org.client(org.admin)
    ok(upload_emoji(org, org.hamlet, "appliance_parrot"))
    url = ok(upload(org, org.hamlet, b"\x00report bytes\xff", name="report.pdf"))["url"]
    channel = ok(hamlet.post("messages", type="stream", to="Denmark", topic="plans",
                             content=f"See [the report]({url}) :appliance_parrot:"))["id"]
    secret = ok(admin.post("messages", type="stream", to="secret", topic="hush", content="private words"))["id"]
    direct = ok(hamlet.post("messages", type="direct", to=[org.othello.id], content="just us"))["id"]
    group = ok(othello.post("messages", type="direct", to=[org.hamlet.id, org.cordelia.id], content="three of us"))[
        "id"]
    ok(othello.post(f"messages/{channel}/reactions", emoji_name="appliance_parrot"))
    ok(hamlet.post(f"messages/{direct}/reactions", emoji_name="wave"))
    ok(othello.post("messages/flags", messages=[channel, direct], op="add", flag="starred"))
    ok(othello.post("messages/flags", messages=[channel], op="add", flag="read"))
    ok(hamlet.post("messages/flags", messages=[secret], op="add", flag="starred"))
    ok(hamlet.post("users/me/status", status_text="exporting"))
    ok(othello.post("users/me/alert_words", alert_words=["castle"]))
    ok(othello.post(f"users/me/muted_users/{org.cordelia.id}"))
    folder_id = ok(admin.post("channel_folders/create", name="Kingdoms", description="Lands"))["channel_folder_id"]
    ok(admin.patch(f"streams/{org.denmark.id}", folder_id=folder_id))
    ok(hamlet.post("saved_snippets", title="Greeting", content="Good morrow"))
    ok(hamlet.post("navigation_views", fragment="narrow/channel/Denmark", is_pinned=True, name="Home"))
    return url


def test_export_reimports_intact(org, app, tmp_path_factory, monkeypatch):
    """Does an API export re-import into a fresh instance with every message, reaction, flag, upload,
    custom emoji and personal setting intact, as each user sees them?"""
    url = fill_organization(org)
    people = [org.hamlet, org.othello, org.admin, org.cordelia]
    before = {u.delivery_email: snapshot(org.client(u)) for u in people}
    emoji_before = ok(org.client(org.hamlet).get("realm/emoji"))["emoji"]
    with database.connection_context():
        for user in UserProfile.select():
            from chat_appliance.actions.users import do_change_settings

            do_change_settings(user, {"allow_private_data_export": True})
    export_id = ok(org.client(org.owner).post("export/realm", export_type=2))["id"]
    with database.connection_context():
        folder = Path(app.config["INSTANCE_PATH"]) / RealmExport.get_by_id(export_id).path
    target = tmp_path_factory.mktemp("imported") / "instance"
    with database.connection_context():
        from chat_appliance.models import Message

        message_count = Message.select().count()
    pg.use_fresh_database(monkeypatch)  # the new instance's database, on PostgreSQL
    summary = import_export(folder, target)
    assert summary["messages"] == message_count
    for user in people:
        flask_client, client = new_instance_client(target, user.delivery_email)
        assert snapshot(client) == before[user.delivery_email], user.delivery_email
    flask_client, hamlet = new_instance_client(target, org.hamlet.delivery_email)
    download = flask_client.get(url, headers=hamlet.headers)
    assert download.status_code == 200 and download.data == b"\x00report bytes\xff"
    assert ok(hamlet.get("realm/emoji"))["emoji"] == emoji_before
    [entry] = emoji_before.values()
    assert flask_client.get(entry["source_url"]).data == PNG
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {"status_text": "exporting"}
    assert [(s["title"], s["content"]) for s in ok(hamlet.get("saved_snippets"))["saved_snippets"]] == [
        ("Greeting", "Good morrow")]
    assert ("narrow/channel/Denmark", "Home") in [(v["fragment"], v["name"])
                                                  for v in ok(hamlet.get("navigation_views"))["navigation_views"]]
    [folder] = ok(hamlet.get("channel_folders"))["channel_folders"]
    assert folder["name"] == "Kingdoms"
    assert ok(hamlet.get(f"streams/{org.denmark.id}"))["stream"]["folder_id"] == folder["id"]
    _, othello = new_instance_client(target, org.othello.delivery_email)
    assert ok(othello.get("users/me/alert_words"))["alert_words"] == ["castle"]
    state = ok(othello.post("register", fetch_event_types=["muted_users", "realm_user"]),
               undocumented=("server_report_message_types",))
    assert [m["id"] for m in state["muted_users"]] == [org.cordelia.id]
    assert ok(othello.post("messages", type="stream", to="Denmark", topic="after", content="still works"))["id"]


def test_export_endpoints(org, app):
    """Do POST/GET /export/realm list a finished export with a downloadable URL, with events to
    administrators only, and do members get refused? Does the public export leave out private
    channels and direct messages?"""
    dm = ok(org.client(org.hamlet).post("messages", type="direct", to=[org.othello.id], content="dm"))["id"]
    public_id = ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="hi"))["id"]
    qs = queues(org, org.admin, org.hamlet, event_types=["realm_export"])
    err(org.client(org.hamlet).post("export/realm"), 400, "UNAUTHORIZED_PRINCIPAL")
    err(org.client(org.admin).post("export/realm", export_type=3), 400, "BAD_REQUEST")
    export_id = ok(org.client(org.admin).post("export/realm"))["id"]
    [listed] = ok(org.client(org.admin).get("export/realm"))["exports"]
    assert listed["id"] == export_id and listed["pending"] is False and listed["export_type"] == 1
    path = listed["export_url"].split("://", 1)[1].split("/", 1)[1]
    download = org.flask_client.get("/" + path)
    assert download.status_code == 200 and download.data[:2] == b"\x1f\x8b"
    assert org.flask_client.get("/" + path.replace(".tar.gz", "x.tar.gz")).status_code == 404
    events = polled(qs, org.admin)
    assert [e["exports"][0]["pending"] for e in events] == [True, False]
    assert polled(qs, org.hamlet) == []
    with database.connection_context():
        folder = Path(app.config["INSTANCE_PATH"]) / RealmExport.get_by_id(export_id).path
    realm = json.loads((folder / "realm.json").read_text())
    messages = json.loads((folder / "messages-000001.json").read_text())["zerver_message"]
    public = {s["recipient"] for s in realm["zerver_stream"] if not s["invite_only"]}
    assert public_id in [m["id"] for m in messages] and dm not in [m["id"] for m in messages]
    assert all(m["recipient"] in public for m in messages)


def test_export_consents(org):
    """Does GET /export/realm/consents list each person's consent, and does changing it tell admins?"""
    qs = queues(org, org.admin, event_types=["realm_export_consent"])
    ok(org.client(org.hamlet).patch("settings", allow_private_data_export=True))
    consents = {c["user_id"]: c["consented"] for c in ok(org.client(org.admin).get("export/realm/consents"))[
        "export_consents"]}
    assert consents[org.hamlet.id] is True and consents[org.othello.id] is False and org.bot.id not in consents
    [event] = polled(qs, org.admin)
    assert (event["user_id"], event["consented"]) == (org.hamlet.id, True)
    err(org.client(org.hamlet).get("export/realm/consents"), 400, "UNAUTHORIZED_PRINCIPAL")


# --- a hand-built export shaped like Zulip's --------------------------------------------------


def test_zulip_shaped_export_imports(tmp_path, monkeypatch):
    """Does a Zulip-shaped export import: people with their roles and settings, the channel and its
    subscriptions, a channel message with its upload and a custom-emoji reaction, a one-to-one
    message rendered on import, Zulip's flag bits, the default channel, and system bots? Do a
    one-to-one message and a group message of the same two people land in one conversation?"""
    target = tmp_path / "instance"
    pg.use_fresh_database(monkeypatch)  # the new instance's database, on PostgreSQL
    summary = import_export(zulip_export(tmp_path / "export"), target, realm_url="http://chat.team.example")
    assert (summary["source"], summary["messages"], summary["users"]) == ("zulip", 3, 2)
    flask_client, bob = new_instance_client(target, "bob@team.example")
    messages = ok(bob.get("messages", anchor="newest", num_before=10, num_after=0))["messages"]
    channel, direct, group = messages
    assert group["recipient_id"] == direct["recipient_id"]
    conversation = ok(bob.get("messages", anchor="newest", num_before=10, num_after=0,
                              narrow=[{"operator": "dm", "operand": [10]}]))["messages"]
    assert [m["id"] for m in conversation] == [1001, 1002]
    assert (channel["id"], channel["subject"], channel["display_recipient"], channel["timestamp"]) == (
        1000, "launch", "engineering", 1600000100)
    assert sorted(channel["flags"]) == ["read", "starred"]
    assert channel["reactions"][0]["emoji_code"] == "5" and channel["reactions"][0]["reaction_type"] == "realm_emoji"
    assert direct["content"] == "<p>hi <strong>Ada</strong></p>" and direct["type"] == "private"
    assert {u["id"] for u in direct["display_recipient"]} == {10, 11}
    assert sorted(direct["flags"]) == ["read"]
    assert bob.headers and bob.get("users/me").get_json()["email"] == "user11@chat.team.example"
    download = flask_client.get(f"/user_uploads/{ZULIP_REALM_ID}/ab/Xyz123/plan.txt", headers=bob.headers)
    assert download.status_code == 200 and download.data == b"ship it!\n"
    [emoji] = ok(bob.get("realm/emoji"))["emoji"].values()
    assert emoji["name"] == "shipit" and flask_client.get(emoji["source_url"]).data == PNG
    subs = ok(bob.get("users/me/subscriptions"))["subscriptions"]
    assert [(s["name"], s["is_muted"], s["color"]) for s in subs] == [("engineering", True, "#e79ab5")]
    assert ok(bob.get("users/me/alert_words"))["alert_words"] == ["deploy"]
    _, ada = new_instance_client(target, "ada@team.example")
    profile = ok(ada.get("users/me"))
    assert profile["role"] == 100 and profile["is_owner"] is True
    settings = ok(ada.post("register", fetch_event_types=["user_settings"]),
                  undocumented=("server_report_message_types",))["user_settings"]
    assert settings["twenty_four_hour_time"] is True
    new_id = ok(ada.post("messages", type="direct", to=[11], content="welcome aboard"))["id"]
    assert new_id > 1001
    with database.connection_context():
        assert UserProfile.get(UserProfile.email == "welcome-bot@chat.team.example").id == 2


def test_export_from_zulip_before_10_imports(tmp_path):
    """Does an export without migration_status.json (Zulip wrote it from version 10 on) import?"""
    folder = zulip_export(tmp_path / "export")
    (folder / "migration_status.json").unlink()
    summary = import_export(folder, tmp_path / "instance")
    assert (summary["messages"], summary["version"]) == (3, "before 10.0")


def test_import_writes_without_a_log_and_the_server_turns_it_on(tmp_path):
    """On SQLite, does the import leave its new database without a write-ahead log (the load
    reads its rows back to build the indexes, which is slow through a big log), and does the
    first server to open it run on the log, as every instance does, so that reads go on while
    someone writes?"""
    import sqlite3

    from chat_appliance.config import load_config

    folder = zulip_export(tmp_path / "export")
    target = tmp_path / "instance"
    import_export(folder, target)
    if not load_config(target)["DATABASE_URL"].startswith("sqlite:"):
        pytest.skip("the journal is SQLite's")

    def journal_mode():
        connection = sqlite3.connect(target / "chat.sqlite3")
        try:
            return connection.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            connection.close()

    assert journal_mode() == "delete" and not (target / "chat.sqlite3-wal").exists()
    _, bob = new_instance_client(target, "bob@team.example")
    ok(bob.post("messages", type="direct", to=[10], content="back on the log"))
    assert journal_mode() == "wal"


def test_tarball_of_zulip_export_imports(tmp_path):
    """Does the .tar.gz Zulip writes (one top-level folder) import like the folder?"""
    import tarfile

    folder = zulip_export(tmp_path / "zulip-export-abc")
    tarball = tmp_path / "zulip-export-abc.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    assert import_export(tarball, tmp_path / "instance")["messages"] == 3


@pytest.mark.parametrize("damage,message", [
    (lambda f: (f / "migration_status.json").write_text(json.dumps({"zulip_version": "2.1"})),
     "Unknown export format: zulip_version '2.1'"),
    (lambda f: (f / "migration_status.json").write_text(json.dumps({"chat_appliance_export_format": 99})),
     "Unknown export format version 99"),
    (lambda f: (f / "migration_status.json").write_text(json.dumps({"migrations_by_app": {}})),
     "Unknown export format: zulip_version None"),
    (lambda f: [(f / name).unlink() for name in ("migration_status.json", "realm.json")],
     "is not an export in Zulip's layout"),
    (lambda f: (f / "uploads" / "7" / "ab" / "Xyz123" / "plan.txt").unlink(), "plan.txt (attachment 50) is missing"),
    (lambda f: (f / "messages-000001.json").write_text("{not json"), "messages-000001.json is not valid JSON"),
    (lambda f: _edit_json(f / "messages-000001.json", lambda d: d["zerver_message"][0].update(date_sent=1.5))
     or (f / "messages-000001.json").write_text((f / "messages-000001.json").read_text().replace("1.5", "NaN")),
     "messages-000001.json is not valid JSON (NaN is not a JSON value"),
    (lambda f: (f / "messages-000001.json").write_bytes(b'{"zerver_message": "\xff"}'),
     "messages-000001.json is not valid JSON"),
    (lambda f: (f / "realm.json").write_text("[" * 5000 + "]" * 5000), "realm.json is nested too deeply"),
    (lambda f: (f / "emoji" / "7" / "emoji" / "images" / "5.png").unlink(), "custom emoji 'shipit'"),
])
def test_bad_archives_are_refused_before_writing(tmp_path, damage, message):
    """Are an unknown format version, a missing file, a missing upload or emoji image and broken JSON
    refused with a clear message, leaving no instance behind?"""
    folder = zulip_export(tmp_path / "export")
    damage(folder)
    with pytest.raises(ArchiveError) as raised:
        import_export(folder, tmp_path / "instance")
    assert message in str(raised.value)
    assert not (tmp_path / "instance").exists()


def _edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("damage,message", [
    (lambda f: _edit_json(f / "realm.json", lambda d: d["zerver_realm"][0].update(
        message_content_edit_limit_seconds="forever")),
     "zerver_realm: message_content_edit_limit_seconds must be int, not 'forever'"),
    (lambda f: _edit_json(f / "realm.json", lambda d: d["zerver_realm"][0].update(
        message_content_delete_limit_seconds=-5)),
     "message_content_delete_limit_seconds must not be negative"),
    (lambda f: _edit_json(f / "realm.json", lambda d: d["zerver_userprofile"][0].update(enable_sounds="yes")),
     "enable_sounds must be bool, not 'yes'"),
    (lambda f: _edit_json(f / "realm.json", lambda d: d["zerver_userprofile"][0].update(full_name=5)),
     "full_name must be str, not 5"),
    (lambda f: _edit_json(f / "realm.json", lambda d: d["zerver_stream"][0].update(invite_only="no")),
     "invite_only must be bool, not 'no'"),
    (lambda f: (f / "uploads" / "7" / "ab" / "Xyz123" / "plan.txt").write_bytes(b"cut"),
     "plan.txt (attachment 50) holds 3 bytes, but the export says"),
])
def test_fields_of_the_wrong_type_and_cut_uploads_are_refused(tmp_path, damage, message):
    """Are realm and account fields of a type the API would refuse (a time limit of "forever", a
    setting "yes"), and an upload whose size is not the exported one, refused naming the field or
    file, with nothing written?"""
    folder = zulip_export(tmp_path / "export")
    damage(folder)
    with pytest.raises(ArchiveError) as raised:
        import_export(folder, tmp_path / "instance")
    assert message in str(raised.value)
    assert not (tmp_path / "instance").exists()


def test_dangling_references_are_refused(tmp_path):
    """Is a message whose sender does not exist refused, listing the problem, with nothing written?"""
    folder = zulip_export(tmp_path / "export")
    data = json.loads((folder / "messages-000001.json").read_text())
    data["zerver_message"][0]["sender"] = 999
    data["zerver_usermessage"].append({"id": 9, "user_profile": 10, "message": 4242, "flags_mask": 0})
    (folder / "messages-000001.json").write_text(json.dumps(data))
    with pytest.raises(ArchiveError) as raised:
        import_export(folder, tmp_path / "instance")
    assert "message 1000 has missing sender 999" in str(raised.value)
    assert "message 4242" in str(raised.value)
    assert not (tmp_path / "instance").exists()


def test_import_refuses_an_existing_instance(tmp_path, org, app):
    """Does import refuse an instance folder that already has a database (on PostgreSQL, whose
    database already holds an organization)?"""
    folder = zulip_export(tmp_path / "export")
    with pytest.raises(ArchiveError, match="already holds (a database|an organization)"):
        import_export(folder, Path(app.config["INSTANCE_PATH"]))
