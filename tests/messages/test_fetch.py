"""GET /messages: anchors, counts, found_* flags, narrows, message ids, highlighting; flags."""

import pytest

from ..support.helpers import err, ok


@pytest.fixture
def convo(org):
    """A few messages: Denmark/topic a (3), Denmark/topic b (1), Verona (1), a DM hamlet->othello."""
    hamlet = org.client(org.hamlet)
    hamlet.headers["User-Agent"] = "ZulipPython/0.9.1"
    ids = {}
    ids["a1"] = ok(hamlet.post("messages", type="stream", to="Denmark", topic="a", content="first apple"))["id"]
    ids["a2"] = ok(hamlet.post("messages", type="stream", to="Denmark", topic="A", content="second banana"))["id"]
    ids["b1"] = ok(hamlet.post("messages", type="stream", to="Denmark", topic="b", content="see https://example.com"))["id"]
    ids["a3"] = ok(hamlet.post("messages", type="stream", to="Denmark", topic="a", content="third apple pie"))["id"]
    ids["v1"] = ok(hamlet.post("messages", type="stream", to="Verona", topic="v", content="verona"))["id"]
    ids["dm"] = ok(hamlet.post("messages", type="direct", to=[org.othello.id], content="psst"))["id"]
    return ids


def get(client, **params):
    params.setdefault("num_before", 100)
    params.setdefault("num_after", 100)
    return ok(client.get("messages", **params))


def ids_of(body):
    return [m["id"] for m in body["messages"]]


def test_anchor_newest_and_oldest(org, convo):
    """Do newest/oldest return the right ends with found_* set?"""
    client = org.client(org.othello)
    body = get(client, anchor="newest", num_before=2, num_after=0, narrow=[["stream", "Denmark"]])
    assert ids_of(body) == [convo["b1"], convo["a3"]]
    assert body["found_newest"] and not body["found_oldest"] and not body["found_anchor"]
    body = get(client, anchor="oldest", num_before=0, num_after=2, narrow=[["stream", "Denmark"]])
    assert ids_of(body) == [convo["a1"], convo["a2"]] and body["found_oldest"] and not body["found_newest"]


def test_integer_anchor_and_include_anchor(org, convo):
    """Does an integer anchor include itself unless include_anchor=false, and report found_anchor?"""
    client = org.client(org.othello)
    narrow = [{"operator": "channel", "operand": "Denmark"}]
    body = get(client, anchor=convo["a2"], num_before=1, num_after=1, narrow=narrow)
    assert ids_of(body) == [convo["a1"], convo["a2"], convo["b1"]] and body["found_anchor"]
    assert body["anchor"] == convo["a2"]
    body = get(client, anchor=convo["a2"], num_before=1, num_after=1, narrow=narrow, include_anchor=False)
    assert ids_of(body) == [convo["a1"], convo["b1"]] and not body["found_anchor"]
    # An anchor that does not match the narrow is not found.
    body = get(client, anchor=convo["v1"], num_before=1, num_after=1, narrow=narrow)
    assert not body["found_anchor"]


def test_first_unread(org, convo):
    """Does first_unread anchor at the oldest unread message, and at 10000000000000000 with none?"""
    client = org.client(org.othello)
    body = get(client, anchor="first_unread", num_before=0, num_after=1, narrow=[["stream", "Denmark"]])
    assert body["anchor"] == convo["a1"] and "read" not in body["messages"][0]["flags"]
    ok(client.post("mark_all_as_read"))
    body = get(client, anchor="first_unread", num_before=5, num_after=5)
    assert body["anchor"] == 10000000000000000 and body["found_newest"]


def test_use_first_unread_anchor_as_zulip_terminal_sends_it(org, convo):
    """Does use_first_unread_anchor=true with anchor=0 (zulip-terminal) anchor at the first unread?"""
    body = get(org.client(org.othello), anchor=0, num_before=30, num_after=10, use_first_unread_anchor=True,
               apply_markdown=True, client_gravatar=True, narrow=[])
    first_unread = body["anchor"]
    assert first_unread in ids_of(body)
    unread = [m for m in body["messages"] if m["id"] == first_unread][0]
    assert "read" not in unread["flags"]


def test_date_anchor(org, convo):
    """Does anchor=date find the first message on or after anchor_date, else the newest?"""
    client = org.client(org.othello)
    body = get(client, anchor="date", anchor_date="2000-01-01", num_before=0, num_after=1)
    assert body["anchor"] == ids_of(body)[0]
    body = get(client, anchor="date", anchor_date="2999-01-01T00:00:00", num_before=1, num_after=0)
    assert body["anchor"] == 10000000000000000


def test_topic_narrow_is_case_insensitive(org, convo):
    """Does a topic narrow match regardless of case?"""
    body = get(org.client(org.othello), anchor="newest", narrow=[["stream", "Denmark"], ["topic", "a"]])
    assert ids_of(body) == [convo["a1"], convo["a2"], convo["a3"]]


def test_negated_narrow(org, convo):
    """Does negated exclude matches?"""
    narrow = [{"operator": "channel", "operand": "Denmark"}, {"operator": "topic", "operand": "a", "negated": True}]
    assert ids_of(get(org.client(org.othello), anchor="newest", narrow=narrow)) == [convo["b1"]]


