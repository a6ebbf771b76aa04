"""Organization export (POST/GET /export/realm, /export/realm/consents, `chat-appliance export`) and
import (`chat-appliance import-zulip`): an export re-imports into a fresh instance with everything
intact; a hand-built export shaped like Zulip's imports; bad archives are refused before any write."""

import io
import json
from pathlib import Path

import pytest

from chat_appliance.app import create_app
from chat_appliance.db import close_connection
from chat_appliance.models import RealmExport, UserProfile, database
from chat_appliance.transfer.importer import ArchiveError, import_export

from .conftest import FAST_HASH
from .helpers import ApiClient, err, ok
from .test_custom_emoji import PNG, upload_emoji
from .test_event_types import polled, queues
from .test_uploads import upload


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
    return url


def new_instance_client(path, email):
    """A Flask client on the imported instance, as `email` (with the key the import gave them)."""
    close_connection()
    app = create_app({"INSTANCE_PATH": str(path), "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False,
                      "TESTING": True})
    with database.connection_context():
        user = UserProfile.get(UserProfile.delivery_email == email)
    return app.test_client(), ApiClient(app.test_client(), user.email, user.api_key)


def test_export_reimports_intact(org, app, tmp_path_factory):
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
