"""PATCH /messages/{id} (content, topic, channel, resolve), GET /messages/{id}/history, and the
update_message events."""

import pytest

from chat_appliance.models import FLAG_BITS, Message, Realm, UserMessage, database

from ..support.helpers import err, get_events, grant_in_channel, ok, register, send, set_date_sent


def fetch(client, message_id, **params):
    return ok(client.get(f"messages/{message_id}", **params))["message"]


def set_realm(**fields):
    with database.connection_context():
        Realm.update(**fields).execute()


def flags_of(user, message_id):
    with database.connection_context():
        row = UserMessage.get_or_none((UserMessage.user_profile == user.id) & (UserMessage.message == message_id))
        return None if row is None else row.flags


def bot_messages(client, stream, topic):
    body = ok(client.get("messages", anchor="newest", num_before=20, num_after=0,
                         narrow=[["stream", stream], ["topic", topic], ["sender", "notification-bot@zulip.example"]]))
    return [m["content"] for m in body["messages"]]


def test_content_edit_updates_message_history_and_event(org):
    """Does the sender's content edit re-render the message, set last_edit_timestamp (not
    last_moved_timestamp), record an edit_history entry with only the content fields, and send
    update_message with the old and new content to a recipient's queue?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    mid = send(hamlet, content="hello **world**")
    queue = register(othello, event_types=["update_message"])["queue_id"]
    ok(hamlet.patch(f"messages/{mid}", content="goodbye *world*"))
    message = fetch(othello, mid)
    assert message["content"] == "<p>goodbye <em>world</em></p>"
    assert isinstance(message["last_edit_timestamp"], int) and "last_moved_timestamp" not in message
    [entry] = message["edit_history"]
    assert set(entry) == {"user_id", "timestamp", "prev_content", "prev_rendered_content"}
    assert entry["prev_content"] == "hello **world**" and entry["user_id"] == org.hamlet.id
    [event] = get_events(othello, queue)
    assert event["type"] == "update_message" and event["message_id"] == mid and event["message_ids"] == [mid]
    assert event["orig_content"] == "hello **world**" and event["content"] == "goodbye *world*"
    assert event["orig_rendered_content"] == "<p>hello <strong>world</strong></p>"
    assert event["rendered_content"] == "<p>goodbye <em>world</em></p>"
    assert event["user_id"] == org.hamlet.id and event["rendering_only"] is False
    assert event["stream_id"] == org.denmark.id and event["stream_name"] == "Denmark"
    assert isinstance(event["edit_timestamp"], int) and event["flags"] == []
    assert "subject" not in event and "propagate_mode" not in event


def test_content_edit_permissions(org):
    """Is content editable only by its sender, only while the organization allows editing and
    within the edit limit (plus Zulip's 20 s of grace), with Zulip's error texts?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    err(org.client(org.admin).patch(f"messages/{mid}", content="x"), 400, "BAD_REQUEST",
        "You don't have permission to edit this message")
    set_date_sent(mid, 615)  # within the 20 s of grace after the 600 s limit
    ok(hamlet.patch(f"messages/{mid}", content="y"))
    set_date_sent(mid, 621)
    err(hamlet.patch(f"messages/{mid}", content="x"), 400, "BAD_REQUEST",
        "The time limit for editing this message has past")
    set_date_sent(mid, 10)
    set_realm(allow_message_editing=False)
    err(hamlet.patch(f"messages/{mid}", content="x"), 400, "BAD_REQUEST",
        "Your organization has turned off message editing")
    set_realm(allow_message_editing=True)
    ok(hamlet.patch(f"messages/{mid}", content="x"))


def test_invalid_requests(org):
    """Unknown or inaccessible messages give 'Invalid message(s)'; an empty edit 'Nothing to
    change'; topics on direct messages, content with a channel move, and propagate_mode alone are
    refused."""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    dm = ok(hamlet.post("messages", type="direct", to=[org.othello.id], content="psst"))["id"]
    for path in (f"messages/{mid + 1000}", f"messages/{dm}"):
        err(org.client(org.cordelia).patch(path, content="x"), 400, "BAD_REQUEST", "Invalid message(s)")
        err(org.client(org.cordelia).get(path + "/history"), 400, "BAD_REQUEST", "Invalid message(s)")
    err(hamlet.patch(f"messages/{mid}"), 400, "BAD_REQUEST", "Nothing to change")
    err(hamlet.patch(f"messages/{mid}", content="hello"), 400, "BAD_REQUEST", "Nothing to change")
    err(hamlet.patch(f"messages/{dm}", topic="t"), 400, "BAD_REQUEST", "Direct messages cannot have topics.")
    err(hamlet.patch(f"messages/{mid}", content="x", stream_id=org.verona.id), 400, "BAD_REQUEST",
        "Cannot change message content while changing channel")
    err(hamlet.patch(f"messages/{mid}", propagate_mode="change_all"), 400, "BAD_REQUEST",
        "Invalid propagate_mode without topic edit")
    err(hamlet.patch(f"messages/{mid}", topic="t", propagate_mode="all"), 400, "BAD_REQUEST")
    for resolved_general_chat in ("✔", "✔ general chat"):
        err(hamlet.patch(f"messages/{mid}", topic=resolved_general_chat), 400, "BAD_REQUEST",
            "General chat cannot be marked as resolved")


def test_prev_content_sha256_guards_concurrent_edits(org):
    """Is an edit naming the SHA-256 of content that is no longer current refused, and one naming
    the current content's hash accepted?"""
    import hashlib

    hamlet = org.client(org.hamlet)
    mid = send(hamlet, content="v1")
    ok(hamlet.patch(f"messages/{mid}", content="v2", prev_content_sha256=hashlib.sha256(b"v1").hexdigest()))
    err(hamlet.patch(f"messages/{mid}", content="v3", prev_content_sha256=hashlib.sha256(b"v1").hexdigest()),
        400, "BAD_REQUEST")
    assert ok(hamlet.get(f"messages/{mid}"))["raw_content"] == "v2"


def test_edit_checks_wildcard_mention_permission(org, monkeypatch):
    """Is an edit adding a topic wildcard mention held to the same permission as sending one?"""
    from chat_appliance.actions import messages as sending

    hamlet = org.client(org.hamlet)
    mid = send(hamlet, content="plain")
    monkeypatch.setattr(sending, "WILDCARD_MENTION_THRESHOLD", 0)
    err(hamlet.patch(f"messages/{mid}", content="@**topic** look"), 400, "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
        "You do not have permission to use topic wildcard mentions in this topic.")


def test_emptied_content_becomes_deleted_marker(org):
    """Does an edit to empty content store '(deleted)', as Zulip does, rather than fail?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    ok(hamlet.patch(f"messages/{mid}", content="  "))
    assert ok(hamlet.get(f"messages/{mid}"))["raw_content"] == "(deleted)"


def test_edit_adds_and_removes_mention_flags(org):
    """Does an edit that mentions Othello give him the mentioned flag (in the event too), and a
    later edit without the mention take it away?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    mid = send(hamlet, content="plain")
    queue = register(othello, event_types=["update_message"])["queue_id"]
    ok(hamlet.patch(f"messages/{mid}", content=f"hi @**{org.othello.full_name}**"))
    assert flags_of(org.othello, mid) & FLAG_BITS["mentioned"]
    assert "mentioned" in fetch(othello, mid)["flags"]
    [event] = get_events(othello, queue)
    assert "mentioned" in event["flags"]
    ok(hamlet.patch(f"messages/{mid}", content="plain again"))
    assert not flags_of(org.othello, mid) & FLAG_BITS["mentioned"]


def test_edit_reindexes_search(org):
    """Is edited content found by search under its new words and no longer under the old?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, content="zebra crossing")
    ok(hamlet.patch(f"messages/{mid}", content="giraffe crossing"))

    def search(word):
        return [m["id"] for m in ok(hamlet.get("messages", anchor="newest", num_before=10, num_after=0,
                                               narrow=[["search", word]]))["messages"]]

    assert search("giraffe") == [mid] and search("zebra") == []


def test_topic_move_change_all_with_notifications(org):
    """Does a topic rename with change_all move every message of the topic (case-insensitively),
    set last_moved_timestamp (not last_edit_timestamp), record prev_topic/topic, send one
    update_message with the legacy fields, and post the Notification Bot's notes where asked?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    first = send(hamlet, topic="castle")
    second = send(othello, topic="Castle")
    other = send(hamlet, topic="moat")
    queue = register(othello, event_types=["update_message"])["queue_id"]
    ok(hamlet.patch(f"messages/{first}", topic="keep", propagate_mode="change_all",
                    send_notification_to_old_thread=True, send_notification_to_new_thread=True))
    for mid in (first, second):
        message = fetch(othello, mid)
        assert message["subject"] == "keep" and isinstance(message["last_moved_timestamp"], int)
        assert "last_edit_timestamp" not in message
        [entry] = message["edit_history"]
        assert set(entry) == {"user_id", "timestamp", "prev_topic", "topic"}
        assert entry["topic"] == "keep" and entry["prev_topic"] in ("castle", "Castle")
    assert fetch(othello, other)["subject"] == "moat"
    [event] = get_events(othello, queue)
    assert event["message_ids"] == [first, second] and event["propagate_mode"] == "change_all"
    assert event["orig_subject"] == "castle" and event["subject"] == "keep" and event["topic_links"] == []
    assert event["stream_id"] == org.denmark.id and "new_stream_id" not in event and "content" not in event
    [note] = bot_messages(hamlet, "Denmark", "keep")
    assert "This topic was moved here from" in note and "castle" in note
    [old_note] = bot_messages(hamlet, "Denmark", "castle")
    assert "This topic was moved to" in old_note and "keep" in old_note
    assert org.hamlet.full_name in note and org.hamlet.full_name in old_note


def test_whole_topic_move_carries_visibility_policies(org):
    """Does a change_all move carry a user's followed topic to the new name, with user_topic
    events removing the old policy and setting the new one, while change_one leaves policies be?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    first = send(hamlet, topic="castle")
    ok(othello.post("user_topics", stream_id=org.denmark.id, topic="castle", visibility_policy=3))
    ok(hamlet.patch(f"messages/{first}", topic="aside"))
    assert [t["topic_name"] for t in ok(othello.get("user_topics"))["user_topics"]] == ["castle"]
    second = send(hamlet, topic="castle")
    queue = register(othello, event_types=["user_topic"])["queue_id"]
    ok(hamlet.patch(f"messages/{second}", topic="keep", propagate_mode="change_all",
                    send_notification_to_new_thread=False))
    [policy] = ok(othello.get("user_topics"))["user_topics"]
    assert (policy["stream_id"], policy["topic_name"], policy["visibility_policy"]) == (org.denmark.id, "keep", 3)
    events = get_events(othello, queue)
    assert [(e["topic_name"], e["visibility_policy"]) for e in events] == [("castle", 0), ("keep", 3)]


def test_moved_policy_merges_with_destination_policy(org):
    """When the destination topic already has a policy of the user, is Zulip's merge applied
    (muted meeting unmuted gives unmuted; muted meeting followed gives no policy)?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)

    def policies():
        return {t["topic_name"]: t["visibility_policy"] for t in ok(othello.get("user_topics"))["user_topics"]}

    for source, destination, expected in ((1, 2, {"b": 2}), (1, 3, {})):
        ok(othello.post("user_topics", stream_id=org.denmark.id, topic="b", visibility_policy=destination))
        ok(othello.post("user_topics", stream_id=org.denmark.id, topic="a", visibility_policy=source))
        mid = send(hamlet, topic="a")
        ok(hamlet.patch(f"messages/{mid}", topic="b", propagate_mode="change_all",
                        send_notification_to_new_thread=False))
        assert policies() == expected


