"""POST /submessage and the /poll and /todo widgets, as Zulip's."""

import json

from ..support.flutter_app import KEYS, app_client, app_register, check_message, problems_of
from ..support.helpers import err, get_events, ok, register


def widget_of(message):
    [first] = message["submessages"][:1]
    return first["sender_id"], json.loads(first["content"])


def test_poll_message_becomes_a_widget(org):
    """Does a message starting with /poll carry its widget as the first submessage, in the
    message event and in GET /messages, in the shape the app decodes?"""
    othello = org.client(org.othello)
    queue_id = app_register(app_client(org, org.othello))["queue_id"]
    hamlet = org.client(org.hamlet)
    message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="lunch",
                                content="/poll Where shall we eat?\nThe castle\n- The harbour"))["id"]
    [event] = [e for e in get_events(othello, queue_id) if e["type"] == "message"]
    assert widget_of(event["message"]) == (org.hamlet.id, {
        "widget_type": "poll", "extra_data": {"question": "Where shall we eat?", "options": ["The castle", "The harbour"]}})
    [fetched] = ok(othello.get("messages", anchor=message_id, num_before=0, num_after=0))["messages"]
    assert fetched["submessages"] == event["message"]["submessages"]
    assert check_message(dict(fetched), "poll") == []


def test_votes_arrive_as_submessage_events(org):
    """Does a vote reach everyone who has the message as a submessage event, and appear in the
    message's submessages afterwards?"""
    hamlet = org.client(org.hamlet)
    message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="lunch",
                                content="/poll Lunch?\nYes\nNo"))["id"]
    othello = org.client(org.othello)
    queue_id = app_register(app_client(org, org.othello))["queue_id"]
    vote = json.dumps({"type": "vote", "key": "canned,0", "vote": 1})
    ok(othello.post("submessage", message_id=message_id, msg_type="widget", content=vote))
    [event] = get_events(othello, queue_id)
    assert problems_of(event, KEYS["events"]["submessage"], "submessage") == []
    assert (event["type"], event["message_id"], event["sender_id"], event["content"]) == (
        "submessage", message_id, org.othello.id, vote)
    option = json.dumps({"type": "new_option", "idx": 1, "option": "Maybe"})
    ok(hamlet.post("submessage", message_id=message_id, msg_type="widget", content=option))
    [message] = ok(othello.get("messages", anchor=message_id, num_before=0, num_after=0))["messages"]
    assert [s["content"] for s in message["submessages"][1:]] == [vote, option]
    assert [s["sender_id"] for s in message["submessages"]] == [org.hamlet.id, org.othello.id, org.hamlet.id]


def test_todo_widget(org):
    """Does /todo make a task list, and does ticking a task arrive as a submessage?"""
    hamlet = org.client(org.hamlet)
    message_id = ok(hamlet.post("messages", type="private", to=[org.othello.id],
                                content="/todo Before the play\nRehearse: act three\nFind a skull"))["id"]
    [message] = ok(hamlet.get("messages", anchor=message_id, num_before=0, num_after=0))["messages"]
    assert widget_of(message)[1] == {"widget_type": "todo", "extra_data": {
        "task_list_title": "Before the play",
        "tasks": [{"task": "Rehearse", "desc": "act three"}, {"task": "Find a skull", "desc": ""}]}}
    ok(org.client(org.othello).post("submessage", message_id=message_id, msg_type="widget",
                                    content=json.dumps({"type": "strike", "key": "0,canned"})))


def test_submessage_refusals(org):
    """Are a message without a widget (from someone else), bad JSON, malformed votes, the
    question changed by another user and an unreadable message refused as Zulip refuses them?"""
    hamlet = org.client(org.hamlet)
    othello = org.client(org.othello)
    plain = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="no widget"))["id"]
    err(othello.post("submessage", message_id=plain, msg_type="widget", content="{}"), 400, "BAD_REQUEST",
        "You cannot attach a submessage to this message.")
    poll = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="/poll Q\nA"))["id"]
    err(othello.post("submessage", message_id=poll, msg_type="widget", content="{not json"), 400, "BAD_REQUEST",
        "Invalid json for submessage")
    err(othello.post("submessage", message_id=poll, msg_type="widget",
                     content=json.dumps({"type": "vote", "key": "canned,0", "vote": 7})), 400, "BAD_REQUEST",
        "Invalid poll data")
    err(othello.post("submessage", message_id=poll, msg_type="widget",
                     content=json.dumps({"type": "question", "question": "Mine now"})), 400, "BAD_REQUEST",
        "Invalid poll data")
    ok(hamlet.post("submessage", message_id=poll, msg_type="widget",
                   content=json.dumps({"type": "question", "question": "Better question"})))
    err(othello.post("submessage", message_id=poll, msg_type="other", content="{}"), 400, "BAD_REQUEST",
        "Invalid msg_type")
    secret = ok(org.client(org.admin).post("messages", type="stream", to="secret", topic="t", content="/poll Q"))["id"]
    err(othello.post("submessage", message_id=secret, msg_type="widget",
                     content=json.dumps({"type": "vote", "key": "canned,0", "vote": 1})), 400, "BAD_REQUEST",
        "Invalid message(s)")
