"""The security review's findings (issue 17), each proven fixed through HTTP. Finding 7 (500s on
hostile input) is tests/security/test_hostile_input.py; the login answers of finding 5 are also in
tests/api/test_rate_limits.py; finding 13 (message ids) belongs to the database work."""

import json
import subprocess
import sys

from chat_appliance.actions.users import do_change_role
from chat_appliance.models import ROLE_OWNER, Linkifier, Message, database

from ..support.helpers import PASSWORD, download, err, ok, queue_manager, upload

XSS_TOPIC = "<img src=x onerror=alert(1)>"


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_1_match_subject_is_escaped(org):
    """Is a topic holding markup escaped in match_subject, in search results and in
    /messages/matches_narrow, while the highlight markup stays?"""
    hamlet = org.client(org.hamlet)
    message_id = send(hamlet, "Denmark", XSS_TOPIC + " alert", "findme please")
    narrow = [{"operator": "search", "operand": "alert"}]
    found = ok(hamlet.get("messages", anchor="newest", num_before=5, num_after=0, narrow=narrow))["messages"]
    subject = next(m["match_subject"] for m in found if m["id"] == message_id)
    assert "<img" not in subject and "&lt;img src=x onerror=" in subject
    assert '<span class="highlight">alert</span>' in subject
    matched = ok(hamlet.get("messages/matches_narrow", msg_ids=[message_id], narrow=narrow))["messages"]
    assert "<img" not in matched[str(message_id)]["match_subject"]
    assert "&lt;img" in matched[str(message_id)]["match_subject"]


def test_2_bad_queue_narrow_refused_and_delivery_isolated(app, org):
    """Is a queue narrow the filter cannot evaluate refused at /register, and if one reaches the
    filter anyway, do the queues after it still get the message?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("register", narrow=[["stream", "\u00b2"]]), 400, "BAD_REQUEST")
    err(hamlet.post("register", narrow=[["dm", ["not an id"]]]), 400, "BAD_REQUEST")
    # A queue whose filter raises (bypassing /register's checks), registered first.
    queues = queue_manager(app)
    broken = queues.register(user_id=org.othello.id, realm_id=org.realm.id, user_email=org.othello.email,
                             event_types=["message"], narrow=[("dm", ["x"])], apply_markdown=True,
                             client_gravatar=False, all_public_streams=False, client_capabilities={})
    othello = org.client(org.othello)
    queue_id = ok(othello.post("register", event_types=["message"]))["queue_id"]
    message_id = send(hamlet, "Denmark", "t", "hello")
    events = ok(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))["events"]
    assert [e["message"]["id"] for e in events if e["type"] == "message"] == [message_id]
    assert broken.id in queues.queues


def test_3_a_url_is_not_access(org):
    """Does sending a file's URL share the file only when the sender could open it? A user who
    cannot open a file gains nothing by sending its URL to themselves or to a channel."""
    url = ok(upload(org, org.hamlet, b"private notes"))["url"]
    othello, cordelia = org.client(org.othello), org.client(org.cordelia)
    ok(othello.post("messages", type="direct", to=[org.othello.id], content=f"[mine]({url})"))
    err(download(org, org.othello, url), 404, "NOT_FOUND", "File not found")
    send(othello, "Denmark", "leak", url)
    err(download(org, org.admin, url), 404, "NOT_FOUND", "File not found")
    # Its uploader shares it with Cordelia; Cordelia may then share it onward.
    ok(org.client(org.hamlet).post("messages", type="direct", to=[org.cordelia.id], content=url))
    assert download(org, org.cordelia, url).data == b"private notes"
    ok(cordelia.post("messages", type="direct", to=[org.guest.id], content=url))
    assert download(org, org.guest, url).data == b"private notes"
    # Othello's earlier messages still share nothing.
    err(download(org, org.othello, url), 404, "NOT_FOUND", "File not found")


def test_4_only_owners_deactivate_owners(org):
    """May only an owner deactivate or reactivate an owner (an administrator may not)?"""
    with database.connection_context():
        do_change_role(org.cordelia, ROLE_OWNER)
    admin, owner = org.client(org.admin), org.client(org.owner)
    err(admin.delete(f"users/{org.cordelia.id}"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    ok(owner.delete(f"users/{org.cordelia.id}"))
    err(admin.post(f"users/{org.cordelia.id}/reactivate"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner")
    ok(owner.post(f"users/{org.cordelia.id}/reactivate"))
    ok(admin.delete(f"users/{org.othello.id}"))


def test_5_unknown_email_costs_a_password_hash(org, anon, monkeypatch):
    """Does a login with an unknown email spend a password hash, as a known one does, so that
    timing does not tell them apart?"""
    from chat_appliance.lib import passwords

    calls = []
    original = passwords.check_password_against_dummy
    monkeypatch.setattr(passwords, "check_password_against_dummy",
                        lambda password, method: calls.append(method) or original(password, method))
    err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 401, "AUTHENTICATION_FAILED")
    assert len(calls) == 1


def test_6_hidden_addresses_do_not_resolve(org):
    """When Hamlet lets only administrators see his real address, can a member neither confirm
    it nor tie it to his id through sender:/dm: narrows, a direct message's `to` or principals,
    while his placeholder address and an administrator's use of the real one still work?"""
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    real = org.hamlet.delivery_email
    placeholder = f"user{org.hamlet.id}@zulip.example"
    othello, admin = org.client(org.othello), org.client(org.admin)
    for operator in ("sender", "dm"):
        narrow = [{"operator": operator, "operand": real}]
        err(othello.get("messages", anchor="newest", num_before=1, num_after=0, narrow=narrow), 400, "BAD_NARROW")
        ok(admin.get("messages", anchor="newest", num_before=1, num_after=0, narrow=narrow))
        ok(othello.get("messages", anchor="newest", num_before=1, num_after=0,
                       narrow=[{"operator": operator, "operand": placeholder}]))
    err(othello.post("messages", type="direct", to=json.dumps([real]), content="hi"), 400, "BAD_REQUEST",
        f"Invalid email '{real}'")
    ok(othello.post("messages", type="direct", to=json.dumps([placeholder]), content="hi"))
    refused = othello.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}], principals=[real])
    err(refused, 403, "UNAUTHORIZED_PRINCIPAL")
    ok(admin.post("users/me/subscriptions", subscriptions=[{"name": "Verona"}], principals=[real]))


