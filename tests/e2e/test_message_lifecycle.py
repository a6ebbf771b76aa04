"""End to end: the zulip 0.9.1 client's message lifecycle calls against a real serve process."""

import pytest
import zulip

from ..support.serve_process import ServeProcess


@pytest.fixture
def client(tmp_path):
    proc = ServeProcess(tmp_path / "instance")
    yield zulip.Client(email=proc.email, api_key=proc.api_key, site=proc.url)
    proc.stop()


def send(client, topic, content):
    sent = client.send_message({"type": "stream", "to": "general", "topic": topic, "content": content})
    assert sent["result"] == "success", sent
    return sent["id"]


def test_edit_history_reaction_delete(client):
    """Do update_message, get_message_history, add_reaction, remove_reaction and delete_message
    work through the zulip client?"""
    mid = send(client, "e2e", "first draft")
    edited = client.update_message({"message_id": mid, "content": "second draft"})
    assert edited["result"] == "success", edited
    history = client.get_message_history(mid)
    assert history["result"] == "success", history
    assert [h["content"] for h in history["message_history"]] == ["first draft", "second draft"]
    assert "highlight_text_inserted" in history["message_history"][1]["content_html_diff"]
    reacted = client.add_reaction({"message_id": mid, "emoji_name": "wave"})
    assert reacted["result"] == "success", reacted
    message = client.get_raw_message(mid)["message"]
    assert [(r["emoji_name"], r["emoji_code"]) for r in message["reactions"]] == [("wave", "1f44b")]
    assert client.remove_reaction({"message_id": mid, "emoji_name": "wave"})["result"] == "success"
    deleted = client.delete_message(mid)
    assert deleted["result"] == "success", deleted
    gone = client.get_raw_message(mid)
    assert gone["result"] == "error" and gone["msg"] == "Invalid message(s)"


def test_move_topic(client):
    """Does the client's move_topic (which looks up the newest message of the topic and PATCHes
    it with change_all) rename the whole topic, and list it in get_stream_topics?"""
    ids = [send(client, "old name", f"message {n}") for n in range(2)]
    stream_id = client.get_stream_id("general")["stream_id"]
    moved = client.move_topic("general", "general", "old name", new_topic="new name")
    assert moved["result"] == "success", moved
    for mid in ids:
        assert client.get_raw_message(mid)["message"]["subject"] == "new name"
    # move_topic asks for notes in both threads: the old topic keeps only the Notification Bot's.
    topics = client.get_stream_topics(stream_id)
    assert topics["result"] == "success"
    assert [t["name"] for t in topics["topics"]][:2] == ["new name", "old name"]
    old = client.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0,
                               "narrow": [{"operator": "channel", "operand": "general"},
                                          {"operator": "topic", "operand": "old name"}]})["messages"]
    assert [m["sender_full_name"] for m in old] == ["Notification Bot"]
