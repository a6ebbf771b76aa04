"""End to end: the zulip 0.9.1 Client methods not exercised by the other end-to-end tests, each
against a real `serve` process, each returning success and doing what it says."""

import pytest
import zulip

from ..support.clients import check
from ..support.serve_process import ServeProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("methods") / "instance")
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def owner(server):
    return zulip.Client(email=server.email, api_key=server.api_key, site=server.url)


def test_user_methods(owner):
    """Do create_user, get_users, get_user_by_id, update_user_by_id, deactivate_user_by_id and
    reactivate_user_by_id work?"""
    user_id = check(owner.create_user({"email": "ann@example.com", "password": "a-long-password",
                                       "full_name": "Ann"}))["user_id"]
    assert "ann@example.com" in [m["email"] for m in check(owner.get_users())["members"]]
    check(owner.update_user_by_id(user_id, full_name="Ann Smith"))
    assert check(owner.get_user_by_id(user_id))["user"]["full_name"] == "Ann Smith"
    check(owner.deactivate_user_by_id(user_id))
    assert check(owner.get_user_by_id(user_id))["user"]["is_active"] is False
    check(owner.reactivate_user_by_id(user_id))
    assert check(owner.get_user_by_id(user_id))["user"]["is_active"] is True


def test_profile_field_methods(owner):
    """Do create/get/update/reorder/remove_realm_profile_field(s) work?"""
    first = check(owner.create_realm_profile_field(name="Phone", hint="", field_type=1))["id"]
    second = check(owner.create_realm_profile_field(name="Team", hint="", field_type=1))["id"]
    check(owner.update_realm_profile_field(first, name="Mobile"))
    check(owner.reorder_realm_profile_fields(order=[second, first]))
    fields = check(owner.get_realm_profile_fields())["custom_fields"]
    assert [(f["id"], f["name"]) for f in fields] == [(second, "Team"), (first, "Mobile")]
    check(owner.remove_realm_profile_field(second))
    assert [f["id"] for f in check(owner.get_realm_profile_fields())["custom_fields"]] == [first]


def test_linkifier_methods(owner):
    """Do add_realm_filter (url_template at feature level 482), get_realm_linkifiers and
    remove_realm_filter work, and does a new linkifier apply to render_message at once?"""
    filter_id = check(owner.add_realm_filter(r"#(?P<id>[0-9]+)", "https://tracker.example/{id}"))["id"]
    assert [l["id"] for l in check(owner.get_realm_linkifiers())["linkifiers"]] == [filter_id]
    rendered = check(owner.render_message({"content": "see #42"}))["rendered"]
    assert 'href="https://tracker.example/42"' in rendered
    check(owner.remove_realm_filter(filter_id))
    assert check(owner.get_realm_linkifiers())["linkifiers"] == []


def test_user_group_methods(owner):
    """Do create_user_group, get_user_groups, update_user_group and update_user_group_members work?"""
    me = check(owner.get_profile())["user_id"]
    check(owner.create_user_group({"name": "crew", "description": "backstage", "members": [me]}))
    group = next(g for g in check(owner.get_user_groups())["user_groups"] if g["name"] == "crew")
    check(owner.update_user_group({"group_id": group["id"], "description": "front of house"}))
    bob = check(owner.create_user({"email": "bob@example.com", "password": "a-long-password",
                                   "full_name": "Bob"}))["user_id"]
    check(owner.update_user_group_members(group["id"], {"add": [bob], "delete": [me]}))
    group = next(g for g in check(owner.get_user_groups())["user_groups"] if g["name"] == "crew")
    assert group["description"] == "front of house" and group["members"] == [bob]


def test_channel_and_message_methods(owner):
    """Do list_subscriptions, get_subscribers, update_stream, remove_subscriptions, mute_topic,
    set_typing_status, check_messages_match_narrow and mark_*_as_read work?"""
    me = check(owner.get_profile())["user_id"]
    check(owner.add_subscriptions([{"name": "methods"}]))
    assert "methods" in [s["name"] for s in check(owner.list_subscriptions())["subscriptions"]]
    assert check(owner.get_subscribers(stream="methods"))["subscribers"] == [me]
    sent = check(owner.send_message({"type": "stream", "to": "methods", "topic": "t", "content": "hello there"}))
    stream_id = check(owner.get_stream_id("methods"))["stream_id"]
    matched = check(owner.check_messages_match_narrow(msg_ids=[sent["id"]], narrow=[{"operator": "search",
                                                                                        "operand": "hello"}]))
    assert str(sent["id"]) in matched["messages"]
    check(owner.mute_topic({"op": "add", "stream": "methods", "topic": "t"}))
    check(owner.set_typing_status({"op": "start", "to": [me]}))
    check(owner.mark_topic_as_read(stream_id, "t"))
    check(owner.mark_stream_as_read(stream_id))
    check(owner.mark_all_as_read())
    unread = check(owner.get_messages({"anchor": "newest", "num_before": 50, "num_after": 0,
                                       "narrow": [{"operator": "is", "operand": "unread"}]}))["messages"]
    assert unread == []
    check(owner.update_stream({"stream_id": stream_id, "description": "renamed by the client",
                               "new_name": "methods2"}))
    stream = check(owner.get_streams())["streams"]
    assert ("methods2", "renamed by the client") in [(s["name"], s["description"]) for s in stream]
    check(owner.remove_subscriptions(["methods2"]))
    assert "methods2" not in [s["name"] for s in check(owner.list_subscriptions())["subscriptions"]]
