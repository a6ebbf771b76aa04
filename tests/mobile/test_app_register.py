"""POST /register as the Zulip mobile app (zulip-flutter) needs it: the keys its InitialSnapshot
requires, the emoji data and icon it downloads, and idle_queue_timeout."""

import pytest

from chat_appliance.events.clock import ManualClock

from ..support.helpers import err, get_events, ok, queue_manager, register


@pytest.fixture
def manual_clock(app):
    """The app's queues on a clock the test moves, with the default 600 s expiry."""
    clock = ManualClock()
    manager = queue_manager(app)
    manager.clock, manager.random_fraction, manager.last_gc = clock, lambda: 0.3, clock.monotonic()
    manager.configure(idle_seconds=600, heartbeat_seconds=55)
    return clock


def test_register_has_the_keys_the_app_requires(org):
    """Does a register without event types carry the twelve keys the app cannot load without,
    with Zulip's types and values?"""
    state = register(org.client(org.othello), slim_presence="true")
    assert state["server_presence_ping_interval_seconds"] == 60
    assert state["server_presence_offline_threshold_seconds"] == 140
    assert state["realm_wildcard_mention_policy"] in (1, 2, 3, 5, 6, 7)
    assert state["realm_waiting_period_threshold"] == 0
    assert state["realm_presence_disabled"] is False
    assert state["event_queue_longpoll_timeout_seconds"] == 55
    assert isinstance(state["custom_profile_fields"], list)
    assert state["realm_default_external_accounts"]["github"]["url_pattern"] == "https://github.com/%(username)s"
    assert all(set(account) == {"name", "text", "hint", "url_pattern"}
               for account in state["realm_default_external_accounts"].values())
    names = {s["name"] for s in state["streams"]}
    assert {"general", "Denmark", "Verona"} <= names and "secret" not in names


@pytest.mark.config(EVENT_HEARTBEAT_SECONDS=30)
def test_longpoll_timeout_is_the_heartbeat_used(org):
    """Is event_queue_longpoll_timeout_seconds the heartbeat the server is configured with?"""
    assert register(org.client(org.hamlet))["event_queue_longpoll_timeout_seconds"] == 30


def test_custom_profile_fields_in_register(org):
    """Does a field an administrator creates appear in custom_profile_fields?"""
    ok(org.client(org.admin).post("realm/profile_fields", name="Team", hint="Which team", field_type=1))
    [field] = register(org.client(org.hamlet), fetch_event_types=["custom_profile_fields"])["custom_profile_fields"]
    assert (field["name"], field["hint"], field["type"]) == ("Team", "Which team", 1)


def test_recent_private_conversations(org):
    """Does recent_private_conversations list each direct conversation once, newest first, with
    the other members and the latest message id (empty user_ids for one with oneself)?"""
    hamlet = org.client(org.hamlet)
    first = ok(hamlet.post("messages", type="private", to=[org.othello.id], content="a"))["id"]
    group = ok(hamlet.post("messages", type="private", to=[org.othello.id, org.cordelia.id], content="b"))["id"]
    latest = ok(hamlet.post("messages", type="private", to=[org.othello.id], content="c"))["id"]
    own = ok(hamlet.post("messages", type="private", to=[org.hamlet.id], content="d"))["id"]
    recent = register(hamlet, fetch_event_types=["recent_private_conversations"])["recent_private_conversations"]
    assert recent[:3] == [
        {"max_message_id": own, "user_ids": []},
        {"max_message_id": latest, "user_ids": [org.othello.id]},
        {"max_message_id": group, "user_ids": sorted([org.othello.id, org.cordelia.id])},
    ]
    assert first not in [c["max_message_id"] for c in recent]


def test_streams_follow_access(org):
    """Does the guest's `streams` hold only the channels it may see?"""
    state = register(org.client(org.guest), fetch_event_types=["stream"])
    subscribed = {s["name"] for s in register(org.client(org.guest), fetch_event_types=["subscription"])["subscriptions"]}
    assert {s["name"] for s in state["streams"]} >= subscribed
    assert "secret" not in {s["name"] for s in state["streams"]}


def test_emoji_data_and_icon_served_without_credentials(org, anon):
    """Do server_emoji_data_url and realm_icon_url answer without credentials, the emoji data in
    Zulip's code_to_names format?"""
    state = register(org.client(org.hamlet))
    emoji = anon.flask_client.get(state["server_emoji_data_url"])
    assert emoji.status_code == 200 and emoji.mimetype == "application/json"
    names = emoji.get_json()["code_to_names"]
    assert names["1f44d"][0] == "+1" and "thumbs_up" in names["1f44d"]
    assert all(isinstance(v, list) and v for v in names.values())
    icon = anon.flask_client.get(state["realm_icon_url"])
    assert icon.status_code == 200 and icon.data.startswith(b"\x89PNG")


def test_idle_queue_timeout_mobile_keeps_the_queue(org, app, manual_clock):
    """Does a queue registered with idle_queue_timeout=mobile outlive the default 10 minutes by
    far (12 hours), while a default queue expires?"""
    client = org.client(org.hamlet)
    mobile = register(client, idle_queue_timeout="mobile")["queue_id"]
    default = register(client)["queue_id"]
    manual_clock.advance(601)
    queue_manager(app).collect_garbage(force=True)
    err(client.get("events", queue_id=default, last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")
    assert get_events(client, mobile) == []
    manual_clock.advance(12 * 3600 - 1)
    assert get_events(client, mobile) == []
    manual_clock.advance(12 * 3600 + 1)
    queue_manager(app).collect_garbage(force=True)
    err(client.get("events", queue_id=mobile, last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")


def test_idle_queue_timeout_numeric(org, app, manual_clock):
    """Is a numeric idle_queue_timeout honoured, and a malformed one refused?"""
    client = org.client(org.hamlet)
    queue_id = register(client, idle_queue_timeout=3600)["queue_id"]
    manual_clock.advance(3000)
    queue_manager(app).collect_garbage(force=True)
    assert get_events(client, queue_id) == []
    manual_clock.advance(3601)
    queue_manager(app).collect_garbage(force=True)
    err(client.get("events", queue_id=queue_id, last_event_id=-1), 400, "BAD_EVENT_QUEUE_ID")
    err(client.post("register", idle_queue_timeout="desktop"), 400, "BAD_REQUEST")


def test_no_fetch_event_types_sends_everything(org):
    """Does a register naming neither event_types nor fetch_event_types send every state key,
    and fetch_event_types restrict it?"""
    client = org.client(org.hamlet)
    everything = register(client)
    assert {"realm_users", "subscriptions", "streams", "unread_msgs", "recent_private_conversations",
            "custom_profile_fields", "presences", "user_settings"} <= set(everything)
    narrow = register(client, fetch_event_types=["realm_user"])
    assert "realm_users" in narrow and "streams" not in narrow and "subscriptions" not in narrow
