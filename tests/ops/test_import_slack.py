"""`chat-appliance import-slack`: a Slack export built here as Slack documents it (tests/slack_export.py)
imports through the command line, files fetched from a local stand-in for Slack's file host, and the
new organization is checked through the API as its people see it."""

import os
import zipfile
from pathlib import Path

import pytest

from chat_appliance.app import create_app
from chat_appliance.config import database_url_for
from chat_appliance.db import runtime
from chat_appliance.db.connection import close_connection
from chat_appliance.models import UserProfile, database

from ..support import pg
from ..support.helpers import FAST_HASH, ApiClient, ok, run
from ..support.slack_export import (
    START,
    TOKEN,
    FileHost,
    SlackExportBuilder,
    section,
    slack_file,
    t,
    text_block,
    ts,
)

ROOT = Path(__file__).resolve().parents[2]
LONG = ("A very long thread starter that goes on and on about the quarterly roadmap and the many "
        "things in it")
FORMATTED_MRKDWN = "*bold* _italic_ ~strike~ `co_de` and *_both_*"
FORMATTED_BLOCKS = text_block(section(t("bold", bold=True), t(" "), t("italic", italic=True), t(" "),
                                      t("strike", strike=True), t(" "), t("co_de", code=True), t(" and "),
                                      t("both", bold=True, italic=True)))
STRUCTURE_MRKDWN = ("Notes:\n&gt; quoted &amp; kept\n```x = 1 &lt; 2\ny = 3```\n• one\n    ◦ nested\n• two\n"
                    "1. first\n2. second")
STRUCTURE_BLOCKS = text_block(
    section(t("Notes:\n")),
    {"type": "rich_text_quote", "elements": [t("quoted & kept")]},
    {"type": "rich_text_preformatted", "elements": [t("x = 1 < 2\ny = 3")]},
    {"type": "rich_text_list", "style": "bullet", "indent": 0, "elements": [section(t("one"))]},
    {"type": "rich_text_list", "style": "bullet", "indent": 1, "elements": [section(t("nested"))]},
    {"type": "rich_text_list", "style": "bullet", "indent": 0, "elements": [section(t("two"))]},
    {"type": "rich_text_list", "style": "ordered", "indent": 0, "elements": [section(t("first")),
                                                                             section(t("second"))]},
)
EXPECTED_STRUCTURE = "Notes:\n> quoted & kept\n\n```\nx = 1 < 2\ny = 3\n```\n- one\n  - nested\n- two\n1. first\n2. second"
LINKS_MRKDWN = "see <https://example.com/docs|the docs> and <https://example.org> cc <#C02|random> <!channel> <@U02>"
LINKS_BLOCKS = text_block(section(
    t("see "), {"type": "link", "url": "https://example.com/docs", "text": "the docs"}, t(" and "),
    {"type": "link", "url": "https://example.org"}, t(" cc "), {"type": "channel", "channel_id": "C02"}, t(" "),
    {"type": "broadcast", "range": "channel"}, t(" "), {"type": "user", "user_id": "U02"}))
EXPECTED_LINKS = ("see [the docs](https://example.com/docs) and https://example.org cc #**random** @**all** "
                  "@**Bob Builder**")


