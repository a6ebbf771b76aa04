"""Event queues through HTTP: POST /register, GET /events, DELETE /events, and fan-out."""

import threading
import time

import pytest

from chat_appliance.events.clock import ManualClock

from ..support.helpers import (
    ApiClient,
    active_ids,
    err,
    get_events,
    ok,
    queue_manager,
    register,
    send,
)

ZT_EVENT_TYPES = ["message", "update_message", "reaction", "subscription", "typing", "update_message_flags",
                  "update_global_notifications", "update_display_settings", "user_settings", "realm_emoji"]
ZT_FETCH_TYPES = ["realm", "presence", "subscription", "message", "starred_messages", "update_message_flags",
                  "muted_topics", "realm_user", "realm_user_groups", "update_global_notifications",
                  "update_display_settings", "user_settings", "realm_emoji", "zulip_version"]
@pytest.fixture
def manual_clock(app):
    """The app's queues on a clock the test moves (ManualClock), with Zulip's default timings:
    55 s heartbeats (each wait drawn as 55 s minus up to 10: here always 0.3 of that, 52 s) and
    600 s queue expiry. The manager is the app's; close_app forgets it with the test."""
    clock = ManualClock()
    manager = queue_manager(app)
    manager.clock, manager.random_fraction, manager.last_gc = clock, lambda: 0.3, clock.monotonic()
    manager.configure(idle_seconds=600, heartbeat_seconds=55)
    return clock


def poll_in_thread(client, queue_id, manager, **params):
    """Start a blocking GET /events in a thread; return (thread, answers) once the poll waits on its queue."""
    answers = []
    thread = threading.Thread(target=lambda: answers.append(
        get_events(client, queue_id, dont_block=False, **params)), daemon=True)
    thread.start()
    wait_until(lambda: manager.queues[queue_id].waiters)
    return thread, answers


