"""Read receipts (GET /messages/{id}/read_receipts) and message-edit typing notifications
(POST /messages/{id}/typing)."""

from ..support.helpers import err, ok, polled, queues


def send(client, to="Denmark", content="hello"):
    return ok(client.post("messages", type="stream", to=to, topic="t", content=content))["id"]


def mark_read(client, message_id):
    ok(client.post("messages/flags", messages=[message_id], op="add", flag="read"))


def test_read_receipts_list_readers_not_sender(org):
    """Does the list hold the users who read the message, bots included, never the sender?"""
    msg = send(org.client(org.hamlet))
    receipts = lambda: ok(org.client(org.othello).get(f"messages/{msg}/read_receipts"))["user_ids"]  # noqa: E731
    assert receipts() == []
    mark_read(org.client(org.othello), msg)
    mark_read(org.client(org.admin), msg)
    mark_read(org.client(org.hamlet), msg)
    assert receipts() == sorted([org.othello.id, org.admin.id])


def test_read_receipts_honour_settings(org):
    """Are users with send_read_receipts off left out, and is the endpoint refused while the
    organization has read receipts off?"""
    msg = send(org.client(org.hamlet))
    for user in (org.othello, org.admin):
        mark_read(org.client(user), msg)
    ok(org.client(org.othello).patch("settings", send_read_receipts=False))
    assert ok(org.client(org.hamlet).get(f"messages/{msg}/read_receipts"))["user_ids"] == [org.admin.id]
    ok(org.client(org.admin).patch("realm", enable_read_receipts=False))
    err(org.client(org.hamlet).get(f"messages/{msg}/read_receipts"), 400, "BAD_REQUEST",
        "Read receipts are disabled in this organization.")


def test_read_receipts_need_access(org):
    """Is a message the requester may not read refused as Invalid message(s)?"""
    secret = send(org.client(org.hamlet), to="secret")
    err(org.client(org.othello).get(f"messages/{secret}/read_receipts"), 400, "BAD_REQUEST", "Invalid message(s)")
    err(org.client(org.othello).get("messages/99999/read_receipts"), 400, "BAD_REQUEST", "Invalid message(s)")


def test_edit_typing_in_channel(org):
    """Does editing a channel message notify its subscribers (in Zulip's event shape) and not others?"""
    qs = queues(org, org.othello, org.cordelia, event_types=["typing_edit_message"])
    msg = send(org.client(org.hamlet))
    ok(org.client(org.hamlet).post(f"messages/{msg}/typing", op="start"))
    [event] = polled(qs, org.othello)
    assert (event["op"], event["sender_id"], event["message_id"]) == ("start", org.hamlet.id, msg)
    assert event["recipient"] == {"type": "channel", "channel_id": org.denmark.id, "topic": "t"}
    assert polled(qs, org.cordelia) == []


def test_edit_typing_in_direct_message(org):
    """Does editing a direct message notify its participants with their ids?"""
    qs = queues(org, org.othello, event_types=["typing_edit_message"])
    msg = ok(org.client(org.hamlet).post("messages", type="direct", to=[org.othello.id], content="hi"))["id"]
    ok(org.client(org.hamlet).post(f"messages/{msg}/typing", op="stop"))
    [event] = polled(qs, org.othello)
    assert event["op"] == "stop"
    assert event["recipient"] == {"type": "direct", "user_ids": sorted([org.hamlet.id, org.othello.id])}


def test_edit_typing_errors(org):
    """Are a bad op, an unreadable message and a user with typing notifications off refused?"""
    msg = send(org.client(org.hamlet))
    err(org.client(org.hamlet).post(f"messages/{msg}/typing", op="pause"), 400, "BAD_REQUEST")
    err(org.client(org.hamlet).post(f"messages/{msg}/typing"), 400, "REQUEST_VARIABLE_MISSING")
    secret = send(org.client(org.hamlet), to="secret")
    err(org.client(org.othello).post(f"messages/{secret}/typing", op="start"), 400, "BAD_REQUEST",
        "Invalid message(s)")
    ok(org.client(org.hamlet).patch("settings", send_stream_typing_notifications=False))
    err(org.client(org.hamlet).post(f"messages/{msg}/typing", op="start"), 400, "BAD_REQUEST",
        "User has disabled typing notifications for channel messages")


def test_read_receipts_leave_out_muted_users(org):
    """Are users the requester muted, and users who muted the requester, left out of the list?"""
    msg = ok(org.client(org.cordelia).post("messages", type="direct", content="group",
                                           to=[org.guest.id, org.hamlet.id, org.othello.id, org.admin.id]))["id"]
    for user in (org.hamlet, org.othello, org.admin):
        mark_read(org.client(user), msg)
    ok(org.client(org.guest).post(f"users/me/muted_users/{org.hamlet.id}"))
    ok(org.client(org.othello).post(f"users/me/muted_users/{org.guest.id}"))
    assert ok(org.client(org.guest).get(f"messages/{msg}/read_receipts"))["user_ids"] == [org.admin.id]
    assert ok(org.client(org.cordelia).get(f"messages/{msg}/read_receipts"))["user_ids"] == sorted(
        [org.hamlet.id, org.othello.id, org.admin.id])