def build_export(path, host):
    """The realistic export: six people of every role (a guest who is also an admin, a deleted
    one), a bot user and Slackbot, integration bots, public, private and archived channels,
    threads with a broadcast reply, every formatting case in both mrkdwn and rich_text,
    notices, reactions, files (hosted, external, deleted), DMs, a self-DM and a group DM."""
    b = SlackExportBuilder()
    b.user("U01", "ada", "Ada Lovelace", "ada@team.example", is_admin=True, is_owner=True, is_primary_owner=True)
    b.user("U02", "bob", "Bob Builder", "bob@team.example", is_admin=True, tz="America/New_York")
    b.user("U03", "cyd", "Cyd Guest", "cyd@team.example", is_restricted=True, is_admin=True)
    b.user("U04", "dee", "Dee Single", "dee@team.example", is_ultra_restricted=True)
    b.user("U05", "eve", "", "eve@team.example", deleted=True)["profile"]["real_name"] = "Eve Gone"
    finn = b.user("U06", "finn", "", "finn@team.example")
    finn["profile"]["real_name"] = ""
    b.user("U07", "helper", "Helper Bot", None, is_bot=True)["profile"]["bot_id"] = "B07"
    b.user("USLACKBOT", "slackbot", "Slackbot", None)
    b.user("U08", "gus", "Gus Owner", "gus@team.example", is_owner=True)
    b.channel("C01", "general", ["U01", "U02", "U03", "U05", "U06", "U08"], is_general=True,
              purpose="Company-wide &amp; announcements")
    b.channel("C02", "random", ["U01", "U02", "U06"], topic="Water cooler &lt;3")
    b.channel("C03", "old-project", ["U01", "U02"], is_archived=True, purpose="Done")
    b.channel("G01", "secret", ["U01", "U02"], private=True, purpose="hush")
    b.dm("D01", ["U01", "U02"])
    b.dm("D02", ["U01", "U01"])
    b.mpim("G02", "mpdm-ada--bob--finn-1", ["U01", "U02", "U06"])
    s = START
    b.message("general", ts(s), "U01", FORMATTED_MRKDWN, reactions=[
        {"name": "thumbsup", "users": ["U02", "U06"], "count": 2},
        {"name": "wave::skin-tone-3", "users": ["U02"], "count": 1},
        {"name": "wave", "users": ["U06"], "count": 1},
        {"name": "party_parrot", "users": ["U02"], "count": 1}])
    b.message("general", ts(s + 60), "U02", "ignored when blocks exist", blocks=FORMATTED_BLOCKS)
    parent = ts(s + 120)
    b.message("general", parent, "U01", "Launch plan for   the\nnew site", thread_ts=parent, reply_count=2,
              reply_users=["U02", "U06"], replies=[{"user": "U02", "ts": ts(s + 180)}, {"user": "U06", "ts": ts(s + 240)}])
    b.message("general", ts(s + 180), "U02", "Sounds good <@U01>", thread_ts=parent, parent_user_id="U01")
    b.message("general", ts(s + 240), "U06", "Broadcast to everyone", subtype="thread_broadcast", thread_ts=parent,
              root={"user": "U01", "ts": parent, "text": "Launch plan for the new site"})
    second = ts(s + 300)
    b.message("general", second, "U02", "Launch plan for the new site", thread_ts=second, reply_count=1)
    b.message("general", ts(s + 360), "U01", "Second thread reply", thread_ts=second, parent_user_id="U02")
    third = ts(s + 420)
    b.message("general", third, "U06", LONG, thread_ts=third, reply_count=1)
    b.message("general", ts(s + 480), "U01", "long thread reply", thread_ts=third, parent_user_id="U06")
    b.message("general", ts(s + 540), "U06", "<@U06> has joined the channel", subtype="channel_join")
    b.message("general", ts(s + 600), "U01", "set the channel topic: Launch", subtype="channel_topic",
              topic="Launch")
    b.message("general", ts(s + 660), "U02", "waves hello", subtype="me_message")
    b.message("general", ts(s + 720), "U01", LINKS_MRKDWN)
    b.message("general", ts(s + 780), "U02", "x", blocks=LINKS_BLOCKS)
    b.message("general", ts(s + 840), "U01", STRUCTURE_MRKDWN)
    b.message("general", ts(s + 900), "U02", "x", blocks=STRUCTURE_BLOCKS)
    b.message("general", ts(s + 960), "U06", ":thumbsup: and :smile: and :wave::skin-tone-2: and :party_parrot:")
    b.message("general", ts(s + 1020), "U01", "The plan and a picture", files=[
        slack_file("F01", "plan.txt", host.url("plan.txt"), title="The plan"),
        slack_file("F02", "pic.png", host.url("pic.png"), mimetype="image/png"),
        {"id": "F03", "mode": "tombstone", "name": "gone.txt", "title": "Gone file"},
        slack_file("F04", "Roadmap", "https://docs.example.com/roadmap", title="Roadmap", is_external=True,
                   external_type="gdrive", mode="external")])
    b.message("general", ts(s + 1080), "U01", "<@U01> pinned a message", subtype="pinned_item")
    b.message("general", ts(s + 1140), None, "Deploy finished", subtype="bot_message", bot_id="B01",
              username="deploy", bot_profile={"id": "B01", "name": "Deploy Bot"},
              attachments=[{"title": "Release 1.2", "title_link": "https://ci.example/1.2", "text": "*Deployed* ok",
                            "fields": [{"title": "Env", "value": "prod", "short": True}], "footer": "CI"}])
    b.message("general", ts(s + 1200), None, "Build green", subtype="bot_message", bot_id="B02",
              username="ci-runner")
    b.message("general", ts(s + 1230), None, "CPU high (fallback)", subtype="bot_message", bot_id="B03",
              bot_profile={"id": "B03", "name": "Alerts"},
              blocks=[{"type": "header", "text": {"type": "plain_text", "text": "Alert"}},
                      {"type": "section", "text": {"type": "mrkdwn", "text": "*CPU* high on <https://m.example|web-1>"}},
                      {"type": "divider"}])
    b.message("general", ts(s + 1260), "USLACKBOT", "Reminder: standup")
    b.message("general", ts(s + 1320), "U07", "I am a bot user")
    b.message("general", ts(s + 1330), None, "posted by my bot_id", subtype="bot_message", bot_id="B07",
              username="helper")
    b.message("general", ts(s + 1380), "U05", "I was here before I left")
    b.message("random", ts(s + 30), "U06", "random thought")
    b.message("old-project", ts(s - 2 * 86400), "U02", "archived history")
    b.message("secret", ts(s + 90), "U01", "classified", files=[
        slack_file("F05", "secret.txt", host.url("secret.txt"), title="Secret")])
    b.message("D01", ts(s + 100), "U01", "hello <@U02>")
    b.message("D01", ts(s + 110), "U02", "hi back")
    b.message("D02", ts(s + 120), "U01", "note to self")
    b.message("mpdm-ada--bob--finn-1", ts(s + 130), "U06", "group hello")
    b.message("left-channel", ts(s + 140), "U01", "a channel no list names")
    return b.write(path)


