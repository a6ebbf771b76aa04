"""POST /typing: validation, and typing events to the right queues."""

from ..support.helpers import err, get_events, ok, register

STREAM_TYPING = {"stream_typing_notifications": True}


def test_direct_typing_reaches_participants_only(org):
    """Does a direct typing start reach the recipient and the sender, with Zulip's event shape,
    and nobody else?"""
    othello_q = register(org.client(org.othello), event_types=["typing"])["queue_id"]
    cordelia_q = register(org.client(org.cordelia), event_types=["typing"])["queue_id"]
    ok(org.client(org.hamlet).post("typing", op="start", to=[org.othello.id]))
    [event] = get_events(org.client(org.othello), othello_q)
    assert event["op"] == "start" and event["message_type"] == "direct"
    assert event["sender"] == {"user_id": org.hamlet.id, "email": org.hamlet.email}
    assert [r["user_id"] for r in event["recipients"]] == sorted([org.hamlet.id, org.othello.id])
    assert get_events(org.client(org.cordelia), cordelia_q) == []


def test_stream_typing_needs_the_capability(org):
    """Does channel typing reach subscribers whose queue declared stream_typing_notifications,
    and not other queues or non-subscribers?"""
    capable = register(org.client(org.othello), event_types=["typing"], client_capabilities=STREAM_TYPING)
    plain = register(org.client(org.othello), event_types=["typing"])
    outsider = register(org.client(org.cordelia), event_types=["typing"], client_capabilities=STREAM_TYPING)
    ok(org.client(org.hamlet).post("typing", type="channel", op="stop", stream_id=org.denmark.id, topic="(no topic)"))
    [event] = get_events(org.client(org.othello), capable["queue_id"])
    assert (event["message_type"], event["stream_id"], event["topic"], event["op"]) == (
        "stream", org.denmark.id, "", "stop")
    assert get_events(org.client(org.othello), plain["queue_id"]) == []
    assert get_events(org.client(org.cordelia), outsider["queue_id"]) == []


def test_typing_validation(org):
    """Are `private`, a missing stream_id, a missing `to`, an empty `to` and an unknown user refused
    with Zulip's errors?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("typing", type="private", op="start", to=[org.othello.id]), 400, "BAD_REQUEST", "Invalid type")
    err(hamlet.post("typing", type="stream", op="start", topic="x"), 400, "BAD_REQUEST", "Missing channel ID")
    err(hamlet.post("typing", op="start"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'to' argument")
    err(hamlet.post("typing", op="start", to=[]), 400, "BAD_REQUEST", "Empty 'to' list")
    err(hamlet.post("typing", op="start", to=[9999]), 400, "BAD_REQUEST", "No such user")
    err(hamlet.post("typing", op="go", to=[org.othello.id]), 400, "BAD_REQUEST", "Invalid op")


def test_typing_settings_honoured(org):
    """Is typing refused when the sender turned it off, and not delivered to a recipient who turned
    receiving off?"""
    hamlet = org.client(org.hamlet)
    othello_q = register(org.client(org.othello), event_types=["typing"])["queue_id"]
    ok(org.client(org.othello).patch("settings", receives_typing_notifications=False))
    ok(hamlet.post("typing", op="start", to=[org.othello.id]))
    assert get_events(org.client(org.othello), othello_q) == []
    ok(hamlet.patch("settings", send_private_typing_notifications=False))
    err(hamlet.post("typing", op="start", to=[org.othello.id]), 400, "BAD_REQUEST",
        "User has disabled typing notifications for direct messages")