def test_sender_dm_and_is_narrows(org, convo):
    """Do sender, dm (ids and emails, zulip-terminal's ', ' form), is:dm and is:unread narrow correctly?"""
    client = org.client(org.othello)
    assert convo["dm"] in ids_of(get(client, anchor="newest", narrow=[["sender", org.hamlet.email]]))
    assert ids_of(get(client, anchor="newest", narrow=[["pm-with", org.hamlet.email]])) == [convo["dm"]]
    assert ids_of(get(client, anchor="newest", narrow=[{"operator": "dm", "operand": [org.hamlet.id]}])) == [convo["dm"]]
    both = f"{org.hamlet.email}, {org.othello.email}"
    assert ids_of(get(client, anchor="newest", narrow=[["pm-with", both]])) == [convo["dm"]]
    dms = ids_of(get(client, anchor="newest", narrow=[["is", "private"]]))
    assert convo["dm"] in dms and convo["a1"] not in dms
    assert convo["a1"] in ids_of(get(client, anchor="newest", narrow=[["is", "unread"]]))


def test_dm_including(org, convo):
    """Does dm-including find conversations that include a user?"""
    client = org.client(org.othello)
    assert convo["dm"] in ids_of(get(client, anchor="newest", narrow=[["dm-including", org.hamlet.id]]))


def test_search_narrow_with_highlights(org, convo):
    """Does search find words (stemmed) and return match_content/match_subject highlights?"""
    body = get(org.client(org.othello), anchor="newest", narrow=[["search", "apple"]])
    assert ids_of(body) == [convo["a1"], convo["a3"]]
    assert '<span class="highlight">apple</span>' in body["messages"][0]["match_content"]
    assert "match_subject" in body["messages"][0]


def test_has_link_and_reaction_narrows(org, convo):
    """Does has:link find messages with links?"""
    narrow = [["stream", "Denmark"], ["has", "link"]]
    assert ids_of(get(org.client(org.othello), anchor="newest", narrow=narrow)) == [convo["b1"]]


def test_shared_history_for_new_subscriber(org, convo):
    """Does a channel narrow show a newcomer the channel's whole history, but the default view not?"""
    cordelia = org.client(org.cordelia)
    ok(cordelia.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}]))
    history = get(cordelia, anchor="newest", narrow=[["stream", "Denmark"]])
    assert convo["a1"] in ids_of(history)
    assert set(history["messages"][0]["flags"]) == {"read", "historical"}
    assert convo["a1"] not in ids_of(get(cordelia, anchor="newest"))


def test_private_history_hidden_from_outsiders(org):
    """Can a non-subscriber read a private channel through any narrow? (No.)"""
    msg = ok(org.client(org.hamlet).post("messages", type="stream", to="secret", topic="t", content="hush"))["id"]
    client = org.client(org.othello)
    err(client.get("messages", anchor="newest", num_before=10, num_after=0, narrow=[["stream", "secret"]]), 400,
        "BAD_NARROW")
    err(client.get(f"messages/{msg}"), 400, "BAD_REQUEST", "Invalid message(s)")
    assert msg not in ids_of(get(client, anchor="newest", narrow=[["search", "hush"]]))


def test_bad_narrows(org):
    """Are an unknown operator and a malformed narrow refused?"""
    client = org.client(org.hamlet)
    err(client.get("messages", anchor="newest", num_before=1, num_after=0, narrow=[["bogus", "x"]]), 400,
        "BAD_NARROW", "Invalid narrow operator: unknown operator bogus")
    err(client.get("messages", anchor="newest", num_before=1, num_after=0, narrow={"x": 1}), 400, "BAD_REQUEST")


def test_message_ids_mode(org, convo):
    """Does message_ids fetch the accessible subset without an anchor, and refuse range parameters?"""
    client = org.client(org.othello)
    body = ok(client.get("messages", message_ids=[convo["a1"], convo["v1"], 99999]))
    assert ids_of(body) == [convo["a1"]] and "anchor" not in body
    body = err(client.get("messages", message_ids=[convo["a1"]], anchor="newest"), 400, "BAD_REQUEST",
               "Unsupported parameter combination: message_ids, anchor")
    assert body["parameters"] == "message_ids, anchor"


def test_too_many_and_missing_counts(org):
    """Are more than 5000 messages, and a missing num_before, refused?"""
    client = org.client(org.hamlet)
    err(client.get("messages", anchor="newest", num_before=4000, num_after=1001), 400, "BAD_REQUEST",
        "Too many messages requested (maximum 5000).")
    err(client.get("messages", anchor="newest", num_after=1), 400, "REQUEST_VARIABLE_MISSING")


def test_apply_markdown_false_returns_raw(org, convo):
    """Does apply_markdown=false return raw Markdown with text/x-markdown?"""
    message = get(org.client(org.othello), anchor=convo["a1"], num_before=0, num_after=0, apply_markdown=False)["messages"][0]
    assert message["content"] == "first apple" and message["content_type"] == "text/x-markdown"