def wait_until(condition, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_register_returns_every_key_zulip_terminal_reads(org):
    """Does register with zulip-terminal's exact parameters return every key it reads, typed as it
    expects, valid against the OpenAPI schema?"""
    body = register(org.client(org.hamlet), event_types=ZT_EVENT_TYPES, fetch_event_types=ZT_FETCH_TYPES,
                    client_gravatar=True, apply_markdown=True, include_subscribers=True, narrow=[])
    assert isinstance(body["queue_id"], str) and body["last_event_id"] == -1
    assert body["zulip_version"].startswith("11.0") and body["zulip_feature_level"] >= 106
    assert isinstance(body["max_message_id"], int)
    assert (body["user_id"], body["email"], body["full_name"]) == (org.hamlet.id, org.hamlet.email, "King Hamlet")
    assert body["realm_name"] == "Zulip Dev" and isinstance(body["realm_message_retention_days"], int)
    names = {u["full_name"] for u in body["realm_users"]}
    assert {"King Hamlet", "Iago", "Hamlet's Bot"} <= names
    assert {b["email"].split("@")[0] for b in body["cross_realm_bots"]} == {"welcome-bot", "notification-bot"}
    assert all(b["is_system_bot"] is True for b in body["cross_realm_bots"])
    assert body["realm_non_active_users"] == []
    subs = {s["name"]: s for s in body["subscriptions"]}
    assert set(subs) == {"general", "Denmark", "Verona", "secret"}
    assert sorted(subs["Denmark"]["subscribers"]) == sorted([org.hamlet.id, org.othello.id, org.admin.id])
    import re
    assert all(re.fullmatch(r"#[0-9a-f]{6}", s["color"]) for s in body["subscriptions"])
    assert body["unsubscribed"] == [] and body["never_subscribed"] == []
    # The one unread message is the Welcome Bot's direct message.
    welcome_bot = next(b["user_id"] for b in body["cross_realm_bots"] if b["email"].startswith("welcome-bot@"))
    assert body["unread_msgs"]["count"] == 1
    assert [(p["sender_id"], len(p["unread_message_ids"])) for p in body["unread_msgs"]["pms"]] == [(welcome_bot, 1)]
    assert body["unread_msgs"]["streams"] == [] and body["unread_msgs"]["huddles"] == []
    assert body["presences"] == {} and body["starred_messages"] == [] and body["muted_topics"] == []
    assert body["realm_emoji"] == {}
    assert {g["name"] for g in body["realm_user_groups"]} >= {"role:everyone", "role:members"}
    # No user_settings_object capability: the legacy top-level copies are there too.
    assert body["twenty_four_hour_time"] is False and body["pm_content_in_desktop_notifications"] is True
    assert body["user_settings"]["send_private_typing_notifications"] is True
    assert body["realm_allow_message_editing"] is True
    assert body["realm_message_content_edit_limit_seconds"] == 600
    assert (body["max_message_length"], body["max_topic_length"], body["max_stream_name_length"]) == (10000, 60, 60)
    assert body["max_stream_description_length"] == 1024
    assert body["max_channel_folder_name_length"] == 60 and body["max_channel_folder_description_length"] == 1024
    assert body["max_file_upload_size_mib"] == 25
    assert body["realm_empty_topic_display_name"] == "general chat"
    assert [t["key"] for t in body["server_report_message_types"]] == [
        "spam", "harassment", "inappropriate", "norms", "other"]
    assert body["server_typing_started_wait_period_milliseconds"] == 10000
    assert body["server_typing_stopped_wait_period_milliseconds"] == 5000
    assert body["server_typing_started_expiry_period_milliseconds"] == 15000


def test_register_other_fetch_types(org):
    """Do user_topic, drafts, saved_snippets, realm_linkifiers and the user_settings_object
    capability give their keys (and drop the legacy top-level settings)?"""
    body = register(org.client(org.cordelia), fetch_event_types=[
        "user_topic", "drafts", "saved_snippets", "realm_linkifiers", "user_settings", "subscription"],
        client_capabilities={"user_settings_object": True, "stream_typing_notifications": True})
    assert body["user_topics"] == [] and body["drafts"] == [] and body["saved_snippets"] == []
    assert body["realm_linkifiers"] == []
    assert "twenty_four_hour_time" not in body and body["user_settings"]["twenty_four_hour_time"] is False
    assert [s["name"] for s in body["never_subscribed"]] == ["Denmark"]
    assert "secret" not in [s["name"] for s in body["never_subscribed"]]
    assert "realm_users" not in body and "realm_name" not in body


def test_fetch_event_types_default_to_event_types(org):
    """Without fetch_event_types (zulip-terminal's re-register), is the state that of event_types,
    with max_message_id still present?"""
    body = register(org.client(org.hamlet), event_types=["realm_user"])
    # Hamlet has one message, the welcome direct message.
    assert "realm_users" in body and "subscriptions" not in body and body["max_message_id"] > 0


def test_bad_event_queue_id_shape(org):
    """Is an unknown queue, or another user's queue, HTTP 400 with the exact body zulip-terminal
    and the zulip library look for?"""
    body = err(org.client(org.hamlet).get("events", queue_id="nope", last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")
    assert body == {"result": "error", "code": "BAD_EVENT_QUEUE_ID", "msg": "Bad event queue id: nope",
                    "queue_id": "nope"}
    queue_id = register(org.client(org.othello))["queue_id"]
    body = err(org.client(org.hamlet).get("events", queue_id=queue_id), 400, "BAD_EVENT_QUEUE_ID")
    assert body["msg"] == f"Bad event queue id: {queue_id}"


def test_dont_block_returns_at_once(org):
    """Does dont_block on an empty queue answer at once with no events?"""
    queue_id = register(org.client(org.hamlet))["queue_id"]
    started = time.monotonic()
    assert get_events(org.client(org.hamlet), queue_id) == []
    # A blocking poll would wait for its heartbeat (45-55 s): a bound far below that and far
    # above a loaded machine's delays.
    assert time.monotonic() - started < 10


def test_heartbeat_after_its_spread_wait(app, org, manual_clock):
    """Does a blocking poll with nothing to deliver wait exactly its drawn heartbeat wait (52 s
    here, within Zulip's 45-55 s) and then return a heartbeat with the next event id?"""
    client = org.client(org.hamlet)
    queue_id = register(client)["queue_id"]
    thread, answers = poll_in_thread(client, queue_id, queue_manager(app))
    manual_clock.advance(51.9)
    thread.join(0.1)
    assert answers == []
    manual_clock.advance(0.1)
    thread.join(5)
    assert answers == [[{"type": "heartbeat", "id": 0}]]


def test_events_acknowledged_and_pruned(org, app):
    """Are events delivered in order with ids from 0, redelivered until acknowledged, and pruned
    once last_event_id covers them?"""
    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["subscription"])["queue_id"]
    ok(org.client(org.cordelia).post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}]))
    ok(org.client(org.othello).delete("users/me/subscriptions", subscriptions=["Denmark"]))
    events = get_events(client, queue_id)
    assert [(e["id"], e["op"]) for e in events] == [(0, "peer_add"), (1, "peer_remove")]
    assert events[0]["user_ids"] == [org.cordelia.id] and events[0]["stream_ids"] == [org.denmark.id]
    assert [e["id"] for e in get_events(client, queue_id, last_event_id=0)] == [1]
    assert get_events(client, queue_id, last_event_id=1) == []
    assert queue_manager(app).queues[queue_id].events == []


