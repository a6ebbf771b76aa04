"""Acting as the Zulip mobile app (zulip-flutter): register with its exact parameters, then read
the snapshot, GET /messages over its narrows and the events with the keys and types its decoders
require. The key list, tests/support/data/flutter_keys.json, is made from the app's generated decoders
by scripts/flutter_keys.py (re-run it on a newer release of the app to check that release)."""

import pytest

from ..support.flutter_app import CLASSES, KEYS, app_client, app_register, check_message, problems_of
from ..support.helpers import get_events, ok, register


def test_key_list_is_the_apps():
    """Is the key list the one made from the app's decoders (its snapshot, users, messages and
    the event kinds it handles)?"""
    assert KEYS["source"]["repository"] == "zulip/zulip-flutter" and KEYS["source"]["commit"]
    snapshot = CLASSES[KEYS["snapshot"]]
    assert snapshot["server_emoji_data_url"] == {"nullable": False, "type": "string"}
    assert snapshot["custom_profile_fields"]["items"] == {"class": "CustomProfileField"}
    assert {"presence", "submessage", "realm_user/update", "message"} <= set(KEYS["events"])


def test_checker_catches_a_missing_or_mistyped_key(org):
    """Does the checker itself report a required key removed, and one of the wrong type?"""
    state = app_register(app_client(org, org.hamlet))
    assert problems_of(state, "InitialSnapshot", "register") == []
    broken = dict(state, realm_icon_url=None, max_topic_length="60")
    broken["realm_users"] = [dict(state["realm_users"][0], avatar_version="1")]
    found = problems_of(broken, "InitialSnapshot", "register")
    assert any(p.startswith("register.realm_icon_url: missing") for p in found)
    assert any(p.startswith("register.max_topic_length:") for p in found)
    assert any(p.startswith("register.realm_users[0].avatar_version:") for p in found)


def test_snapshot_has_every_key_the_app_reads(org):
    """Does /register with the app's parameters give every key its InitialSnapshot requires, with
    its type, for a member, a guest and an administrator, with profile fields and direct messages?"""
    ok(org.client(org.admin).post("realm/profile_fields", name="Team", hint="Which team", field_type=1))
    ok(org.client(org.hamlet).post("messages", type="private", to=[org.othello.id], content="hi"))
    for user in (org.hamlet, org.guest, org.admin):
        state = app_register(app_client(org, user))
        assert problems_of(state, "InitialSnapshot", f"register({user.email})") == []


NARROWS = [
    [],
    [{"operator": "channel", "operand": "Denmark"}],
    [{"operator": "stream", "operand": "Denmark"}, {"operator": "topic", "operand": "castle"}],
    [{"operator": "dm", "operand": "OTHELLO"}],
    [{"operator": "is", "operand": "starred"}],
    [{"operator": "is", "operand": "mentioned"}],
    [{"operator": "is", "operand": "dm"}],
    [{"operator": "search", "operand": "hello"}],
]


@pytest.mark.parametrize("anchor", ["newest", "first_unread", "oldest"])
def test_messages_over_the_apps_narrows(org, anchor):
    """Does GET /messages answer the app's narrows with messages its decoders accept?"""
    hamlet = org.client(org.hamlet)
    stream_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="castle", content="hello @**Othello**"))["id"]
    dm_id = ok(hamlet.post("messages", type="private", to=[org.othello.id], content="hello there"))["id"]
    othello = app_client(org, org.othello)
    ok(othello.add_reaction(stream_id, "smile", "1f642", "unicode_emoji"))
    ok(othello.update_message_flags([stream_id], "add", "starred"))
    seen = set()
    for narrow in NARROWS:
        narrow = [dict(term, operand=org.hamlet.id if term["operand"] == "OTHELLO" else term["operand"])
                  for term in narrow]
        if narrow and narrow[0]["operator"] == "dm":
            narrow[0]["operand"] = [org.hamlet.id]
        body = ok(othello.get_messages(narrow, anchor, 100, 100, client_gravatar=False, apply_markdown=True))
        assert problems_of(body, "GetMessagesResult", f"messages({narrow})") == []
        for message in body["messages"]:
            assert check_message(message, f"messages({narrow})[{message['id']}]") == []
            seen.add(message["id"])
    assert {stream_id, dm_id} <= seen


def poll_checked(app, queue_id):
    """Poll the queue as the app does; every event checked against the class the app decodes it with."""
    events = ok(app.get_events(queue_id, last_event_id=-1, dont_block=True))["events"]
    for event in events:
        kind = event["type"] if event["type"] in KEYS["events"] else f"{event['type']}/{event.get('op')}"
        cls = KEYS["events"].get(kind)
        if cls is None:
            continue  # the app ignores it (UnexpectedEvent)
        assert problems_of(event, cls, f"event {kind}") == [], event
        if event["type"] == "message":
            # The app decodes the message with the event's flags put into it.
            message = dict(event["message"], flags=event.get("flags"))
            assert check_message(message, "event message.message") == []
    return events


def test_events_the_app_decodes(org):
    """Do the events a day of use produces decode as the app decodes them?"""
    othello = app_client(org, org.othello)
    queue_id = app_register(othello)["queue_id"]
    hamlet = org.client(org.hamlet)
    message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="castle", content="hello"))["id"]
    dm_id = ok(hamlet.post("messages", type="private", to=[org.othello.id], content="psst"))["id"]
    ok(hamlet.patch(f"messages/{message_id}", content="hello, edited"))
    ok(hamlet.post(f"messages/{message_id}/reactions", emoji_name="smile"))
    ok(othello.update_message_flags([message_id, dm_id], "add", "read"))
    ok(othello.update_message_flags([dm_id], "remove", "read"))
    ok(hamlet.post("typing", op="start", to=[org.othello.id]))
    ok(hamlet.patch("settings", full_name="Prince Hamlet"))
    ok(othello.update_settings(twenty_four_hour_time=True))
    ok(othello.update_status(status_text="on a boat"))
    ok(othello.update_user_topic(org.denmark.id, "castle", 1))
    ok(othello.subscribe_to_channel(["Elsinore"]))
    events = poll_checked(othello, queue_id)
    kinds = {(e["type"], e.get("op")) for e in events}
    assert {("message", None), ("update_message", None), ("reaction", "add"), ("update_message_flags", "add"),
            ("update_message_flags", "remove"), ("typing", "start"), ("realm_user", "update"),
            ("user_settings", "update"), ("user_status", None), ("user_topic", None),
            ("subscription", "add")} <= kinds, kinds
