"""Every route the Zulip mobile app (zulip-flutter) calls, sent as its encoder sends it: each
non-raw parameter JSON-encoded (strings included), raw ones as they are, the body laid out by
package:http. Each test checks that the server parses that form and does what the app asked."""

import base64
import hashlib
import json

from ..support.flutter_app import APP_USER_AGENT, AppClient, app_client, app_register, encode_parameters, form_body
from ..support.helpers import PASSWORD, PNG, UNDOCUMENTED_REGISTER_KEYS, ok, queue_manager, register


def test_register_bytes_are_the_apps(org):
    """Does the register body the app builds (idle_queue_timeout as the JSON string "mobile")
    get 200, and a queue kept for a phone's 12 hours rather than the default?"""
    body = form_body(encode_parameters({"idle_queue_timeout": "mobile", "apply_markdown": True}))
    assert body == b"idle_queue_timeout=%22mobile%22&apply_markdown=true"
    token = base64.b64encode(f"{org.hamlet.email}:{org.hamlet.api_key}".encode()).decode()
    response = org.flask_client.post("/api/v1/register", data=body, headers={
        "Authorization": f"Basic {token}", "User-Agent": APP_USER_AGENT,
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    assert response.status_code == 200, response.get_json()
    queue_id = response.get_json()["queue_id"]
    manager = queue_manager(org.flask_client.application)
    assert manager.queue_idle_seconds(manager.queues[queue_id]) == 12 * 60 * 60


def test_idle_queue_timeout_in_every_form(org):
    """Is idle_queue_timeout taken as an integer or "mobile", JSON-encoded or bare, and anything
    else refused?"""
    app = app_client(org, org.hamlet)
    hamlet = org.client(org.hamlet)
    for value in ("mobile", 600):
        ok(app.register_queue(idle_queue_timeout=value), undocumented=UNDOCUMENTED_REGISTER_KEYS)
    for value in ("mobile", "600", '"600"'):
        register(hamlet, idle_queue_timeout=value)
    for value in ("desktop", '"desktop"', "-5", '""', "1.5"):
        response = hamlet.post("register", idle_queue_timeout=value)
        assert response.status_code == 400 and response.get_json()["msg"] == "Invalid idle_queue_timeout", value


def test_messages_routes(org):
    """Do send, fetch, fetch one, edit, move, react, flag, flag by narrow, read receipts, report
    and delete take the app's encoding?"""
    app = app_client(org, org.othello)
    queue_id = app_register(app)["queue_id"]
    sent = ok(app.send_message(stream_id=org.denmark.id, topic="castle", content="to be or not",
                               queue_id=queue_id, local_id="1.5", read_by_sender=True))
    dm = ok(app.send_message(user_ids=[org.hamlet.id], content="psst"))
    [fetched] = ok(app.get_messages([{"operator": "channel", "operand": org.denmark.id},
                                     {"operator": "topic", "operand": "castle"}], "newest", 1, 0,
                                    client_gravatar=False, apply_markdown=True))["messages"]
    assert (fetched["id"], fetched["subject"], fetched["content"]) == (sent["id"], "castle", "<p>to be or not</p>")
    assert ok(app.get_message(dm["id"], apply_markdown=False))["message"]["content"] == "psst"
    original = hashlib.sha256(b"to be or not").hexdigest()
    ok(app.update_message(sent["id"], content="to be", prev_content_sha256=original))
    ok(app.update_message(sent["id"], topic="moat", propagate_mode="change_all",
                          send_notification_to_old_thread=False, send_notification_to_new_thread=False))
    ok(app.update_message(sent["id"], stream_id=org.verona.id, propagate_mode="change_one",
                          send_notification_to_old_thread=False, send_notification_to_new_thread=False))
    moved = ok(app.get_message(sent["id"], apply_markdown=False))["message"]
    assert (moved["stream_id"], moved["subject"], moved["content"]) == (org.verona.id, "moat", "to be")
    ok(app.add_reaction(sent["id"], "octopus", "1f419", "unicode_emoji"))
    assert [r["emoji_code"] for r in ok(app.get_message(sent["id"]))["message"]["reactions"]] == ["1f419"]
    ok(app.remove_reaction(sent["id"], "octopus", "1f419", "unicode_emoji"))
    ok(app.update_message_flags([sent["id"]], "add", "starred"))
    assert "starred" in ok(app.get_message(sent["id"]))["message"]["flags"]
    hamlet = org.client(org.hamlet)
    unread = ok(hamlet.post("messages", type="private", to=[org.othello.id], content="read me"))["id"]
    result = ok(app.update_message_flags_for_narrow(
        "oldest", 0, 1000, [{"operator": "dm", "operand": [org.hamlet.id]}], "add", "read", include_anchor=True))
    assert result["processed_count"] >= 1
    assert "read" in ok(app.get_message(unread))["message"]["flags"]
    assert org.othello.id in ok(app.get_read_receipts(unread))["user_ids"]
    ok(org.client(org.owner).patch("realm", moderation_request_channel_id=org.secret.id))
    ok(app.report_message(unread, "spam", description="not Hamlet"))
    ok(app.delete_message(dm["id"]))
    assert org.client(org.othello).get(f"messages/{dm['id']}").status_code == 400


def test_channels_routes(org):
    """Do subscribe, subscription settings, topics, muting (both forms) and unsubscribe take the
    app's encoding?"""
    app = app_client(org, org.othello)
    ok(app.subscribe_to_channel(["Elsinore"]))
    state = register(org.client(org.othello), fetch_event_types=["subscription"])
    [elsinore] = [s for s in state["subscriptions"] if s["name"] == "Elsinore"]
    ok(app.update_subscription_settings(elsinore["stream_id"], "color", "#76ce90"))
    ok(app.update_subscription_settings(elsinore["stream_id"], "pin_to_top", True))
    state = register(org.client(org.othello), fetch_event_types=["subscription"])
    [elsinore] = [s for s in state["subscriptions"] if s["name"] == "Elsinore"]
    assert (elsinore["color"], elsinore["pin_to_top"]) == ("#76ce90", True)
    ok(app.send_message(stream_id=org.denmark.id, topic="ghost", content="hi"))
    assert "ghost" in {t["name"] for t in ok(app.get_channel_topics(org.denmark.id))["topics"]}
    ok(app.update_user_topic(org.denmark.id, "ghost", 1))
    ok(app.mute_topic(org.denmark.id, "castle walls", "add"))
    topics = register(org.client(org.othello), fetch_event_types=["user_topic"])["user_topics"]
    assert {("ghost", 1), ("castle walls", 1)} <= {(t["topic_name"], t["visibility_policy"]) for t in topics}
    ok(app.unsubscribe_from_channel(["Elsinore"]))
    state = register(org.client(org.othello), fetch_event_types=["subscription"])
    assert "Elsinore" not in {s["name"] for s in state["subscriptions"]}


def test_account_and_user_routes(org):
    """Do the own-user, settings, status, presence, typing, snippet, submessage, server settings
    and device routes take the app's encoding?"""
    app = app_client(org, org.othello)
    fetched = ok(app.fetch_api_key(org.othello.email, PASSWORD))
    assert (fetched["api_key"], fetched["user_id"]) == (org.othello.api_key, org.othello.id)
    assert ok(app.get_own_user())["user_id"] == org.othello.id
    ok(app.update_settings(twenty_four_hour_time=True, starred_message_counts=False, emojiset="text",
                           presence_enabled=False, display_emoji_reaction_users=True))
    settings = register(org.client(org.othello), fetch_event_types=["user_settings"])["user_settings"]
    assert (settings["twenty_four_hour_time"], settings["starred_message_counts"], settings["emojiset"],
            settings["presence_enabled"]) == (True, False, "text", False)
    ok(app.update_status(status_text="on a boat", emoji=("boat", "26f5", "unicode_emoji")))
    status = register(org.client(org.othello), fetch_event_types=["user_status"])["user_status"]
    # "away" too: Zulip derives it from presence_enabled, turned off above.
    assert status[str(org.othello.id)] == {"status_text": "on a boat", "emoji_name": "boat", "away": True,
                                           "emoji_code": "26f5", "reaction_type": "unicode_emoji"}
    ok(app.update_status(status_text="", emoji=("", "", "")))
    presence = ok(app.update_presence("active", last_update_id=-1, history_limit_days=14, new_user_input=True,
                                      ping_only=False))
    assert "presence_last_update_id" in presence
    ok(app.set_typing_status("start", stream_id=org.denmark.id, topic="castle"))
    ok(app.set_typing_status("stop", user_ids=[org.hamlet.id]))
    snippet = ok(app.create_saved_snippet("Greeting", "Good morrow"))
    assert snippet["saved_snippet_id"] > 0
    poll = ok(app.send_message(stream_id=org.denmark.id, topic="lunch", content="/poll Lunch?\nYes\nNo"))["id"]
    ok(app.send_submessage(poll, "widget", {"type": "vote", "key": "canned,0", "vote": 1}))
    submessages = ok(app.get_message(poll))["message"]["submessages"]
    assert json.loads(submessages[-1]["content"]) == {"type": "vote", "key": "canned,0", "vote": 1}
    assert ok(app.get_server_settings())["realm_url"]
    device_id = ok(app.register_client_device())["device_id"]
    ok(app.remove_client_device(device_id))


def test_push_token_routes(org, push_configured):
    """Do the legacy push token routes (FCM and APNs, add and remove) take the app's encoding?"""
    app = app_client(org, org.othello)
    ok(app.add_fcm_token("fcm-token-1"))
    ok(app.remove_fcm_token("fcm-token-1"))
    ok(app.add_apns_token("a" * 64, "org.zulip.Zulip"))
    ok(app.remove_apns_token("a" * 64))


def test_upload_and_temporary_url(org):
    """Does the app's multipart upload store the file, and its temporary-URL request answer a
    URL that serves the same bytes?"""
    app = app_client(org, org.othello)
    uploaded = ok(app.upload_file(PNG, "pic.png", "image/png"))
    path = uploaded["url"].removeprefix("/user_uploads/")
    realm_id, filename = path.split("/", 1)
    url = ok(app.get_file_temporary_url(int(realm_id), filename))["url"]
    assert org.flask_client.get(url).data == PNG


def test_app_client_sends_no_bare_strings(org):
    """Is the test client itself faithful: a non-raw string goes quoted, a raw one bare, and
    a GET's query follows Dart's Uri encoding?"""
    assert encode_parameters({"a": "x", "b": True, "c": [1], "d": None}) == {"a": '"x"', "b": "true", "c": "[1]"}
    app = AppClient(org.flask_client, org.hamlet.email, org.hamlet.api_key)
    response = app.get_messages([{"operator": "search", "operand": "a b"}], "newest", 0, 0)
    assert response.request.query_string == (
        b"narrow=%5B%7B%22operator%22%3A%22search%22%2C%22operand%22%3A%22a+b%22%7D%5D&anchor=newest"
        b"&num_before=0&num_after=0&allow_empty_topic_name=true")