def picture():
    """A real 40x30 PNG (thumbnails are made of it)."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 80, 20)).save(out, "PNG")
    return out.getvalue()


FILES = {"plan.txt": b"ship it!\n", "pic.png": picture(), "secret.txt": b"top secret\n"}


class Imported:
    """The imported instance, what the command printed and what the file host saw."""

    def __init__(self, folder, result, requests, database_url):
        self.folder, self.result, self.requests, self.database_url = folder, result, requests, database_url

    def env(self):
        return dict(os.environ, CHAT_APPLIANCE_DATABASE_URL=self.database_url)

    def app(self):
        """A Flask app on the imported instance (the previous test's app, if any, closed first)."""
        if runtime.current() is not None:
            close_connection()
        return create_app({"INSTANCE_PATH": str(self.folder), "DATABASE_URL": self.database_url,
                           "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False, "TESTING": True})

    def client(self, email):
        """An API client of the imported instance as `email`, with the key the import gave them."""
        app = self.app()
        with database.connection_context():
            user = UserProfile.get(UserProfile.delivery_email == email)
        self.flask = app.test_client()
        return ApiClient(self.flask, user.email, user.api_key)


def database_for(folder):
    return pg.create(pg.new_name("slack")) if pg.ENABLED else database_url_for(folder)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("slack")
    host = FileHost(FILES)
    try:
        export = build_export(folder / "Acme Slack export Nov 14 2023 - Nov 15 2023.zip", host)
        instance = folder / "instance"
        url = database_for(instance)
        result = run("import-slack", str(export), "--instance", str(instance), "--token", TOKEN,
                     "--files-host", "127.0.0.1",
                     "--realm-url", "http://chat.acme.example",
                     env=dict(os.environ, CHAT_APPLIANCE_DATABASE_URL=url, PYTHONPATH=str(ROOT)))
    finally:
        host.close()
    assert result.returncode == 0, result.stderr
    return Imported(instance, result, host.requests, url)


def general_messages(client):
    return ok(client.get("messages", anchor="oldest", num_before=0, num_after=100, apply_markdown="false",
                         narrow='[{"operator": "channel", "operand": "general"}]'))["messages"]


def test_summary_and_token(imported):
    """Does the command end with a summary of what came in and what was skipped and why, and is
    the token sent only to Slack's file host, never printed and never stored?"""
    out = imported.result.stdout
    assert "Imported 7 people (1 deactivated), 5 bots, 4 channels, 3 direct-message conversations" in out
    assert "3 files" in out
    assert "file 'Gone file' in #general on 2023-11-14: deleted in Slack" in out
    assert "2 join, leave, rename and pin notices" in out
    assert "folder left-channel/: not a conversation named in channels.json" in out
    assert "reactions with :party_parrot: (1)" in out
    assert "messages" in imported.result.stderr and "reset-api-key" in imported.result.stderr
    assert TOKEN not in out + imported.result.stderr
    assert sorted(imported.requests) == [(f"/files/{name}", f"Bearer {TOKEN}") for name in sorted(FILES)]
    for path in imported.folder.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_people_and_roles(imported):
    """Do people come with their names, emails, time zones and roles (owners, administrators,
    guests whatever else they are, members), deleted people deactivated, bots as generic bots?"""
    ada = imported.client("ada@team.example")
    users = {u["full_name"]: u for u in ok(ada.get("users", include_custom_profile_fields="false"))["members"]}
    roles = {name: (u["role"], u["is_active"], u["is_bot"]) for name, u in users.items()
             if name not in ("Welcome Bot", "Notification Bot")}
    assert roles == {
        "Ada Lovelace": (100, True, False), "Bob Builder": (200, True, False), "Cyd Guest": (600, True, False),
        "Dee Single": (600, True, False), "Eve Gone": (400, False, False), "finn": (400, True, False),
        "Gus Owner": (100, True, False), "Helper Bot": (400, True, True), "Slackbot": (400, True, True),
        "Deploy Bot": (400, True, True), "ci-runner": (400, True, True), "Alerts": (400, True, True)}
    assert users["Bob Builder"]["timezone"] == "America/New_York" and users["Bob Builder"]["email"] == "bob@team.example"
    assert all(users[name]["bot_type"] == 1 for name in ("Helper Bot", "Slackbot", "Deploy Bot", "ci-runner"))
    realm = ok(ada.get("server_settings"))
    assert realm["realm_name"] == "Acme"
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.password.is_null(False)).exists()


def test_reset_api_key_works_for_imported_people(imported):
    """Can an administrator give an imported person an API key with reset-api-key, and does it work?"""
    result = run("reset-api-key", "--instance", str(imported.folder), "--email", "finn@team.example",
                 env=imported.env())
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip().split()[-1]
    app = imported.app()
    me = ok(ApiClient(app.test_client(), "finn@team.example", key).get("users/me"))
    assert me["full_name"] == "finn"


def test_channels(imported):
    """Are public, private and archived channels there with descriptions from purpose (else topic),
    entities decoded, subscribers exactly the members, and general and random the default channels?
    Are the imported messages in the search index?"""
    ada = imported.client("ada@team.example")
    streams = {s["name"]: s for s in ok(ada.get("streams", include_all=True, exclude_archived="false"))["streams"]}
    assert set(streams) == {"general", "random", "old-project", "secret"}
    assert streams["general"]["description"] == "Company-wide & announcements"
    assert streams["random"]["description"] == "Water cooler <3"
    assert streams["secret"]["invite_only"] and not streams["general"]["invite_only"]
    assert streams["old-project"]["is_archived"] and not streams["general"]["is_archived"]
    registered = ok(ada.post("register", fetch_event_types='["default_streams"]'))
    names = {s["stream_id"]: s["name"] for s in streams.values()}
    defaults = {names[d] if isinstance(d, int) else d["name"] for d in registered["realm_default_streams"]}
    assert defaults == {"general", "random"}
    ids = {u["full_name"]: u["user_id"] for u in ok(ada.get("users"))["members"]}
    members = ok(ada.get(f"streams/{streams['general']['stream_id']}/members"))["subscribers"]
    # The API lists active subscribers only (as Zulip does): Eve, deleted in Slack, is left out.
    assert sorted(members) == sorted(ids[n] for n in ("Ada Lovelace", "Bob Builder", "Cyd Guest", "finn",
                                                      "Gus Owner"))
    secret = ok(ada.get(f"streams/{streams['secret']['stream_id']}/members"))["subscribers"]
    assert sorted(secret) == sorted([ids["Ada Lovelace"], ids["Bob Builder"]])
    archived = ok(ada.get("messages", anchor="oldest", num_before=0, num_after=10, apply_markdown="false",
                          narrow='[{"operator": "channel", "operand": "old-project"}]'))["messages"]
    assert [m["content"] for m in archived] == ["archived history"]
    found = ok(ada.get("messages", anchor="newest", num_before=10, num_after=0, apply_markdown="false",
                       narrow='[{"operator": "search", "operand": "standup"}]'))["messages"]
    assert [m["content"] for m in found] == ["Reminder: standup"]


def test_threads_become_topics(imported):
    """Do unthreaded messages go to "imported from Slack", each thread to a topic named after its
    date and first message (collapsed, cut at 60 with …, numbered when repeated), with a broadcast
    reply once, inside its thread?"""
    bob = imported.client("bob@team.example")
    messages = general_messages(bob)
    by_text = {m["content"]: m["subject"] for m in messages}
    first = "2023-11-14 Launch plan for the new site"
    assert by_text["Launch plan for   the\nnew site"] == first
    assert by_text["Sounds good @**Ada Lovelace**"] == first
    assert by_text["Second thread reply"] == first + " (2)"
    long_topic = by_text["long thread reply"]
    assert long_topic == ("2023-11-14 " + LONG)[:59] + "…" and len(long_topic) == 60
    assert [m["content"] for m in messages].count("Broadcast to everyone") == 1
    assert by_text["Broadcast to everyone"] == first
    assert by_text[FORMATTED_MRKDWN.replace("*bold*", "**bold**").replace("_italic_", "*italic*")
                   .replace("~strike~", "~~strike~~").replace("*_both_*", "***both***")] == "imported from Slack"


def test_text_conversion(imported):
    """Do mrkdwn and rich_text give the same Markdown for formatting, code, quotes, nested lists,
    links, mentions, channel links and wildcards; are entities decoded, emoji renamed to Zulip's,
    notices left out but topic changes and /me kept, and bot attachments appended?"""
    bob = imported.client("bob@team.example")
    contents = [m["content"] for m in general_messages(bob)]
    formatted = "**bold** *italic* ~~strike~~ `co_de` and ***both***"
    assert contents.count(formatted) == 2
    assert contents.count(EXPECTED_STRUCTURE) == 2
    assert contents.count(EXPECTED_LINKS) == 2
    assert ":+1: and :big_smile: and :wave: and :party_parrot:" in contents
    assert "set the channel topic: Launch" in contents and "/me waves hello" in contents
    assert not any("has joined" in c or "pinned" in c for c in contents)
    deploy = next(c for c in contents if c.startswith("Deploy finished"))
    assert deploy == "Deploy finished\n## [Release 1.2](https://ci.example/1.2)\n\n**Deployed** ok\n\n**Env**: prod\n\nCI"
    assert "## Alert\n**CPU** high on [web-1](https://m.example)\n----" in contents
    html = {m["content"]: m for m in ok(bob.get(
        "messages", anchor="oldest", num_before=0, num_after=100,
        narrow='[{"operator": "channel", "operand": "general"}]'))["messages"]}
    rendered = [m for m in html.values() if "the docs" in m["content"]]
    assert rendered and all('class="user-mention"' in m["content"] and "<a href=\"https://example.com/docs\"" in
                            m["content"] for m in rendered)
    me = next(m for m in general_messages(bob) if m["content"].startswith("/me"))
    assert me["is_me_message"] is True


def test_senders(imported):
    """Are bots (a bot user also for its bot_id's posts), Slackbot and deactivated people the senders
    of their messages?"""
    bob = imported.client("bob@team.example")
    senders = {m["content"]: m["sender_full_name"] for m in general_messages(bob)}
    assert senders["Reminder: standup"] == "Slackbot"
    assert senders["Build green"] == "ci-runner"
    assert senders["I am a bot user"] == senders["posted by my bot_id"] == "Helper Bot"
    assert senders["I was here before I left"] == "Eve Gone"


def test_direct_messages(imported):
    """Do a DM, a self-DM and a group DM land in their conversations, seen by their members only?"""
    ada = imported.client("ada@team.example")
    ids = {u["full_name"]: u["user_id"] for u in ok(ada.get("users"))["members"]}
    private = ok(ada.get("messages", anchor="oldest", num_before=0, num_after=100, apply_markdown="false",
                         narrow='[{"operator": "is", "operand": "dm"}]'))["messages"]
    conversations = {m["content"]: sorted(u["id"] for u in m["display_recipient"]) for m in private}
    assert conversations == {
        "hello @**Bob Builder**": sorted([ids["Ada Lovelace"], ids["Bob Builder"]]),
        "hi back": sorted([ids["Ada Lovelace"], ids["Bob Builder"]]),
        "note to self": [ids["Ada Lovelace"]],
        "group hello": sorted([ids["Ada Lovelace"], ids["Bob Builder"], ids["finn"]])}
    cyd = imported.client("cyd@team.example")
    assert ok(cyd.get("messages", anchor="oldest", num_before=0, num_after=100,
                      narrow='[{"operator": "is", "operand": "dm"}]'))["messages"] == []


def test_reactions(imported):
    """Are reactions imported with Zulip's emoji names, skin tones dropped and merged, and custom
    emoji left out?"""
    ada = imported.client("ada@team.example")
    ids = {u["user_id"]: u["full_name"] for u in ok(ada.get("users"))["members"]}
    first = general_messages(ada)[0]
    got = sorted((ids[r["user_id"]], r["emoji_name"], r["emoji_code"], r["reaction_type"]) for r in first["reactions"])
    assert got == [("Bob Builder", "+1", "1f44d", "unicode_emoji"), ("Bob Builder", "wave", "1f44b", "unicode_emoji"),
                   ("finn", "+1", "1f44d", "unicode_emoji"), ("finn", "wave", "1f44b", "unicode_emoji")]


def test_files(imported):
    """Are Slack-hosted files re-hosted as uploads owned by the sender and linked from the message,
    readable by those who can read the message only, while external files stay links?"""
    bob = imported.client("bob@team.example")
    message = next(m for m in general_messages(bob) if m["content"].startswith("The plan and a picture"))
    lines = message["content"].split("\n")
    assert lines[0] == "The plan and a picture" and lines[3] == "[Roadmap](https://docs.example.com/roadmap)"
    assert lines[1].startswith("[The plan](/user_uploads/") and lines[2].startswith("[pic.png](/user_uploads/")
    plan_url = lines[1].split("(")[1].rstrip(")")
    rendered = ok(bob.get(f"messages/{message['id']}"))["message"]["content"]
    assert 'class="message_inline_image"' in rendered and "/user_uploads/thumbnail/" in rendered
    assert imported.flask.get(plan_url, headers=bob.headers).data == b"ship it!\n"
    ada = imported.client("ada@team.example")
    assert {a["name"] for a in ok(ada.get("attachments"))["attachments"]} == {"plan.txt", "pic.png", "secret.txt"}
    secret = ok(ada.get("messages", anchor="oldest", num_before=0, num_after=5, apply_markdown="false",
                        narrow='[{"operator": "channel", "operand": "secret"}]'))["messages"][0]
    secret_url = secret["content"].split("(")[1].rstrip(")")
    assert imported.flask.get(secret_url, headers=ada.headers).data == b"top secret\n"
    cyd = imported.client("cyd@team.example")
    assert imported.flask.get(secret_url, headers=cyd.headers).status_code in (403, 404)
    assert imported.flask.get(plan_url, headers=cyd.headers).status_code == 200


def test_flags(imported):
    """Is every imported message read, and do mentioned people have the mentioned flag?"""
    ada = imported.client("ada@team.example")
    messages = general_messages(ada)
    assert all("read" in m["flags"] for m in messages)
    mention = next(m for m in messages if m["content"] == "Sounds good @**Ada Lovelace**")
    assert "mentioned" in mention["flags"]
    assert not any("mentioned" in m["flags"] for m in messages if "Ada" not in m["content"]
                   and "@**all**" not in m["content"])
    bob = imported.client("bob@team.example")
    dm = ok(bob.get("messages", anchor="oldest", num_before=0, num_after=5, apply_markdown="false",
                    narrow='[{"operator": "is", "operand": "dm"}]'))["messages"][0]
    assert dm["content"] == "hello @**Bob Builder**" and "mentioned" in dm["flags"] and "read" in dm["flags"]
    assert ok(ada.get("users/me"))["email"] == "ada@team.example"


def test_new_messages_after_import(imported):
    """Can the imported organization carry on: a new message after the import gets a new id, in a
    thread's topic, and a new person's reaction is added beside the imported ones?"""
    bob = imported.client("bob@team.example")
    last = general_messages(bob)[-1]
    sent = ok(bob.post("messages", type="stream", to="general", topic="2023-11-14 Launch plan for the new site",
                       content="carrying on"))["id"]
    assert sent > last["id"]
    first = general_messages(bob)[0]
    ok(bob.post(f"messages/{first['id']}/reactions", emoji_name="tada"))


def small_export(path, host=None, *, files=False):
    """Two people, one channel, one message (with a hosted file when `files`)."""
    b = SlackExportBuilder()
    b.user("U01", "ada", "Ada Lovelace", "ada@team.example", is_primary_owner=True, is_owner=True)
    b.user("U02", "bob", "Bob Builder", "bob@team.example")
    b.channel("C01", "general", ["U01", "U02"], is_general=True)
    extra = {"files": [slack_file("F09", "missing.txt", host.url("missing.txt"), title="Missing notes")]} if files else {}
    b.message("general", ts(START), "U01", "hello", **extra)
    return b


def corrupt(path):
    """Damage the compressed bytes of users.json inside the zip (its checksum then fails)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("users.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for offset in range(start + 5, start + 25):
        data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def bomb(path):
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("general/2023-11-15.json", b" " * (70 * 1024 * 1024))


BAD_INPUTS = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "is not a ZIP file"),
    "corrupt": (corrupt, "users.json in"),
    "not a zip": (lambda p: p.write_text("just some notes\n"), "is not a ZIP file"),
    "not a Slack export": (lambda p: zipfile.ZipFile(p, "w").writestr("notes/readme.txt", "hi"),
                           "is not a Slack export"),
    "invalid JSON": (lambda p: zipfile.ZipFile(p, "a").writestr("general/2023-11-20.json", "[{not json"),
                     "general/2023-11-20.json is not valid JSON"),
    "invalid JSON elsewhere": (lambda p: zipfile.ZipFile(p, "a").writestr("stray/2023-11-20.json", "{"),
                               "stray/2023-11-20.json is not valid JSON"),
    "a field of another type": (lambda p: zipfile.ZipFile(p, "a").writestr(
        "general/2023-11-20.json", '[{"type": "message", "user": "U01", "ts": "1700500000.000100", "text": "hi", "reactions": 5}]'),
        "general/2023-11-20.json[0] is not a message in Slack's format"),
    "a thread that is not a time": (lambda p: zipfile.ZipFile(p, "a").writestr(
        "general/2023-11-20.json", '[{"type": "message", "user": "U01", "ts": "1700500000.1", "text": "hi", "thread_ts": "soon"}]'),
        "general/2023-11-20.json[0] is not a message in Slack's format"),
    "archive bomb": (bomb, "refused as a likely archive bomb"),
    "nested JSON": (lambda p: zipfile.ZipFile(p, "a").writestr("general/2023-11-20.json", "[" * 200_000),
                    "general/2023-11-20.json is nested too deeply"),
    "too deep": (lambda p: zipfile.ZipFile(p, "a").writestr("general/a/b/c.json", "[]"),
                 "nested deeper than a Slack export"),
}


def listing(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*")) if folder.exists() else None


def refused(args, folder, env=None):
    """Run import-slack; assert exit 1, one `error:` line, no traceback, `folder` as it was."""
    before = listing(folder)
    result = run("import-slack", *args, "--instance", str(folder),
                 env=dict(env or os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 1, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert listing(folder) == before
    return errors[0]


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_archives_are_refused(tmp_path, case):
    """Is each broken archive (truncated, corrupt, not a ZIP, not a Slack export, bad JSON in an
    entry, JSON nested past the interpreter's recursion limit, a message field of another type than
    Slack writes, an archive bomb, entries nested too
    deep) refused with one error line naming the problem,
    and the instance folder left as it was?"""
    damage, message = BAD_INPUTS[case]
    export = small_export(tmp_path).write(tmp_path / "export.zip")
    damage(export)
    assert message in refused([str(export)], tmp_path / "instance")
    (tmp_path / "empty").mkdir()
    assert message in refused([str(export)], tmp_path / "empty")


def test_undownloadable_file_is_refused(tmp_path):
    """Is a file that cannot be downloaded (or a hosted file with no token to fetch it) named in
    the error, with nothing written and the token not printed?"""
    host = FileHost({})
    try:
        export = small_export(tmp_path, host, files=True).write(tmp_path / "export.zip")
        line = refused([str(export), "--token", TOKEN, "--files-host", "127.0.0.1"], tmp_path / "instance")
        assert "'Missing notes'" in line and "HTTP 404" in line and TOKEN not in line
        line = refused([str(export), "--files-host", "127.0.0.1"], tmp_path / "instance")
        assert "pass --token" in line and "'Missing notes'" in line
    finally:
        host.close()
    assert host.requests == [("/files/missing.txt", f"Bearer {TOKEN}")]


def test_existing_organization_is_refused(imported, tmp_path):
    """Is an import into a folder that already holds an organization refused, leaving it as it was?"""
    export = small_export(tmp_path).write(tmp_path / "export.zip")
    assert "already holds" in refused([str(export)], imported.folder, env=imported.env())
    if pg.ENABLED:  # an empty folder whose database (on the server) already has one
        (tmp_path / "empty").mkdir()
        line = refused([str(export)], tmp_path / "empty", env=imported.env())
        assert "already holds an organization" in line


def test_token_goes_to_the_files_host_only(tmp_path, monkeypatch):
    """Does a file whose URL is on another host than Slack's file host (or not on the web) stay a
    link, so that an export can neither send the token elsewhere nor read a local file?"""
    pg.use_fresh_database(monkeypatch)
    host = FileHost({"plan.txt": b"ship it!\n"})
    try:
        elsewhere = host.url("plan.txt").replace("127.0.0.1", "localhost")
        b = small_export(tmp_path)
        b.message("general", ts(START + 60), "U01", "two files", files=[
            slack_file("F10", "plan.txt", elsewhere, title="Elsewhere"),
            slack_file("F11", "passwd", "file:///etc/passwd", title="Local")])
        export = b.write(tmp_path / "export.zip")
        result = run("import-slack", str(export), "--instance", str(tmp_path / "instance"), "--token", TOKEN,
                     "--files-host", "127.0.0.1", env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        host.close()
    assert result.returncode == 0, result.stderr
    assert host.requests == [] and "0 files" in result.stdout
    url = os.environ.get("CHAT_APPLIANCE_DATABASE_URL") if pg.ENABLED else database_url_for(tmp_path / "instance")
    ada = Imported(tmp_path / "instance", result, [], url).client("ada@team.example")
    assert general_messages(ada)[-1]["content"] == f"two files\n[Elsewhere]({elsewhere})\n[Local](file:///etc/passwd)"


def test_long_channel_names_stay_distinct(tmp_path, monkeypatch):
    """Do two Slack channels whose names (up to 80 characters there) meet once cut to this server's
    60 both import, the second with a number, and do links to each still name the right one?"""
    pg.use_fresh_database(monkeypatch)
    b = small_export(tmp_path)
    stem = "project-" + "x" * 60
    b.channel("C08", stem + "-alpha", ["U01"])
    b.channel("C09", stem + "-beta", ["U01"])
    b.message("general", ts(START + 60), "U01", "see <#C08> and <#C09>")
    export = b.write(tmp_path / "export.zip")
    result = run("import-slack", str(export), "--instance", str(tmp_path / "instance"),
                 env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
    url = os.environ.get("CHAT_APPLIANCE_DATABASE_URL") if pg.ENABLED else database_url_for(tmp_path / "instance")
    ada = Imported(tmp_path / "instance", result, [], url).client("ada@team.example")
    names = sorted(s["name"] for s in ok(ada.get("streams"))["streams"] if s["name"] != "general")
    assert names == sorted([stem[:60], stem[:58] + "-2"])
    assert general_messages(ada)[-1]["content"] == f"see #**{stem[:60]}** and #**{stem[:58]}-2**"