def test_topic_move_change_one_and_later(org):
    """Does change_one move only the message and change_later it and the newer ones, with the
    default notification only in the new thread?"""
    hamlet = org.client(org.hamlet)
    ids = [send(hamlet, topic="t") for _ in range(3)]
    ok(hamlet.patch(f"messages/{ids[1]}", topic="one"))
    assert [fetch(hamlet, mid)["subject"] for mid in ids] == ["t", "one", "t"]
    ok(hamlet.patch(f"messages/{ids[0]}", topic="later", propagate_mode="change_later"))
    assert [fetch(hamlet, mid)["subject"] for mid in ids] == ["later", "one", "later"]
    [note] = bot_messages(hamlet, "Denmark", "later")
    assert "2 messages were moved here from" in note
    assert bot_messages(hamlet, "Denmark", "t") == []


def test_resolve_and_unresolve_are_not_moves(org):
    """Does adding the ✔ prefix (resolve) and removing it keep last_moved_timestamp absent, record
    the topic change in edit_history, and post the resolved/unresolved note?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, to="Verona", topic="bug")
    ok(hamlet.patch(f"messages/{mid}", topic="✔ bug", propagate_mode="change_all"))
    message = fetch(hamlet, mid)
    assert message["subject"] == "✔ bug" and "last_moved_timestamp" not in message
    assert message["edit_history"][0]["prev_topic"] == "bug"
    assert "has marked this topic as resolved." in bot_messages(hamlet, "Verona", "✔ bug")[0]
    # The note is older than the undo grace period, so unresolving posts its own note.
    with database.connection_context():
        Message.update(date_sent=Message.date_sent - 61).where(Message.topic == "✔ bug").execute()
    # Resolving needs only can_resolve_topics_group (everyone), so even a guest may unresolve.
    ok(org.client(org.guest).patch(f"messages/{mid}", topic="bug", propagate_mode="change_all"))
    message = fetch(hamlet, mid)
    assert message["subject"] == "bug" and "last_moved_timestamp" not in message
    assert "has marked this topic as unresolved." in bot_messages(hamlet, "Verona", "bug")[-1]


def test_quick_unresolve_deletes_resolve_note(org):
    """Does unresolving within the grace period delete the fresh 'resolved' note instead of
    adding an 'unresolved' one?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="oops")
    ok(hamlet.patch(f"messages/{mid}", topic="✔ oops", propagate_mode="change_all"))
    ok(hamlet.patch(f"messages/{mid}", topic="oops", propagate_mode="change_all"))
    assert bot_messages(hamlet, "Denmark", "oops") == [] and bot_messages(hamlet, "Denmark", "✔ oops") == []


