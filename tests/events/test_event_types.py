"""Every kind of change reaches real event queues (POST /register + GET /events), validated
against Zulip's event schemas, and only the users who may see it."""

from ..support.helpers import kinds, ok, polled, queues, register


def test_update_message_flags_event(org):
    """Does starring publish update_message_flags with both op and the legacy operation?"""
    qs = queues(org, org.othello, org.hamlet, event_types=["update_message_flags"])
    msg = ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="x"))["id"]
    ok(org.client(org.othello).post("messages/flags", messages=[msg], op="add", flag="starred"))
    [event] = polled(qs, org.othello)
    assert (event["op"], event["operation"], event["flag"], event["messages"]) == ("add", "add", "starred", [msg])
    assert polled(qs, org.hamlet) == []


def test_read_removal_carries_message_details(org):
    """Does marking a message unread send message_details so clients can recount unreads?"""
    qs = queues(org, org.othello, event_types=["update_message_flags"])
    msg = ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="x"))["id"]
    ok(org.client(org.othello).post("messages/flags", messages=[msg], op="add", flag="read"))
    ok(org.client(org.othello).post("messages/flags", messages=[msg], op="remove", flag="read"))
    events = polled(qs, org.othello)
    details = events[-1]["message_details"][str(msg)]
    assert details == {"type": "stream", "stream_id": org.denmark.id, "topic": "t", "mentioned": False}


def test_user_topic_event(org):
    """Does muting a topic send user_topic to the user only?"""
    qs = queues(org, org.othello, org.hamlet, event_types=["user_topic"])
    ok(org.client(org.othello).post("user_topics", stream_id=org.denmark.id, topic="noise", visibility_policy=1))
    [event] = polled(qs, org.othello)
    assert (event["stream_id"], event["topic_name"], event["visibility_policy"]) == (org.denmark.id, "noise", 1)
    assert polled(qs, org.hamlet) == []


def test_unsubscribe_events(org):
    """Does leaving a channel send subscription remove to the user and peer_remove to others who see it,
    but nothing to users who cannot see the channel?"""
    qs = queues(org, org.hamlet, org.othello, org.guest, event_types=["subscription"])
    ok(org.client(org.hamlet).delete("users/me/subscriptions", subscriptions=["Denmark"]))
    assert kinds(polled(qs, org.hamlet)) == [("subscription", "remove")]
    assert kinds(polled(qs, org.othello)) == [("subscription", "peer_remove")]
    assert polled(qs, org.guest) == []


def test_realm_user_update_on_role_change(org):
    """Does a role change reach everyone as realm_user update?"""
    qs = queues(org, org.hamlet, org.guest, event_types=["realm_user"])
    ok(org.client(org.owner).patch(f"users/{org.othello.id}", role=300))
    for user in (org.hamlet, org.guest):
        [event] = polled(qs, user)
        assert event["op"] == "update" and event["person"] == {"user_id": org.othello.id, "role": 300}


def test_linkifier_event(org):
    """Does adding a linkifier send realm_linkifiers to queues with the linkifier_url_template
    capability (Zulip feature level 176), not to older clients, and does /register list it?"""
    qs = queues(org, org.hamlet, event_types=["realm_linkifiers"],
                client_capabilities={"linkifier_url_template": True})
    old = queues(org, org.othello, event_types=["realm_linkifiers"])
    ok(org.client(org.admin).post("realm/filters", pattern=r"#(?P<id>[0-9]+)",
                                  url_template="https://tracker.example/{id}"))
    [event] = polled(qs, org.hamlet)
    assert event["realm_linkifiers"][0]["url_template"] == "https://tracker.example/{id}"
    assert polled(old, org.othello) == []
    state = register(org.client(org.hamlet), fetch_event_types=["realm_linkifiers"])
    assert [l["pattern"] for l in state["realm_linkifiers"]] == [r"#(?P<id>[0-9]+)"]


def test_user_group_events(org):
    """Does creating a group and adding a member send user_group add and add_members?"""
    qs = queues(org, org.cordelia, event_types=["user_group"])
    group_id = ok(org.client(org.admin).post("user_groups/create", name="actors", description="On stage",
                                             members=[org.hamlet.id]))["group_id"]
    ok(org.client(org.admin).post(f"user_groups/{group_id}/members", add=[org.othello.id]))
    events = polled(qs, org.cordelia)
    assert kinds(events) == [("user_group", "add"), ("user_group", "add_members")]
    assert events[0]["group"]["members"] == [org.hamlet.id] and events[1]["user_ids"] == [org.othello.id]


def test_channel_folder_event(org):
    """Does creating a channel folder send channel_folder add?"""
    qs = queues(org, org.hamlet, event_types=["channel_folder"])
    ok(org.client(org.admin).post("channel_folders/create", name="Projects", description="Work"))
    [event] = polled(qs, org.hamlet)
    assert event["op"] == "add" and event["channel_folder"]["name"] == "Projects"


def test_navigation_view_event_stays_with_its_owner(org):
    """Does adding a navigation view reach only its owner's queues?"""
    qs = queues(org, org.hamlet, org.othello, event_types=["navigation_view"])
    ok(org.client(org.hamlet).post("navigation_views", fragment="narrow/is/alerted", is_pinned=True, name="Alerts"))
    [event] = polled(qs, org.hamlet)
    assert event["op"] == "add" and event["navigation_view"]["fragment"] == "narrow/is/alerted"
    assert polled(qs, org.othello) == []


def test_custom_profile_fields_event(org):
    """Does creating a custom profile field send custom_profile_fields?"""
    qs = queues(org, org.hamlet, event_types=["custom_profile_fields"])
    ok(org.client(org.admin).post("realm/profile_fields", name="Phone", hint="", field_type=1))
    [event] = polled(qs, org.hamlet)
    assert [f["name"] for f in event["fields"]] == ["Phone"]


def test_own_settings_event_stays_with_the_user(org):
    """Does a personal setting change reach only that user's queues?"""
    qs = queues(org, org.hamlet, org.othello, event_types=["user_settings"])
    ok(org.client(org.hamlet).patch("settings", twenty_four_hour_time=True))
    [event] = polled(qs, org.hamlet)
    assert (event["property"], event["value"]) == ("twenty_four_hour_time", True)
    assert polled(qs, org.othello) == []
