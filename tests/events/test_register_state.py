"""What POST /register's state holds for the client capabilities and register options that change
its size (user_list_incomplete, include_subscribers=partial, include_deactivated_groups,
empty_topic_name), the unread_msgs of a person with more unread messages than it describes, and
the organization-wide parts kept between registers (the people, channels and groups): each
change to them, by a client or by another program writing to the database, must show in the next
register."""


import json

import pytest

from chat_appliance.events import state as register_state
from chat_appliance.lib import subscriptions as subscription_lib
from chat_appliance.models import database

from ..support import pg
from ..support.helpers import PASSWORD, get_events, ok, register, send, write_elsewhere

EVERY_CAPABILITY = {"notification_settings_null": True, "bulk_message_deletion": True,
                    "user_avatar_url_field_optional": True, "stream_typing_notifications": True,
                    "user_settings_object": True, "linkifier_url_template": True, "user_list_incomplete": True,
                    "include_deactivated_groups": True, "archived_channels": True, "empty_topic_name": True}


def unread_state(client, **capabilities):
    return register(client, fetch_event_types=["message", "update_message_flags"],
                    client_capabilities=capabilities)["unread_msgs"]



# --- user_list_incomplete -------------------------------------------------------------------------


def test_user_list_incomplete_leaves_out_nobody_a_member_or_guest_may_see(org):
    """Zulip leaves out of realm_users, for a client with user_list_incomplete, only the people a
    guest may not see where the organization limits that (can_access_all_users_group); this server
    sets no such limit. Do a member's and a guest's realm_users hold every active person with and
    without the capability, each of them fetchable by GET /users/{id} with the same data?"""
    everyone = {u["user_id"] for u in ok(org.client(org.admin).get("users"))["members"] if u["is_active"]}
    for viewer in (org.hamlet, org.guest):
        client = org.client(viewer)
        with_capability = register(client, fetch_event_types=["realm_user"],
                                   client_capabilities={"user_list_incomplete": True})["realm_users"]
        without = register(client, fetch_event_types=["realm_user"])["realm_users"]
        assert with_capability == without
        assert {u["user_id"] for u in with_capability} == everyone
        for person in with_capability:
            fetched = ok(client.get(f"users/{person['user_id']}"))["user"]
            assert {key: fetched[key] for key in ("email", "full_name", "role", "delivery_email")} == \
                {key: person[key] for key in ("email", "full_name", "role", "delivery_email")}


def test_realm_users_show_each_viewer_what_its_role_may_see(org):
    """Is a real email shown to members and hidden from a guest where the person chose "members
    only", and does each viewer's own entry show its own email, whichever viewer registered first?"""
    ok(org.client(org.othello).patch("settings", email_address_visibility=2))  # members only
    seen = {}
    for viewer in (org.hamlet, org.guest, org.cordelia, org.guest):
        state = register(org.client(viewer), fetch_event_types=["realm_user"])
        people = {u["user_id"]: u for u in state["realm_users"]}
        seen[viewer.id] = people[org.othello.id]["delivery_email"]
        assert people[viewer.id]["delivery_email"] == viewer.delivery_email
    assert seen == {org.hamlet.id: org.othello.delivery_email, org.guest.id: None,
                    org.cordelia.id: org.othello.delivery_email}


# --- unread_msgs ----------------------------------------------------------------------------------