def test_get_single_message_and_raw_content(org, convo):
    """Does GET /messages/{id} return the message and its raw_content?"""
    body = ok(org.client(org.othello).get(f"messages/{convo['a3']}"))
    assert body["raw_content"] == "third apple pie" and body["message"]["id"] == convo["a3"]
    assert body["message"]["content"] == "<p>third apple pie</p>"


def test_matches_narrow(org, convo):
    """Does GET /messages/matches_narrow report which ids match?"""
    body = ok(org.client(org.othello).get("messages/matches_narrow", msg_ids=[convo["a1"], convo["b1"]],
                                          narrow=[["topic", "a"]]))
    assert list(body["messages"]) == [str(convo["a1"])]


def test_flags_by_id(org, convo):
    """Do POST /messages/flags add and remove starred and read, and refuse server-computed flags?"""
    client = org.client(org.othello)
    ok(client.post("messages/flags", messages=[convo["a1"]], op="add", flag="starred"))
    assert ids_of(get(client, anchor="newest", narrow=[["is", "starred"]])) == [convo["a1"]]
    ok(client.post("messages/flags", messages=[convo["a1"]], op="remove", flag="starred"))
    assert ids_of(get(client, anchor="newest", narrow=[["is", "starred"]])) == []
    err(client.post("messages/flags", messages=[convo["a1"]], op="add", flag="mentioned"), 400, "BAD_REQUEST",
        "Invalid flag: 'mentioned'")
    err(client.post("messages/flags", messages=[99999], op="add", flag="read"), 400, "BAD_REQUEST")


def test_flags_narrow(org, convo):
    """Does flags/narrow report counts, processed ids and found_* over a range?"""
    client = org.client(org.othello)
    body = ok(client.post("messages/flags/narrow", anchor="oldest", num_before=0, num_after=10,
                          narrow=[["stream", "Denmark"]], op="add", flag="read"))
    assert body["processed_count"] == 4 and body["updated_count"] == 4
    assert body["first_processed_id"] == convo["a1"] and body["last_processed_id"] == convo["a3"]
    assert body["found_oldest"] and body["found_newest"]
    again = ok(client.post("messages/flags/narrow", anchor="oldest", num_before=0, num_after=10,
                           narrow=[["stream", "Denmark"]], op="add", flag="read"))
    assert again["updated_count"] == 0 and again["processed_count"] == 4


def test_flags_narrow_skips_unsubscribed_channels_for_unread(org, convo):
    """Does marking unread skip channels the user left, listing them?"""
    client = org.client(org.othello)
    ok(client.post("mark_all_as_read"))
    ok(client.delete("users/me/subscriptions", subscriptions=["Denmark"]))
    body = ok(client.post("messages/flags/narrow", anchor="oldest", num_before=0, num_after=100, narrow=[],
                          op="remove", flag="read"))
    assert body["ignored_because_not_subscribed_channels"] == [org.denmark.id]
    assert body["updated_count"] == body["processed_count"] - 4


def test_mark_stream_and_topic_as_read(org, convo):
    """Do mark_topic_as_read and mark_stream_as_read mark just those messages?"""
    client = org.client(org.othello)
    ok(client.post("mark_topic_as_read", stream_id=org.denmark.id, topic_name="a"))
    unread = ids_of(get(client, anchor="newest", narrow=[["is", "unread"]]))
    assert convo["a1"] not in unread and convo["b1"] in unread
    ok(client.post("mark_stream_as_read", stream_id=org.denmark.id))
    assert convo["b1"] not in ids_of(get(client, anchor="newest", narrow=[["is", "unread"]]))


def test_user_topics_mute_and_in_home(org, convo):
    """Does muting a topic hide it from in:home and show it for is:muted?"""
    client = org.client(org.othello)
    ok(client.post("user_topics", stream_id=org.denmark.id, topic="a", visibility_policy=1))
    home = ids_of(get(client, anchor="newest", narrow=[["in", "home"]]))
    assert convo["a1"] not in home and convo["b1"] in home
    assert convo["a1"] in ids_of(get(client, anchor="newest", narrow=[["is", "muted"]]))
    err(client.post("user_topics", stream_id=org.denmark.id, topic="a", visibility_policy=7), 400, "BAD_REQUEST")


def test_in_home_with_many_muted_topics(org, convo):
    """With 1,200 muted topics (and followed ones in a muted channel), does in:home still answer,
    hiding exactly the muted topics, rather than failing on the query's size?"""
    from chat_appliance.db.connection import write_transaction
    from chat_appliance.models import UserTopic, database

    with database.connection_context(), write_transaction():
        UserTopic.insert_many([{"user_profile": org.othello.id, "stream": org.denmark.id, "topic_key": f"t{i}",
                                "topic": f"t{i}", "visibility_policy": 1, "last_updated": 0}
                               for i in range(1200)]).execute()
    client = org.client(org.othello)
    ok(client.post("user_topics", stream_id=org.denmark.id, topic="a", visibility_policy=1))
    home = ids_of(get(client, anchor="first_unread", narrow=[{"operator": "in", "operand": "home"}]))
    assert convo["a1"] not in home and convo["b1"] in home
