"""Soft deactivation (actions/soft_deactivation.py): a long-idle person gets no per-user row for a
plain channel message, but does for a mention, a direct message or a channel whose push
notifications they have on; when they come back, every read (the combined feed, a channel
narrow, is:unread, /register's unread counts) is as if the rows had been written all along,
from their first request on. Catching up is idempotent, and subscription changes while idle
keep the window exact."""

from chat_appliance.actions.soft_deactivation import catch_up, catch_up_idle_users, soft_deactivate_users
from chat_appliance.models import PENDING_UNREAD_INDEX, database

from ..support.helpers import ok, register


def rows_of(user_id):
    with database.connection_context():
        return {mid: flags for mid, flags in database.execute_sql(
            "SELECT message_id, flags FROM user_message WHERE user_profile_id = %s" % int(user_id)).fetchall()}


def is_idle(user_id):
    with database.connection_context():
        return bool(database.execute_sql(
            "SELECT long_term_idle FROM user_profile WHERE id = %s" % int(user_id)).fetchone()[0])


def deactivate(*users):
    with database.connection_context():
        return soft_deactivate_users([u.id for u in users])


def send(org, to, topic, content="hello", sender=None):
    return ok(org.client(sender or org.hamlet).post("messages", type="stream", to=to, topic=topic,
                                                      content=content))["id"]


def feed_ids(client, narrow=()):
    body = ok(client.get("messages", anchor="newest", num_before=1000, num_after=0, narrow=list(narrow)))
    return [m["id"] for m in body["messages"]]


def stream_id(client, name):
    return ok(client.get("get_stream_id", stream=name))["stream_id"]


def test_idle_person_gets_rows_only_for_what_says_something_and_all_on_return(org):
    """While Othello is idle, does a plain message to his channel write no row for him, while a
    mention, a direct message and a message muted-sender-style read still do; and on his return,
    do the combined feed, the channel narrow, is:unread and /register's unread counts list every
    message, in order, with him active again?"""
    othello = org.client(org.othello)
    denmark = stream_id(othello, "Denmark")
    ok(othello.post("mark_all_as_read"))
    before = feed_ids(othello)
    assert deactivate(org.othello) == [org.othello.id]
    assert is_idle(org.othello.id)
    plain = [send(org, "Denmark", "idle days", f"plain {n}") for n in range(3)]
    mention = send(org, "Denmark", "idle days", f"@**{org.othello.full_name}|{org.othello.id}** are you there?")
    direct = ok(org.client(org.hamlet).post("messages", type="direct", to=[org.othello.id], content="psst"))["id"]
    later = send(org, "Denmark", "other topic", "plain again")
    rows = rows_of(org.othello.id)
    assert not set(plain + [later]) & set(rows)
    assert mention in rows and direct in rows
    # Others' rows are written as always.
    assert set(plain) <= set(rows_of(org.hamlet.id))
    assert is_idle(org.othello.id)

    # His first request already sees everything (the catch-up runs before it is answered).
    new = sorted(plain + [mention, direct, later])
    assert feed_ids(othello) == sorted(before + new)
    assert not is_idle(org.othello.id)
    assert feed_ids(othello, [["channel", denmark]])[-5:] == sorted(plain + [mention, later])
    assert feed_ids(othello, [["is", "unread"]]) == new
    assert feed_ids(othello, [["is", "mentioned"]])[-1:] == [mention]
    assert feed_ids(othello, [["search", "plain"]]) == sorted(plain + [later])
    state = register(othello)
    unread = state["unread_msgs"]
    assert unread["count"] == len(new)
    assert sorted(i for s in unread["streams"] for i in s["unread_message_ids"]) == sorted(plain + [mention, later])
    assert unread["mentions"] == [mention]
    assert [d["unread_message_ids"] for d in unread["pms"] if d["other_user_id"] == org.hamlet.id] == [[direct]]
    # The added rows are plain unread rows: flags as a send gives them.
    body = ok(othello.get("messages", anchor=plain[0], num_before=0, num_after=0))
    assert body["messages"][0]["flags"] == []
    ok(othello.post("messages/flags", messages=plain[:1], op="add", flag="starred"))
    assert feed_ids(othello, [["is", "starred"]])[-1:] == plain[:1]