def test_move_permissions(org):
    """May members rename topics of others' messages (Zulip's default) but not guests, and are
    members, unlike moderators, held to the one-week move limit?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, to="Verona", topic="t")
    err(org.client(org.guest).patch(f"messages/{mid}", topic="u"), 400, "BAD_REQUEST",
        "You don't have permission to edit this message")
    err(org.client(org.guest).patch(f"messages/{mid}", stream_id=org.denmark.id), 400, "BAD_REQUEST")
    ok(org.client(org.cordelia).patch(f"messages/{mid}", topic="u"))
    set_date_sent(mid, 8 * 24 * 3600)
    err(org.client(org.cordelia).patch(f"messages/{mid}", topic="v"), 400, "BAD_REQUEST",
        "The time limit for editing this message's topic has passed.")
    ok(org.client(org.moderator).patch(f"messages/{mid}", topic="v"))


def test_channel_move_moves_personal_rows(org):
    """Does moving to Verona give Verona's subscribers read copies, send update_message with
    new_stream_id, and record prev_stream/stream; and does moving on to the private channel take
    the copies of non-subscribers away with a delete_message event?"""
    hamlet, cordelia = org.client(org.hamlet), org.client(org.cordelia)
    mid = send(hamlet, topic="journey")
    queue = register(org.client(org.othello), event_types=["update_message", "delete_message"])["queue_id"]
    ok(hamlet.patch(f"messages/{mid}", stream_id=org.verona.id, propagate_mode="change_all",
                    send_notification_to_new_thread=False))
    message = fetch(cordelia, mid)
    assert message["stream_id"] == org.verona.id and message["display_recipient"] == "Verona"
    assert "read" in message["flags"] and flags_of(org.cordelia, mid) is not None
    assert isinstance(message["last_moved_timestamp"], int)
    [entry] = message["edit_history"]
    assert (entry["prev_stream"], entry["stream"]) == (org.denmark.id, org.verona.id) and "prev_topic" not in entry
    [event] = get_events(org.client(org.othello), queue)
    assert event["new_stream_id"] == org.verona.id and event["stream_id"] == org.denmark.id
    assert event["orig_subject"] == "journey" and "subject" not in event
    ok(hamlet.patch(f"messages/{mid}", stream_id=org.secret.id, send_notification_to_new_thread=False))
    assert flags_of(org.cordelia, mid) is None and flags_of(org.othello, mid) is None
    assert flags_of(org.admin, mid) is not None
    err(cordelia.get(f"messages/{mid}"), 400, "BAD_REQUEST", "Invalid message(s)")
    events = get_events(org.client(org.othello), queue, last_event_id=event["id"])
    assert [(e["type"], e.get("message_id")) for e in events] == [("delete_message", mid)]


def test_history_snapshots(org):
    """Does /history give the original (only topic, content, rendered_content, timestamp,
    user_id) and then one snapshot per edit, oldest first, with prev_* only for what changed and
    an HTML diff marking the inserted and deleted words?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="t", content="the quick fox")
    ok(hamlet.patch(f"messages/{mid}", content="the slow fox"))
    ok(hamlet.patch(f"messages/{mid}", topic="u"))
    history = ok(hamlet.get(f"messages/{mid}/history"))["message_history"]
    assert len(history) == 3
    assert set(history[0]) == {"topic", "content", "rendered_content", "timestamp", "user_id"}
    assert (history[0]["topic"], history[0]["content"]) == ("t", "the quick fox")
    assert history[1]["content"] == "the slow fox" and history[1]["prev_content"] == "the quick fox"
    assert history[1]["prev_rendered_content"] == "<p>the quick fox</p>" and "prev_topic" not in history[1]
    diff = history[1]["content_html_diff"]
    assert '<span class="highlight_text_inserted">slow</span>' in diff
    assert '<span class="highlight_text_deleted">quick</span>' in diff
    assert (history[2]["topic"], history[2]["prev_topic"]) == ("u", "t") and "prev_content" not in history[2]
    assert history[2]["content"] == "the slow fox" and "content_html_diff" not in history[2]
    assert all(h["user_id"] == org.hamlet.id for h in history)
    assert history[0]["timestamp"] <= history[1]["timestamp"] <= history[2]["timestamp"]