def test_unread_msgs_describes_the_newest_unread_messages(org, monkeypatch):
    """With more unread messages than unread_msgs describes (Zulip's MAX_UNREAD_MESSAGES, lowered
    here to 3), does it list the newest 3 only, with old_unreads_missing true, and once some are
    read, all of them with old_unreads_missing false?"""
    monkeypatch.setattr(register_state, "MAX_UNREAD_MESSAGES", 3)
    othello = org.client(org.othello)
    ok(othello.post("mark_all_as_read"))
    hamlet = org.client(org.hamlet)
    sent = [send(hamlet, topic=f"t{n}") for n in range(4)]
    sent.append(ok(hamlet.post("messages", type="direct", to=f"[{org.othello.id}]", content="psst"))["id"])
    unread = unread_state(othello)
    listed = sorted([i for s in unread["streams"] for i in s["unread_message_ids"]]
                    + [i for p in unread["pms"] for i in p["unread_message_ids"]])
    assert listed == sent[-3:] and unread["count"] == 3 and unread["old_unreads_missing"] is True
    assert [p["other_user_id"] for p in unread["pms"]] == [org.hamlet.id]
    ok(othello.post("messages/flags", op="add", flag="read", messages=sent[:2]))
    unread = unread_state(othello)
    assert sorted(i for s in unread["streams"] for i in s["unread_message_ids"]) == sent[2:4]
    assert unread["count"] == 3 and unread["old_unreads_missing"] is False


def test_unread_count_leaves_out_muted_conversations(org):
    """As Zulip's: does unread_msgs.count leave out the messages of a muted channel (but count
    those of a topic followed there) and of a muted topic, while `streams` lists them all; and
    are wildcard mentions there left out of `mentions`, a direct mention kept?"""
    othello, hamlet = org.client(org.othello), org.client(org.hamlet)
    ok(othello.post("mark_all_as_read"))
    ok(othello.post("users/me/subscriptions", subscriptions=[{"name": "Verona"}]))
    ok(othello.post("users/me/subscriptions/properties", subscription_data=[
        {"stream_id": org.verona.id, "property": "is_muted", "value": True}]))
    ok(othello.post("user_topics", stream_id=org.verona.id, topic="followed", visibility_policy=3))
    ok(othello.post("user_topics", stream_id=org.denmark.id, topic="hushed", visibility_policy=1))
    quiet = send(hamlet, to="Verona", topic="chatter", content="@**all** quiet")
    followed = send(hamlet, to="Verona", topic="Followed", content="hello")
    hushed = send(hamlet, to="Denmark", topic="hushed", content="@**Othello, the Moor of Venice** hi")
    loud = send(hamlet, to="Denmark", topic="open", content="@**all** loud")
    unread = unread_state(othello)
    listed = sorted(i for s in unread["streams"] for i in s["unread_message_ids"])
    assert listed == sorted([quiet, followed, hushed, loud])
    assert unread["count"] == 2  # followed, loud
    assert sorted(unread["mentions"]) == sorted([hushed, loud])


def test_unread_topics_show_the_empty_topic_as_the_client_can(org):
    """Is a message to the empty topic listed under "" for a client with empty_topic_name and
    under realm_empty_topic_display_name otherwise, in unread_msgs and user_topics alike?"""
    othello = org.client(org.othello)
    ok(othello.post("mark_all_as_read"))
    message_id = send(org.client(org.hamlet), topic="")
    ok(othello.post("user_topics", stream_id=org.denmark.id, topic="", visibility_policy=3))
    for capabilities, shown in (({"empty_topic_name": True}, ""), ({}, "general chat")):
        state = register(othello, fetch_event_types=["message", "update_message_flags", "user_topic", "realm"],
                         client_capabilities=capabilities)
        assert state["realm_empty_topic_display_name"] == "general chat"
        assert [(s["topic"], s["unread_message_ids"]) for s in state["unread_msgs"]["streams"]] == \
            [(shown, [message_id])]
        assert [t["topic_name"] for t in state["user_topics"]] == [shown]


# --- include_subscribers=partial ------------------------------------------------------------------