def test_catch_up_is_idempotent_and_keeps_the_window(org):
    """Does a catch-up without reactivation add each missing row once, move the window on and
    leave the person idle, so that a second one adds nothing, a send after it skips them again,
    and their return adds just that one?"""
    deactivate(org.othello)
    first = [send(org, "Denmark", "t", f"m{n}") for n in range(2)]
    with database.connection_context():
        assert catch_up(org.othello.id, reactivate=False) == 2
        assert catch_up(org.othello.id, reactivate=False) == 0
        assert catch_up_idle_users([org.othello.id]) == 0
    assert is_idle(org.othello.id)
    assert set(first) <= set(rows_of(org.othello.id))
    assert all(rows_of(org.othello.id)[m] == 0 for m in first)
    after = send(org, "Denmark", "t", "after the catch-up")
    assert after not in rows_of(org.othello.id)
    count = len(rows_of(org.othello.id))
    ok(org.client(org.othello).get("users/me"))
    assert not is_idle(org.othello.id)
    assert len(rows_of(org.othello.id)) == count + 1 and rows_of(org.othello.id)[after] == 0
    with database.connection_context():
        assert catch_up(org.othello.id, reactivate=True) is None  # active: nothing to do
    # Active again: a send writes his row at once.
    assert send(org, "Denmark", "t", "welcome back") in rows_of(org.othello.id)


def test_subscription_changes_while_idle_keep_what_was_his(org):
    """If an administrator unsubscribes an idle person from one channel and subscribes them to
    another, do they get on return the first channel's messages from while they were in it, none
    after, and the second's from when they joined it?"""
    iago = org.client(org.admin)
    ok(iago.post("users/me/subscriptions", subscriptions='[{"name": "Verona"}]'))
    ok(iago.delete("users/me/subscriptions", subscriptions='["Verona"]', principals=f"[{org.othello.id}]"))
    deactivate(org.othello)
    while_in = send(org, "Denmark", "t", "while he is in Denmark")
    verona_before = send(org, "Verona", "t", "before he joins Verona", sender=org.admin)
    ok(iago.delete("users/me/subscriptions", subscriptions='["Denmark"]', principals=f"[{org.othello.id}]"))
    ok(iago.post("users/me/subscriptions", subscriptions='[{"name": "Verona"}]',
                 principals=f"[{org.othello.id}]"))
    assert is_idle(org.othello.id)
    after_leaving = send(org, "Denmark", "t", "after he left Denmark")
    verona_after = send(org, "Verona", "t", "after he joined Verona", sender=org.admin)
    ids = set(feed_ids(org.client(org.othello)))
    assert while_in in ids and verona_after in ids
    assert after_leaving not in ids
    assert verona_before not in set(rows_of(org.othello.id))


def test_idle_person_with_channel_push_notifications_keeps_rows(org):
    """Does an idle person who has push notifications on for a channel still get a row for each
    plain message there (the notification reads it), while a muted channel's messages skip them?"""
    othello = org.client(org.othello)
    denmark, verona = stream_id(othello, "Denmark"), stream_id(othello, "Verona")
    ok(othello.post("users/me/subscriptions", subscriptions='[{"name": "Verona"}]'))
    ok(othello.post("users/me/subscriptions/properties", subscription_data=(
        f'[{{"stream_id": {denmark}, "property": "push_notifications", "value": true}},'
        f' {{"stream_id": {verona}, "property": "is_muted", "value": true}}]')))
    deactivate(org.othello)
    pushed = send(org, "Denmark", "t", "to a channel he gets pushes for")
    muted = send(org, "Verona", "t", "to a muted channel")
    rows = rows_of(org.othello.id)
    assert pushed in rows and muted not in rows


