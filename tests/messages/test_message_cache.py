"""The message cache behind GET /messages (lib/messages.py): a message object is built once per
shape and reused with each viewer's flags. Oracle: after every kind of change, what a warm cache
answers equals what the database answers with the cache emptied."""

import json

import pytest

from chat_appliance.db.runtime import GenerationCache
from chat_appliance.lib import messages as message_lib
from chat_appliance.models import database

from ..support.helpers import ok, send

SHAPES = [dict(apply_markdown="true", client_gravatar="true"),
          dict(apply_markdown="false", client_gravatar="false", allow_empty_topic_name="true")]


def fetch(client, **shape):
    return ok(client.get("messages", anchor="newest", num_before=20, num_after=0,
                         narrow=json.dumps([{"operator": "channel", "operand": "Denmark"}]), **shape))["messages"]


def cache():
    with database.connection_context():
        return message_lib.message_cache()


def views(org):
    """Every viewer and shape's answer: a member, an administrator and the sender."""
    return {(user.email, json.dumps(shape)): fetch(org.client(user), **shape)
            for user in (org.othello, org.admin, org.hamlet) for shape in SHAPES}


def warm_equals_cold(org):
    warm = views(org)
    cache().clear()
    cold = views(org)
    assert warm == cold
    return warm


@pytest.fixture
def sent(org):
    hamlet = org.client(org.hamlet)
    ids = [send(hamlet, topic="ticket #123", content=f"message **{n}** #123") for n in range(3)]
    warm_equals_cold(org)
    return ids


CHANGES = {
    "edit": lambda org, ids: org.client(org.hamlet).patch(f"messages/{ids[0]}", content="edited *now*"),
    "move topic": lambda org, ids: org.client(org.hamlet).patch(f"messages/{ids[1]}", topic="elsewhere",
                                                                propagate_mode="change_one"),
    "reaction": lambda org, ids: org.client(org.othello).post(f"messages/{ids[2]}/reactions", emoji_name="wave"),
    "delete": lambda org, ids: org.client(org.admin).delete(f"messages/{ids[0]}"),
    "sender renamed": lambda org, ids: org.client(org.hamlet).patch("settings", full_name="Prince Hamlet"),
    "sender hides email": lambda org, ids: org.client(org.hamlet).patch("settings", email_address_visibility=4),
    "channel renamed": lambda org, ids: org.client(org.admin).patch(f"streams/{org.denmark.id}",
                                                                   description="renamed below"),
    "linkifier added": lambda org, ids: org.client(org.admin).post(
        "realm/filters", pattern=r"#(?P<id>[0-9]+)", url_template="https://tickets.example.com/{id}"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_warm_cache_answers_as_the_database_after_each_change(org, sent, change):
    """After this change, does every viewer get from the cache exactly what a fetch from the
    database gives?"""
    before = views(org)
    ok(CHANGES[change](org, sent))
    after = warm_equals_cold(org)
    if change != "channel renamed":
        assert after != before, "the change should show in some view"


def test_renaming_the_channel_shows_at_once(org, sent):
    """Is a renamed channel's new name in display_recipient on the next (warm) fetch?"""
    ok(org.client(org.admin).patch(f"streams/{org.denmark.id}", new_name="Elsinore"))
    messages = ok(org.client(org.othello).get(
        "messages", anchor="newest", num_before=5, num_after=0,
        narrow=json.dumps([{"operator": "channel", "operand": "Elsinore"}])))["messages"]
    assert {m["display_recipient"] for m in messages} == {"Elsinore"}


def test_flags_are_the_viewers_own(org, sent):
    """Served from the cache, are flags still each viewer's (read and starred only for who
    marked them)?"""
    ok(org.client(org.othello).post("messages/flags", messages=json.dumps([sent[1]]), op="add", flag="starred"))
    ok(org.client(org.othello).post("messages/flags", messages=json.dumps([sent[0]]), op="add", flag="read"))
    by_id = {user.email: {m["id"]: m["flags"] for m in fetch(org.client(user))} for user in (org.othello, org.admin)}
    assert "starred" in by_id[org.othello.email][sent[1]] and "starred" not in by_id[org.admin.email][sent[1]]
    assert "read" in by_id[org.othello.email][sent[0]] and "read" not in by_id[org.admin.email][sent[0]]


def test_warm_fetches_do_not_load_messages(org, sent, monkeypatch):
    """Once cached, are messages served without loading their rows again?"""
    loads = []
    real = message_lib.load_messages
    monkeypatch.setattr(message_lib, "load_messages", lambda ids: loads.append(list(ids)) or real(ids))
    fetch(org.client(org.othello))
    assert loads == []
    cache().clear()
    fetch(org.client(org.othello))
    assert loads and set(sent) <= set(loads[0])


def test_the_cache_is_bounded_and_ignores_stale_writes():
    """Does the cache drop its least recently used entries past its size, and refuse entries
    read before an invalidation?"""
    bounded = GenerationCache(3)
    bounded.put_many([(mid, {"id": mid}) for mid in range(5)], bounded.generation)
    assert sorted(bounded.get_many(range(5))) == [2, 3, 4]
    generation = bounded.generation
    bounded.clear()
    bounded.put_many([(9, {"id": 9})], generation)
    assert bounded.get_many([9]) == {}
