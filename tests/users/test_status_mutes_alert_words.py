"""User status, muted users, alert words, user-group member lookup and DELETE /users/me, through HTTP."""

from chat_appliance.models import UserProfile, UserStatus, database

from ..support.helpers import err, ok, polled, queues, register


def send(client, content="hello", to="Denmark", topic="t"):
    return ok(client.post("messages", type="stream", to=to, topic=topic, content=content))["id"]


def flags_of(client, message_id):
    return ok(client.get(f"messages/{message_id}"))["message"]["flags"]


# --- status -------------------------------------------------------------------------------------


def test_status_set_read_and_cleared(org):
    """Does POST /users/me/status store text and emoji (looked up from the name), does GET
    /users/{id}/status return them, and does the empty string clear each part?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/status", status_text=" on vacation ", emoji_name="car"))
    status = ok(org.client(org.othello).get(f"users/{org.hamlet.id}/status"))["status"]
    assert status == {"status_text": "on vacation", "emoji_name": "car", "emoji_code": "1f697",
                      "reaction_type": "unicode_emoji"}
    ok(hamlet.post("users/me/status", status_text=""))
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {
        "emoji_name": "car", "emoji_code": "1f697", "reaction_type": "unicode_emoji"}
    ok(hamlet.post("users/me/status", emoji_name=""))
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {}


def test_status_errors_change_nothing(org):
    """Are no values, a long text, a code without a name, an unknown emoji and a mismatched code
    refused with Zulip's texts, leaving the status as it was?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/status", status_text="busy"))
    cases = [({}, "Client did not pass any new values."),
             ({"status_text": "x" * 61}, "status_text is too long (limit: 60 characters)"),
             ({"emoji_code": "1f697"}, "Client must pass emoji_name if they pass either emoji_code or reaction_type."),
             ({"emoji_name": "no_such_emoji_here"}, "Emoji 'no_such_emoji_here' does not exist"),
             ({"emoji_name": "car", "emoji_code": "1f600", "reaction_type": "unicode_emoji"}, "Invalid emoji name."),
             ({"emoji_name": "car", "emoji_code": "99", "reaction_type": "realm_emoji"}, "Invalid custom emoji."),
             ({"status_text": "new", "emoji_name": "nope_nope"}, "Emoji 'nope_nope' does not exist")]
    for params, msg in cases:
        err(hamlet.post("users/me/status", **params), 400, "BAD_REQUEST", msg)
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {"status_text": "busy"}


def test_status_event_and_register(org):
    """Does a status change reach everyone's queues with just the changed fields, and does
    /register's user_status list only users who set one?"""
    qs = queues(org, org.othello, org.guest, event_types=["user_status"])
    ok(org.client(org.hamlet).post("users/me/status", status_text="lunch"))
    for user in (org.othello, org.guest):
        [event] = polled(qs, user)
        assert {k: v for k, v in event.items() if k != "id"} == {
            "type": "user_status", "user_id": org.hamlet.id, "status_text": "lunch"}
    state = register(org.client(org.othello), fetch_event_types=["user_status"])
    assert state["user_status"] == {str(org.hamlet.id): {"status_text": "lunch"}}


def test_away_is_presence_enabled(org):
    """Is the deprecated away the inverse of presence_enabled, and shown as away: true?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/status", away=True))
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {"away": True}
    state = register(hamlet, fetch_event_types=["user_settings"])
    assert state["user_settings"]["presence_enabled"] is False
    ok(hamlet.post("users/me/status", away=False))
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {}
    # Through the setting itself, with no status row, in everyone's /register.
    ok(hamlet.patch("settings", presence_enabled="false"))
    state = register(org.client(org.othello), fetch_event_types=["user_status"])
    assert state["user_status"].get(str(org.hamlet.id)) == {"away": True}, state["user_status"]
    ok(hamlet.patch("settings", presence_enabled="true"))
    assert str(org.hamlet.id) not in register(org.client(org.othello), fetch_event_types=["user_status"])["user_status"]


def test_admin_sets_another_users_status(org):
    """May an administrator set someone's status, a member not, and is an unknown user 'No such user'?"""
    ok(org.client(org.admin).post(f"users/{org.hamlet.id}/status", status_text="away from desk"))
    assert ok(org.client(org.hamlet).get(f"users/{org.hamlet.id}/status"))["status"] == {
        "status_text": "away from desk"}
    err(org.client(org.othello).post(f"users/{org.hamlet.id}/status", status_text="x"), 400, "BAD_REQUEST",
        "Insufficient permission")
    err(org.client(org.admin).post("users/99999/status", status_text="x"), 400, "BAD_REQUEST", "No such user")
    err(org.client(org.admin).get("users/99999/status"), 400, "BAD_REQUEST", "No such user")
    with database.connection_context():
        assert UserStatus.get(UserStatus.user_profile == org.hamlet.id).status_text == "away from desk"


# --- muted users --------------------------------------------------------------------------------