def test_partial_subscribers_list_bots_and_the_recently_active(org, monkeypatch):
    """With include_subscribers=partial, does a channel with at least the threshold of subscribers
    (lowered here to 4) list partial_subscribers (its bots and those active lately) instead of
    subscribers, and a smaller channel its whole subscribers list, in /register and in GET
    /users/me/subscriptions alike?"""
    monkeypatch.setattr(subscription_lib, "PARTIAL_SUBSCRIBERS_THRESHOLD", 4)
    admin = org.client(org.admin)
    ok(admin.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}],
                  principals=f"[{org.bot.id}]"))
    # Hamlet, Othello, Iago and the bot are in Denmark; only Hamlet reported presence lately.
    write_elsewhere("UPDATE user_profile SET date_joined = 0 WHERE realm_id = ?", org.realm.id)
    ok(org.client(org.hamlet).post("users/me/presence", status="active"))
    state = register(admin, fetch_event_types=["subscription"], include_subscribers="partial")
    channels = {s["name"]: s for s in state["subscriptions"] + state["never_subscribed"]}
    assert "subscribers" not in channels["Denmark"]
    assert sorted(channels["Denmark"]["partial_subscribers"]) == sorted([org.hamlet.id, org.bot.id])
    assert channels["Denmark"]["subscriber_count"] == 4
    assert sorted(channels["Verona"]["subscribers"]) == sorted([org.hamlet.id, org.cordelia.id, org.guest.id])
    assert "partial_subscribers" not in channels["Verona"]
    got = ok(admin.get("users/me/subscriptions", include_subscribers="partial"))["subscriptions"]
    listed = {s["name"]: s for s in got}
    assert sorted(listed["Denmark"]["partial_subscribers"]) == sorted([org.hamlet.id, org.bot.id])
    full = register(admin, fetch_event_types=["subscription"], include_subscribers="true")
    assert sorted({s["name"]: s for s in full["subscriptions"]}["Denmark"]["subscribers"]) == \
        sorted([org.hamlet.id, org.othello.id, org.admin.id, org.bot.id])


# --- include_deactivated_groups -------------------------------------------------------------------


def test_deactivated_groups_reach_only_clients_that_list_them(org):
    """Is a deactivated group in realm_user_groups only for a client with include_deactivated_groups,
    and does its deactivation reach that client as user_group update (deactivated true) and the
    others as user_group remove; and a later rename only the former?"""
    admin = org.client(org.admin)
    group_id = ok(admin.post("user_groups/create", name="poets", description="", members=[org.hamlet.id]))["group_id"]
    hamlet = org.client(org.hamlet)
    capable = register(hamlet, event_types=["user_group"], client_capabilities={"include_deactivated_groups": True})
    plain = register(hamlet, event_types=["user_group"])
    ok(admin.post(f"user_groups/{group_id}/deactivate"))
    ok(admin.patch(f"user_groups/{group_id}", name="former poets"))
    assert [(e["op"], e.get("data")) for e in get_events(hamlet, capable["queue_id"])] == [
        ("update", {"deactivated": True}), ("update", {"name": "former poets"})]
    assert [(e["op"], e["group_id"]) for e in get_events(hamlet, plain["queue_id"])] == [("remove", group_id)]
    with_them = register(hamlet, fetch_event_types=["realm_user_groups"],
                         client_capabilities={"include_deactivated_groups": True})["realm_user_groups"]
    without = register(hamlet, fetch_event_types=["realm_user_groups"])["realm_user_groups"]
    assert {g["id"]: g["deactivated"] for g in with_them}[group_id] is True
    assert group_id not in {g["id"] for g in without}
    assert {g["id"] for g in with_them} - {g["id"] for g in without} == {group_id}


# --- the organization-wide parts kept between registers -------------------------------------------


def people_channels_groups(client):
    state = register(client, fetch_event_types=["realm_user", "stream", "subscription", "realm_user_groups"],
                     client_capabilities=EVERY_CAPABILITY)
    return ({u["user_id"]: u for u in state["realm_users"]}, {s["stream_id"]: s for s in state["streams"]},
            {s["stream_id"]: s for s in state["subscriptions"]}, {g["name"]: g for g in state["realm_user_groups"]})