def test_unedited_history_and_empty_topic(org):
    """Is an unedited message's history its one original entry, and is the empty topic shown as
    'general chat' in history unless allow_empty_topic_name is true?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="")
    assert len(ok(hamlet.get(f"messages/{mid}/history"))["message_history"]) == 1
    ok(hamlet.patch(f"messages/{mid}", topic="named"))
    history = ok(hamlet.get(f"messages/{mid}/history"))["message_history"]
    assert history[0]["topic"] == "general chat" and history[1]["prev_topic"] == "general chat"
    raw = ok(hamlet.get(f"messages/{mid}/history", allow_empty_topic_name=True))["message_history"]
    assert raw[0]["topic"] == "" and raw[1]["prev_topic"] == ""
    assert fetch(hamlet, mid)["edit_history"][0]["prev_topic"] == "general chat"


def test_history_visibility_policy(org):
    """With policy 'moves', are content edits hidden from edit_history and /history (content
    shown as it is now); with 'none', is edit_history absent and /history refused?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="t", content="one")
    ok(hamlet.patch(f"messages/{mid}", content="two"))
    ok(hamlet.patch(f"messages/{mid}", topic="u"))
    set_realm(message_edit_history_visibility_policy=2)
    history = ok(hamlet.get(f"messages/{mid}/history"))["message_history"]
    assert len(history) == 2 and all(h["content"] == "two" for h in history)
    assert not any("prev_content" in h or "content_html_diff" in h for h in history)
    assert [set(e) for e in fetch(hamlet, mid)["edit_history"]] == [{"user_id", "timestamp", "prev_topic", "topic"}]
    set_realm(message_edit_history_visibility_policy=3)
    assert "edit_history" not in fetch(hamlet, mid)
    err(hamlet.get(f"messages/{mid}/history"), 400, "BAD_REQUEST")