def test_a_return_between_a_sends_look_and_its_write_gets_the_row(org, monkeypatch):
    """If a person comes back after a send has decided to skip them but before it writes (the
    catch-up commits in between), does the send still write their row, so that no message is
    lost to them?"""
    from chat_appliance.actions import messages as sending

    deactivate(org.othello)
    real = sending.rows_to_skip

    def skip_then_return(*args, **kwargs):
        skipped = real(*args, **kwargs)
        assert org.othello.id in skipped
        with database.connection_context():
            catch_up(org.othello.id, reactivate=True)  # commits before the send's transaction
        return skipped

    monkeypatch.setattr(sending, "rows_to_skip", skip_then_return)
    sent = send(org, "Denmark", "race", "sent while he came back")
    assert not is_idle(org.othello.id)
    assert rows_of(org.othello.id).get(sent, 1) & ~PENDING_UNREAD_INDEX == 0  # unread (the bit is internal)
    assert sent in feed_ids(org.client(org.othello), [["is", "unread"]])


def test_a_long_return_goes_in_batches_and_a_send_between_them_is_not_lost(org, monkeypatch):
    """Is the catch-up of someone owed many rows written a batch per transaction, with the person
    idle until the last, so that a send between two batches skips them and a later batch adds
    its row: every message theirs, unread, and they are active at the end?"""
    from chat_appliance.actions import soft_deactivation

    deactivate(org.othello)
    owed = [send(org, "Denmark", "long absence", f"m{n}") for n in range(5)]
    monkeypatch.setattr(soft_deactivation, "CATCH_UP_BATCH", 2)
    real, batches = soft_deactivation._catch_up_batch, []

    def batch_then_look(user_id, reactivate):
        added, finished = real(user_id, reactivate)
        with database.connection_context():
            idle = bool(database.execute_sql("SELECT long_term_idle FROM user_profile WHERE id = %s"
                                             % int(user_id)).fetchone()[0])
        batches.append((added, finished, idle))
        if len(batches) == 1:
            owed.append(send(org, "Denmark", "long absence", "sent between two batches"))
        return added, finished

    monkeypatch.setattr(soft_deactivation, "_catch_up_batch", batch_then_look)
    ok(org.client(org.othello).get("users/me"))
    assert batches == [(2, False, True), (2, False, True), (2, False, True), (0, True, False)]
    rows = rows_of(org.othello.id)
    assert all(rows.get(m, 1) & ~PENDING_UNREAD_INDEX == 0 for m in owed)
    assert feed_ids(org.client(org.othello), [["is", "unread"]])[-6:] == owed


def test_soft_deactivate_users_command(org, app, tmp_path):
    """Does `chat-appliance soft-deactivate-users` mark only people idle for the given days (not
    bots, not someone who connected or sent recently), catch idle people up when the setting
    says so, and --activate bring a named person back with their rows?"""
    from chat_appliance.cli.admin import cmd_soft_deactivate_users

    class Args:
        instance = app.config["INSTANCE_PATH"]
        inactive_for = None
        deactivate = activate = None
        catch_up = False

    with database.connection_context():
        database.execute_sql("UPDATE user_profile SET date_joined = 0")
        database.execute_sql("UPDATE message SET date_sent = 0")
        database.execute_sql("DELETE FROM user_presence")
    ok(org.client(org.hamlet).post("users/me/presence", status="active"))  # Hamlet connected just now
    assert cmd_soft_deactivate_users(Args) == 0
    idle = {uid for uid in (org.hamlet.id, org.othello.id, org.admin.id) if is_idle(uid)}
    assert idle == {org.othello.id, org.admin.id}
    with database.connection_context():
        bots = database.execute_sql("SELECT COUNT(*) FROM user_profile WHERE is_bot AND long_term_idle").fetchone()
    assert bots[0] == 0
    sent = send(org, "Denmark", "t", "while idle")
    assert sent not in rows_of(org.othello.id)
    assert cmd_soft_deactivate_users(Args) == 0  # AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS: on by default
    assert rows_of(org.othello.id)[sent] == 0 and is_idle(org.othello.id)
    Args.activate = [org.othello.delivery_email]
    assert cmd_soft_deactivate_users(Args) == 0
    assert not is_idle(org.othello.id)