def test_delete_events_removes_queue(org):
    """Does DELETE /events remove the queue, so that its next poll is BAD_EVENT_QUEUE_ID, and may
    nobody else delete it?"""
    queue_id = register(org.client(org.hamlet))["queue_id"]
    err(org.client(org.othello).delete("events", queue_id=queue_id), 400, "BAD_EVENT_QUEUE_ID")
    ok(org.client(org.hamlet).delete("events", queue_id=queue_id))
    err(org.client(org.hamlet).get("events", queue_id=queue_id, last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")


def test_idle_queues_are_garbage_collected(org, app, manual_clock):
    """Is a queue nobody polled for longer than EVENT_QUEUE_IDLE_SECONDS removed, while a polled
    one stays?"""
    client = org.client(org.hamlet)
    idle = register(client)["queue_id"]
    polled = register(client)["queue_id"]
    for _ in range(4):
        manual_clock.advance(200)
        get_events(client, polled)
    err(client.get("events", queue_id=idle, last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")
    assert idle not in queue_manager(app).queues and polled in queue_manager(app).queues


def test_long_poll_woken_by_event_from_another_thread(app, org, manual_clock):
    """Does a waiting poll return, without any time passing, as soon as another request
    publishes an event for its user?"""
    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["typing"])["queue_id"]
    othello = ApiClient(org.flask_client.application.test_client(), org.othello.email, org.othello.api_key)
    thread, answers = poll_in_thread(client, queue_id, queue_manager(app))
    ok(othello.post("typing", op="start", to=[org.hamlet.id]))
    thread.join(5)
    [events] = answers
    assert [e["type"] for e in events] == ["typing"] and events[0]["id"] == 0


def test_event_types_filter(org):
    """Does a queue registered for some event types receive only those?"""
    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["message"])["queue_id"]
    ok(org.client(org.othello).post("typing", op="start", to=[org.hamlet.id]))
    send(org.client(org.othello))
    assert [e["type"] for e in get_events(client, queue_id)] == ["message"]


def test_message_event_shaped_per_queue(org):
    """Does each queue get its user's flags, markdown or HTML per apply_markdown, avatar_url
    nulled for client_gravatar, and local_message_id only on the sender's queue?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    sender_queue = register(hamlet, event_types=["message"], apply_markdown=True, client_gravatar=False)["queue_id"]
    other_hamlet_queue = register(hamlet, event_types=["message"])["queue_id"]
    othello_queue = register(othello, event_types=["message"], apply_markdown=True)["queue_id"]
    content = "**hi** @**Othello, the Moor of Venice**"
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="castle", content=content,
                   queue_id=sender_queue, local_id="1.5", read_by_sender=True))
    [own] = get_events(hamlet, sender_queue, validate=False)
    assert own["local_message_id"] == "1.5" and own["flags"] == ["read"]
    assert own["message"]["content"].startswith("<p><strong>hi</strong> <span class=\"user-mention\"")
    assert own["message"]["content_type"] == "text/html"
    assert own["message"]["avatar_url"].startswith("https://")
    [raw] = get_events(hamlet, other_hamlet_queue, validate=False)
    assert "local_message_id" not in raw
    assert raw["message"]["content"] == content and raw["message"]["content_type"] == "text/x-markdown"
    assert raw["message"]["avatar_url"] is None
    [theirs] = get_events(othello, othello_queue, validate=False)
    assert theirs["flags"] == ["mentioned"] and "local_message_id" not in theirs


def test_narrowed_queues_get_only_matching_messages(org):
    """Do stream, topic, sender, is:dm and dm narrows (legacy pairs) filter message events?"""
    hamlet = org.client(org.hamlet)
    queues = {
        "stream": register(hamlet, event_types=["message"], narrow=[["stream", "denmark"]])["queue_id"],
        "topic": register(hamlet, event_types=["message"], narrow=[["channel", "Denmark"], ["topic", "Ghost"]])["queue_id"],
        "sender": register(hamlet, event_types=["message"], narrow=[["sender", org.othello.email]])["queue_id"],
        "dm": register(hamlet, event_types=["message"], narrow=[["is", "private"]])["queue_id"],
        "pm_with": register(hamlet, event_types=["message"], narrow=[["pm-with", f"{org.cordelia.email}, "]])["queue_id"],
    }
    send(org.client(org.othello), to="Denmark", topic="ghost")
    send(hamlet, to="Verona")
    ok(org.client(org.cordelia).post("messages", type="private", to=[org.hamlet.id], content="psst"))
    ok(org.client(org.othello).post("messages", type="private", to=[org.hamlet.id, org.cordelia.id], content="all"))
    got = {name: [(e["message"]["type"], e["message"]["sender_id"]) for e in get_events(hamlet, qid)]
           for name, qid in queues.items()}
    assert got == {
        "stream": [("stream", org.othello.id)],
        "topic": [("stream", org.othello.id)],
        "sender": [("stream", org.othello.id), ("private", org.othello.id)],
        "dm": [("private", org.cordelia.id), ("private", org.othello.id)],
        "pm_with": [("private", org.cordelia.id)],
    }


def test_all_public_streams(org):
    """Does an all_public_streams queue receive public-channel messages its user was not sent,
    with no flags, but not private-channel messages or direct messages; and may a guest not ask?"""
    cordelia = org.client(org.cordelia)
    queue_id = register(cordelia, event_types=["message"], all_public_streams=True)["queue_id"]
    hamlet = org.client(org.hamlet)
    send(hamlet, to="Denmark")
    send(hamlet, to="secret")
    ok(hamlet.post("messages", type="private", to=[org.othello.id], content="psst"))
    events = get_events(cordelia, queue_id)
    assert [(e["message"].get("stream_id"), e["flags"]) for e in events] == [(org.denmark.id, [])]
    err(org.client(org.guest).post("register", all_public_streams=True), 400, "BAD_REQUEST",
        "User not authorized for this query")


def test_private_channel_events_stay_with_subscribers(org):
    """Do subscription events about a private channel reach its subscribers but not outsiders?"""
    insider = register(org.client(org.hamlet), event_types=["subscription"])["queue_id"]
    outsider = register(org.client(org.othello), event_types=["subscription"])["queue_id"]
    ok(org.client(org.admin).post("users/me/subscriptions", subscriptions=[{"name": "secret"}],
                                  principals=[org.cordelia.id]))
    assert [e["op"] for e in get_events(org.client(org.hamlet), insider)] == ["peer_add"]
    assert get_events(org.client(org.othello), outsider) == []


def test_new_private_channel_not_announced_to_outsiders(org):
    """Is a stream create event for a new private channel kept from non-subscribers who are not
    administrators, while a public one reaches everyone?"""
    othello = org.client(org.othello)
    queue_id = register(othello, event_types=["stream"])["queue_id"]
    ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "hidden"}], invite_only=True))
    ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "open"}]))
    events = get_events(othello, queue_id)
    assert [(e["op"], e["streams"][0]["name"]) for e in events] == [("create", "open")]


def test_realm_user_add_carries_full_person(org, events):
    """Does creating a user send realm_user add with a full user object to everyone?"""
    hamlet = org.client(org.hamlet)
    queue_id = register(hamlet, event_types=["realm_user"])["queue_id"]
    ok(org.client(org.admin).post("users", email="new@zulip.example", password="pw-long-enough",
                                  full_name="Newcomer"))
    [event] = get_events(hamlet, queue_id)
    assert event["op"] == "add" and event["person"]["full_name"] == "Newcomer"
    assert {"user_id", "email", "is_admin", "role", "avatar_url", "is_bot", "date_joined"} <= set(event["person"])
    _published, ids = events.one("realm_user", op="add")
    assert set(ids) == active_ids(org)  # the newcomer included


def test_settings_and_realm_update_events(org):
    """Do PATCH /settings and PATCH /realm send user_settings and realm update events?"""
    owner = org.client(org.owner)
    queue_id = register(owner, event_types=["user_settings", "realm", "realm_user"])["queue_id"]
    ok(owner.patch("settings", twenty_four_hour_time=True))
    ok(owner.patch("realm", name="Elsinore"))
    events = get_events(owner, queue_id)
    assert [(e["type"], e.get("property")) for e in events] == [
        ("user_settings", "twenty_four_hour_time"), ("realm", "name")]
    assert events[0]["value"] is True and events[1]["value"] == "Elsinore"


def test_deactivated_user_queues_dropped(org, app):
    """Are a user's queues removed when the account is deactivated?"""
    queue_id = register(org.client(org.othello))["queue_id"]
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    assert queue_id not in queue_manager(app).queues


def test_sent_message_reaches_queues_with_flags_and_local_id(org):
    """Does POST /messages deliver a message event to each recipient's queue with their own flags,
    raw Markdown for apply_markdown=false queues, and local_message_id only on the sender's queue?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    sender_queue = register(hamlet, event_types=["message"], apply_markdown=True)["queue_id"]
    other_sender_queue = register(hamlet, event_types=["message"])["queue_id"]
    receiver_queue = register(othello, event_types=["message"], apply_markdown=False)["queue_id"]
    outsider_queue = register(org.client(org.cordelia), event_types=["message"])["queue_id"]
    content = "@**Othello, the Moor of Venice** **hi**"
    sent = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content=content,
                          queue_id=sender_queue, local_id="local-1"))["id"]

    def events(client, queue_id):
        body = client.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True).get_json()
        return [e for e in body["events"] if e["type"] == "message"]

    [mine] = events(hamlet, sender_queue)
    assert mine["message"]["id"] == sent and mine["local_message_id"] == "local-1"
    assert mine["message"]["content"].startswith("<p>")
    [mine_elsewhere] = events(hamlet, other_sender_queue)
    assert "local_message_id" not in mine_elsewhere
    [theirs] = events(othello, receiver_queue)
    assert "mentioned" in theirs["flags"] and "read" not in theirs["flags"]
    assert theirs["message"]["content"] == content and theirs["message"]["content_type"] == "text/x-markdown"
    assert events(org.client(org.cordelia), outsider_queue) == []