def test_failed_edit_leaves_message_unchanged(org, monkeypatch):
    """If something fails inside the edit's transaction (here the search index), is the message
    left exactly as it was: content, topic, history and flags?"""
    from chat_appliance.db import connection as db

    hamlet = org.client(org.hamlet)
    mid = send(hamlet, content="original")
    backend = db.backend()

    def broken(*args, **kwargs):
        raise RuntimeError("index is down")

    monkeypatch.setattr(backend, "index_messages", broken)
    response = hamlet.patch(f"messages/{mid}", content=f"@**{org.othello.full_name}** changed", topic="new")
    assert response.status_code == 500
    monkeypatch.undo()
    message = fetch(hamlet, mid)
    assert message["content"] == "<p>original</p>" and message["subject"] == "castle"
    assert "edit_history" not in message and "last_edit_timestamp" not in message
    assert not flags_of(org.othello, mid) & FLAG_BITS["mentioned"]


@pytest.mark.parametrize("alias", ["topic", "subject"])
def test_subject_alias(org, alias):
    """Is `subject` accepted as the legacy name of `topic`?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    ok(hamlet.patch(f"messages/{mid}", **{alias: "renamed"}))
    assert fetch(hamlet, mid)["subject"] == "renamed"


def test_move_into_private_channel_posts_note_there(org):
    """Does the Notification Bot's note reach a private destination channel it is not in?"""
    admin = org.client(org.admin)
    mid = send(admin, topic="plans")
    ok(admin.patch(f"messages/{mid}", stream_id=org.secret.id, propagate_mode="change_all"))
    [note] = bot_messages(admin, "secret", "plans")
    assert "This topic was moved here from" in note and "Denmark" in note