def test_muting_marks_past_and_future_messages_read(org):
    """Does muting mark the muted user's unread messages read for the muter (with a flags event),
    do later messages from them arrive read, and are they out of /register's unread counts?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    before = send(hamlet, "before")
    qs = queues(org, org.othello, event_types=["muted_users", "update_message_flags"])
    ok(othello.post(f"users/me/muted_users/{org.hamlet.id}"))
    events = polled(qs, org.othello)
    assert events[0]["type"] == "muted_users" and [m["id"] for m in events[0]["muted_users"]] == [org.hamlet.id]
    assert events[1]["type"] == "update_message_flags" and events[1]["messages"] == [before]
    after = send(hamlet, "after")
    assert "read" in flags_of(othello, before) and "read" in flags_of(othello, after)
    assert "read" not in flags_of(org.client(org.admin), after)
    state = register(othello, fetch_event_types=["message", "update_message_flags", "muted_users"])
    unread = {i for s in state["unread_msgs"]["streams"] for i in s["unread_message_ids"]}
    assert before not in unread and after not in unread
    assert [m["id"] for m in state["muted_users"]] == [org.hamlet.id]


def test_mute_errors(org):
    """Are muting oneself, muting twice, an unknown user and unmuting someone not muted refused?"""
    othello = org.client(org.othello)
    err(othello.post(f"users/me/muted_users/{org.othello.id}"), 400, "BAD_REQUEST", "Cannot mute self")
    err(othello.post("users/me/muted_users/99999"), 400, "BAD_REQUEST", "No such user")
    err(othello.delete(f"users/me/muted_users/{org.hamlet.id}"), 400, "BAD_REQUEST", "User is not muted")
    ok(othello.post(f"users/me/muted_users/{org.hamlet.id}"))
    err(othello.post(f"users/me/muted_users/{org.hamlet.id}"), 400, "BAD_REQUEST", "User already muted")
    ok(othello.delete(f"users/me/muted_users/{org.hamlet.id}"))
    assert "read" not in flags_of(othello, send(org.client(org.hamlet)))


# --- alert words --------------------------------------------------------------------------------


def test_alert_words_add_list_remove(org):
    """Do add and remove answer the whole list, ignoring case and duplicates, with an event each?"""
    othello = org.client(org.othello)
    qs = queues(org, org.othello, event_types=["alert_words"])
    assert ok(othello.post("users/me/alert_words", alert_words=["Castle", " ghost ", ""]))["alert_words"] == [
        "Castle", "ghost"]
    assert ok(othello.post("users/me/alert_words", alert_words=["castle", "moor"]))["alert_words"] == [
        "Castle", "ghost", "moor"]
    assert ok(othello.delete("users/me/alert_words", alert_words=["GHOST", "absent"]))["alert_words"] == [
        "Castle", "moor"]
    assert ok(othello.get("users/me/alert_words"))["alert_words"] == ["Castle", "moor"]
    assert [e["alert_words"] for e in polled(qs, org.othello)][-1] == ["Castle", "moor"]
    assert register(othello, fetch_event_types=["alert_words"])["alert_words"] == ["Castle", "moor"]
    err(othello.post("users/me/alert_words", alert_words=["x" * 101]), 400, "BAD_REQUEST",
        "alert_words[0] is too long (limit: 100 characters)")
    err(othello.post("users/me/alert_words", alert_words="castle"), 400, "BAD_REQUEST")
    assert ok(othello.get("users/me/alert_words"))["alert_words"] == ["Castle", "moor"]


def test_alert_words_flag_messages(org):
    """Does a message with one of my alert words (any case, as a whole word) get has_alert_word for
    me only, and a message with it inside another word not?"""
    ok(org.client(org.othello).post("users/me/alert_words", alert_words=["castle"]))
    hamlet = org.client(org.hamlet)
    hit = send(hamlet, "Meet me at the CASTLE, tonight.")
    miss = send(hamlet, "Sandcastles are fun")
    assert "has_alert_word" in flags_of(org.client(org.othello), hit)
    assert "has_alert_word" not in flags_of(org.client(org.othello), miss)
    assert "has_alert_word" not in flags_of(org.client(org.admin), hit)


# --- group member lookup and self-deactivation ---------------------------------------------------


def test_is_user_group_member(org):
    """Is a member found recursively and directly, a non-member not, and are unknown groups and
    users Zulip's errors?"""
    client = org.client(org.hamlet)
    groups = {g["name"]: g["id"] for g in ok(client.get("user_groups"))["user_groups"]}
    members, admins = groups["role:members"], groups["role:administrators"]
    assert ok(client.get(f"user_groups/{members}/members/{org.owner.id}"))["is_user_group_member"] is True
    assert ok(client.get(f"user_groups/{members}/members/{org.owner.id}",
                         direct_member_only=True))["is_user_group_member"] is False
    assert ok(client.get(f"user_groups/{admins}/members/{org.hamlet.id}"))["is_user_group_member"] is False
    err(client.get(f"user_groups/99999/members/{org.hamlet.id}"), 400, "BAD_REQUEST", "Invalid user group")
    err(client.get(f"user_groups/{members}/members/99999"), 400, "BAD_REQUEST", "No such user")


def test_deactivate_own_account(org):
    """Does DELETE /users/me deactivate the requester (and its key stops working), while the only
    owner is refused with CANNOT_DEACTIVATE_LAST_USER?"""
    body = err(org.client(org.owner).delete("users/me"), 400, "CANNOT_DEACTIVATE_LAST_USER",
               "Cannot deactivate the only organization owner")
    assert body["entity"] == "organization owner" and body["is_last_owner"] is True
    ok(org.client(org.othello).delete("users/me"))
    with database.connection_context():
        assert UserProfile.get_by_id(org.othello.id).is_active is False
        assert UserProfile.get_by_id(org.owner.id).is_active is True
    err(org.client(org.othello).get("users/me"), 401, "USER_DEACTIVATED")


def test_alert_word_flag_follows_edits(org):
    """Does editing a message in or out of an alert word set or clear has_alert_word, as Zulip does?"""
    ok(org.client(org.othello).post("users/me/alert_words", alert_words=["castle"]))
    hamlet = org.client(org.hamlet)
    message_id = send(hamlet, "nothing yet")
    ok(hamlet.patch(f"messages/{message_id}", content="the castle walls"))
    assert "has_alert_word" in flags_of(org.client(org.othello), message_id)
    ok(hamlet.patch(f"messages/{message_id}", content="the moat"))
    assert "has_alert_word" not in flags_of(org.client(org.othello), message_id)