def test_each_change_shows_in_the_next_register(org):
    """After a register (which keeps the organization's people, channels and groups), does the next
    one show a renamed person, a new person, a changed channel description, a new subscriber's
    count, a deactivated person, a new group and its members, each at once?"""
    hamlet, admin = org.client(org.hamlet), org.client(org.admin)
    people_channels_groups(hamlet)
    people_channels_groups(hamlet)
    ok(admin.patch(f"users/{org.othello.id}", full_name="Othello the Renamed"))
    new_id = ok(admin.post("users", email="newcomer@zulip.example", password=PASSWORD,
                           full_name="Newcomer"))["user_id"]
    ok(admin.patch(f"streams/{org.verona.id}", description="Fair Verona"))
    before = people_channels_groups(hamlet)[1][org.denmark.id]["subscriber_count"]
    ok(org.client(org.cordelia).post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}]))
    ok(admin.post("user_groups/create", name="players", description="", members=[org.hamlet.id, new_id]))
    people, streams, subscriptions, groups = people_channels_groups(hamlet)
    assert people[org.othello.id]["full_name"] == "Othello the Renamed"
    assert people[new_id]["full_name"] == "Newcomer"
    assert streams[org.verona.id]["description"] == subscriptions[org.verona.id]["description"] == "Fair Verona"
    assert streams[org.denmark.id]["subscriber_count"] == subscriptions[org.denmark.id]["subscriber_count"] == \
        before + 1
    assert sorted(groups["players"]["members"]) == sorted([org.hamlet.id, new_id])
    ok(admin.delete(f"users/{new_id}"))
    people, _streams, _subscriptions, groups = people_channels_groups(hamlet)
    assert new_id not in people and new_id not in groups["players"]["members"]


def test_a_change_by_another_program_shows_in_the_next_register(org):
    """After another program renames a person and a channel in the database (nothing said to the
    server), does the next register show both?"""
    hamlet = org.client(org.hamlet)
    people_channels_groups(hamlet)
    people_channels_groups(hamlet)
    write_elsewhere("UPDATE user_profile SET full_name = ? WHERE id = ?", "Othello Elsewhere", org.othello.id)
    write_elsewhere("UPDATE stream SET description = ? WHERE id = ?", "Renamed elsewhere", org.denmark.id)
    people, streams, subscriptions, _groups = people_channels_groups(hamlet)
    assert people[org.othello.id]["full_name"] == "Othello Elsewhere"
    assert streams[org.denmark.id]["description"] == subscriptions[org.denmark.id]["description"] == \
        "Renamed elsewhere"


@pytest.mark.skipif(pg.ENABLED, reason="query plans are SQLite's here")
def test_the_history_dependent_reads_use_their_indexes(org):
    """Does SQLite's planner serve recent_private_conversations from the direct-message index, and
    the newest unread rows from the unread index alone, in id order (no sort of every unread
    row), each with its message's conversation from the conversation index rather than the
    message table (whose bodies put each message on a page of its own), so that neither reads a
    person's whole history?"""
    from chat_appliance.models import CONVERSATION_INDEX, unread_condition_sql

    with database.connection_context():
        sql = register_state.recent_conversations_sql().format(p="?")
        plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, (org.hamlet.id, 10)))
        assert "user_message_private" in plan and f"COVERING INDEX {CONVERSATION_INDEX}" in plan, plan
        sql = register_state.unread_rows_sql(unread_condition_sql("um")[-1]).format(p="?")
        plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, (org.hamlet.id, 10)))
        assert "COVERING INDEX user_message_unread" in plan and "TEMP B-TREE" not in plan, plan
        sql = register_state.conversations_sql().format(ids="(?, ?)")
        plan = " ".join(row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, (1, 2)))
        assert f"COVERING INDEX {CONVERSATION_INDEX}" in plan, plan