def test_8_free_text_is_bounded(org):
    """Are a user group's description and the organization's description bounded?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("user_groups/create", name="big", description="x" * 1025, members=[org.hamlet.id]), 400,
        "BAD_REQUEST", "description is too long (limit: 1024 characters)")
    ok(hamlet.post("user_groups/create", name="fine", description="x" * 1024, members=[org.hamlet.id]))
    err(org.client(org.owner).patch("realm", description="x" * 1001), 400, "BAD_REQUEST")
    err(hamlet.post("saved_snippets", title="t" * 61, content="c"), 400, "BAD_REQUEST")


def test_9_admin_cannot_delete_topics_of_unreadable_private_channels(org):
    """May an administrator who is not subscribed to a private channel delete its topics? (No:
    the messages stay.)"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "hamlet-only"}], invite_only=True))
    stream_id = ok(hamlet.get("get_stream_id", stream="hamlet-only"))["stream_id"]
    message_id = send(hamlet, "hamlet-only", "plans", "secret plans")
    for user in (org.admin, org.owner):
        err(org.client(user).post(f"streams/{stream_id}/delete_topic", topic_name="plans"), 400, "BAD_REQUEST",
            "Invalid channel ID")
    with database.connection_context():
        assert Message.get_or_none(Message.id == message_id) is not None


def test_10_keys_rotate_and_bots_deactivate(org, app, flask_client):
    """Can a user rotate their own key and a bot's owner rotate or deactivate the bot, the old
    keys failing at once (long polls included), and does a key reset by the admin command in
    another process stop the old key on GET /events too?"""
    hamlet = org.client(org.hamlet)
    queue_id = ok(hamlet.post("register", event_types=["message"]))["queue_id"]
    ok(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))  # fills the cache
    body = ok(hamlet.post("users/me/api_key/regenerate"), undocumented=("api_key", "email"))
    err(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True), 401, "INVALID_API_KEY")
    org.hamlet.api_key = body["api_key"]
    hamlet = org.client(org.hamlet)
    ok(hamlet.get("users/me"))

    bot = org.client(org.bot)
    ok(bot.get("users/me"))
    err(org.client(org.othello).post(f"bots/{org.bot.id}/api_key/regenerate"), 400, "BAD_REQUEST",
        "Insufficient permission")
    new_key = ok(hamlet.post(f"bots/{org.bot.id}/api_key/regenerate"), undocumented=("api_key",))["api_key"]
    err(bot.get("users/me"), 401, "INVALID_API_KEY")
    org.bot.api_key = new_key
    ok(hamlet.delete(f"bots/{org.bot.id}"))
    assert org.client(org.bot).get("users/me").status_code == 401

    othello = org.client(org.othello)
    queue_id = ok(othello.post("register", event_types=["message"]))["queue_id"]
    ok(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))
    reset = subprocess.run([sys.executable, "-m", "chat_appliance", "reset-api-key", "--instance",
                            app.config["INSTANCE_PATH"], "--email", org.othello.email],
                           capture_output=True, text=True, timeout=60)
    assert reset.returncode == 0, reset.stderr
    err(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True), 401, "INVALID_API_KEY")


def test_11_bots_cannot_create_bots(org):
    """Is a bot refused when it tries to create a bot?"""
    err(org.client(org.bot).post("bots", full_name="Spawn", short_name="spawn"), 400, "BAD_REQUEST",
        "This endpoint does not accept bot requests.")


def test_12_linkifier_templates_are_web_urls(org):
    """Is a linkifier with a javascript: (or relative) URL template refused, and does a stored one
    never reach topic_links?"""
    admin = org.client(org.admin)
    for template in ("javascript:alert({id})", "data:text/html,{id}", "/relative/{id}"):
        err(admin.post("realm/filters", pattern="#(?P<id>[0-9]+)", url_template=template), 400, "BAD_REQUEST",
            "Invalid URL template.")
    with database.connection_context():
        Linkifier.create(realm=org.realm.id, pattern="#(?P<id>[0-9]+)", url_template="javascript:alert({id})",
                         order=99)
    hamlet = org.client(org.hamlet)
    message_id = send(hamlet, "Denmark", "ticket #12 https://example.com", "see")
    message = ok(hamlet.get(f"messages/{message_id}"))["message"]
    urls = [link["url"] for link in message["topic_links"]]
    assert urls == ["https://example.com"]


def test_14_placeholder_addresses_are_reserved(org):
    """Is an address of the form user{N}@{organization host} refused as a new account's or a new
    real address, so it cannot take over user N's placeholder?"""
    owner = org.client(org.owner)
    placeholder = f"user{org.hamlet.id}@zulip.example"
    err(owner.post("users", email=placeholder, password=PASSWORD, full_name="Impostor"), 400, "BAD_REQUEST")
    err(owner.post("users", email="user999@zulip.example", password=PASSWORD, full_name="Impostor"), 400,
        "BAD_REQUEST")
    ok(owner.post("users", email="user999@elsewhere.example", password=PASSWORD, full_name="Fine"))