def test_event_topics_follow_empty_topic_capability(org):
    """Is the empty topic in update_message shown as 'general chat' to clients without the
    empty_topic_name capability, and as '' to those with it?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="")
    plain = register(hamlet, event_types=["update_message"])["queue_id"]
    capable = register(hamlet, event_types=["update_message"],
                       client_capabilities={"empty_topic_name": True})["queue_id"]
    ok(hamlet.patch(f"messages/{mid}", topic="named", send_notification_to_new_thread=False))
    assert get_events(hamlet, plain)[0]["orig_subject"] == "general chat"
    assert get_events(hamlet, capable)[0]["orig_subject"] == ""


def test_channel_group_setting_widens_who_may_move(org):
    """Does a channel's can_move_messages_within_channel_group let a guest rename topics there,
    though the organization's default does not?"""
    mid = send(org.client(org.hamlet), to="Verona", topic="t")
    guest = org.client(org.guest)
    err(guest.patch(f"messages/{mid}", topic="u"), 400, "BAD_REQUEST")
    grant_in_channel(org.verona, "can_move_messages_within_channel_group", "role:everyone")
    ok(guest.patch(f"messages/{mid}", topic="u"))
    assert fetch(guest, mid)["subject"] == "u"


def test_big_channel_move_in_chunks(org, monkeypatch):
    """Are a move's personal rows written in chunks (here of 2), every message still reaching
    every subscriber of the destination?"""
    from chat_appliance.actions import message_edit

    monkeypatch.setattr(message_edit, "ROWS_PER_STATEMENT", 2)
    hamlet = org.client(org.hamlet)
    ids = [send(hamlet, topic="many") for _ in range(3)]
    ok(hamlet.patch(f"messages/{ids[0]}", stream_id=org.verona.id, propagate_mode="change_all",
                    send_notification_to_new_thread=False))
    assert all(flags_of(user, mid) is not None for user in (org.cordelia, org.guest) for mid in ids)