def test_unread_conversations_follow_moves_and_deletions_after_a_register(org):
    """Once a /register has read the unread messages' conversations (and kept them), does the
    next one show a message moved to another topic and channel under its new place, and leave
    out a deleted one?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    first = send(hamlet, to="Denmark", topic="before", content="one")
    second = send(hamlet, to="Denmark", topic="before", content="two")

    def unread_places():
        streams = register(othello, fetch_event_types=["message", "update_message_flags"])["unread_msgs"]["streams"]
        return {(entry["stream_id"], entry["topic"]): entry["unread_message_ids"] for entry in streams}

    assert unread_places()[(org.denmark.id, "before")] == [first, second]
    ok(org.client(org.admin).patch(f"messages/{first}", topic="after", propagate_mode="change_one",
                                   send_notification_to_old_thread="false", send_notification_to_new_thread="false"))
    places = unread_places()
    assert places[(org.denmark.id, "before")] == [second] and places[(org.denmark.id, "after")] == [first], places
    ok(org.client(org.admin).delete(f"messages/{second}"))
    places = unread_places()
    assert (org.denmark.id, "before") not in places and places[(org.denmark.id, "after")] == [first], places


def test_a_register_while_another_keeps_the_same_conversations(org, monkeypatch):
    """If another request keeps this person's unread messages' conversations while this /register
    reads its unread rows, is its answer still whole (it reads the rows one way and must not then
    take them for the other)?"""
    from chat_appliance.db import runtime

    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    ids = [send(hamlet, to="Denmark", topic="race", content=f"m{n}") for n in range(2)]
    original = register_state.query_rows

    def keeping_meanwhile(template, *params, **kwargs):
        rows = original(template, *params, **kwargs)
        if template.startswith(register_state.UNREAD_ROWS_SQL[:40]):
            cache = runtime.current().conversations
            cache.put_many({("unread of", org.othello.id): True}, cache.generation)
        return rows

    monkeypatch.setattr(register_state, "query_rows", keeping_meanwhile)
    streams = register(othello, fetch_event_types=["message", "update_message_flags"])["unread_msgs"]["streams"]
    assert {"stream_id": org.denmark.id, "topic": "race", "unread_message_ids": ids} in streams, streams


def test_recent_conversations_are_those_of_the_newest_direct_messages(org, monkeypatch):
    """Are recent_private_conversations the conversations of the newest RECENT_CONVERSATIONS_LIMIT
    direct messages, as Zulip's (so that a long history of direct messages costs nothing more),
    newest first, each with its newest message?"""
    hamlet = org.client(org.hamlet)

    def dm(*users):
        return ok(hamlet.post("messages", type="direct", to=json.dumps([u.id for u in users]), content="hi"))["id"]

    oldest = dm(org.cordelia)
    group = dm(org.othello, org.cordelia)
    newest = [dm(org.othello), dm(org.othello)]
    monkeypatch.setattr(register_state, "RECENT_CONVERSATIONS_LIMIT", 3)
    conversations = register(hamlet, fetch_event_types=["recent_private_conversations"])["recent_private_conversations"]
    assert conversations == [{"max_message_id": newest[-1], "user_ids": [org.othello.id]},
                             {"max_message_id": group, "user_ids": sorted([org.othello.id, org.cordelia.id])}]
    monkeypatch.setattr(register_state, "RECENT_CONVERSATIONS_LIMIT", 1000)
    conversations = register(hamlet, fetch_event_types=["recent_private_conversations"])["recent_private_conversations"]
    assert {"max_message_id": oldest, "user_ids": [org.cordelia.id]} in conversations, conversations


def test_presence_history_limit_days_bounds_presences(org):
    """Does presence_history_limit_days (Zulip feature level 288) leave out of `presences` those
    last seen before it, where the default two weeks keeps them?"""
    ok(org.client(org.hamlet).post("users/me/presence", status="active"))
    ok(org.client(org.othello).post("users/me/presence", status="active"))
    write_elsewhere("UPDATE user_presence SET last_connected_time = last_connected_time - ?,"
                    " last_active_time = last_active_time - ? WHERE user_profile_id = ?",
                    3 * 86400, 3 * 86400, org.othello.id)
    cordelia = org.client(org.cordelia)
    default = register(cordelia, fetch_event_types=["presence"], slim_presence=True)["presences"]
    recent = register(cordelia, fetch_event_types=["presence"], slim_presence=True,
                      presence_history_limit_days=2)["presences"]
    assert {str(org.hamlet.id), str(org.othello.id)} <= set(default)
    assert str(org.hamlet.id) in recent and str(org.othello.id) not in recent
