"""Drafts: GET/POST /drafts, PATCH/DELETE /drafts/{draft_id}, drafts events, /register."""

import time

from chat_appliance.models import Draft, database

from ..support.helpers import err, get_events, ok, register

DISABLED = "User has disabled synchronizing drafts."
NOT_FOUND = "Draft does not exist"


def stream_draft(stream, topic="castle", content="To be, or not to be", **extra):
    return {"type": "stream", "to": [stream.id], "topic": topic, "content": content, **extra}


def private_draft(*users, content="Good night, sweet prince", **extra):
    return {"type": "private", "to": [u.id for u in users], "topic": "", "content": content, **extra}


def create(client, *drafts):
    return ok(client.post("drafts", drafts=list(drafts)))["ids"]


def listed(client):
    body = ok(client.get("drafts"))
    assert body["count"] == len(body["drafts"])
    return body["drafts"]


def test_create_and_list(org):
    """Are channel, direct and unaddressed drafts stored as sent, their ids returned in order,
    a missing timestamp filled in, and the list ordered newest edit first?"""
    hamlet = org.client(org.hamlet)
    before = int(time.time())
    ids = create(hamlet, stream_draft(org.denmark, timestamp=1000), private_draft(org.othello, timestamp=3000),
                 {"type": "", "to": [], "topic": "", "content": "a thought"})
    assert len(ids) == 3 and ids == sorted(ids)
    drafts = listed(hamlet)
    assert [d["id"] for d in drafts] == [ids[2], ids[1], ids[0]]
    assert drafts[2] == {"id": ids[0], "type": "stream", "to": [org.denmark.id], "topic": "castle",
                         "content": "To be, or not to be", "timestamp": 1000}
    assert drafts[1] == {"id": ids[1], "type": "private", "to": [org.othello.id], "topic": "",
                         "content": "Good night, sweet prince", "timestamp": 3000}
    assert drafts[0]["type"] == "" and drafts[0]["to"] == [] and drafts[0]["timestamp"] >= before


def test_audience_normalized_like_a_message(org):
    """Does a direct draft list the other participants, sorted, without the author (the author
    alone for a note to self), and do non-channel drafts drop their topic and `to`?"""
    hamlet = org.client(org.hamlet)
    create(hamlet, private_draft(org.othello, org.hamlet, org.cordelia, timestamp=3),
           private_draft(org.hamlet, timestamp=2),
           {"type": "", "to": [org.othello.id], "topic": "ignored", "content": "x", "timestamp": 1})
    group, to_self, unaddressed = listed(hamlet)
    assert group["to"] == sorted([org.othello.id, org.cordelia.id])
    assert to_self["to"] == [org.hamlet.id]
    assert (unaddressed["to"], unaddressed["topic"]) == ([], "")


def test_channel_draft_needs_exactly_one_channel(org):
    """Is a channel draft with no channel, or with two, refused with Zulip's error?"""
    hamlet = org.client(org.hamlet)
    for to in ([], [org.denmark.id, org.verona.id]):
        draft = {"type": "stream", "to": to, "topic": "t", "content": "c"}
        err(hamlet.post("drafts", drafts=[draft]), 400, "BAD_REQUEST",
            "Must specify exactly 1 channel ID for channel messages")


def test_channel_must_exist_and_be_accessible(org):
    """Is a draft for a missing channel, or for a private channel the author cannot see, refused,
    while a subscriber may draft there?"""
    err(org.client(org.hamlet).post("drafts", drafts=[{"type": "stream", "to": [9999], "topic": "t",
                                                       "content": "c"}]),
        400, "BAD_REQUEST", "Invalid channel ID")
    err(org.client(org.othello).post("drafts", drafts=[stream_draft(org.secret)]), 400, "BAD_REQUEST",
        "Invalid channel ID")
    create(org.client(org.hamlet), stream_draft(org.secret))


def test_direct_recipients_must_exist(org):
    """Is a direct draft to a user id that does not exist refused?"""
    err(org.client(org.hamlet).post("drafts", drafts=[{"type": "private", "to": [org.othello.id, 9999],
                                                       "topic": "", "content": "c"}]),
        400, "BAD_REQUEST", "Invalid user ID 9999")


def test_null_bytes_refused_inside_the_json(org):
    """Are NUL characters in a draft's topic or content refused, though they arrive JSON-escaped
    and so pass the check on raw parameters?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("drafts", drafts=[stream_draft(org.denmark, topic="cas\x00tle")]), 400, "BAD_REQUEST",
        "Topic must not contain null bytes")
    err(hamlet.post("drafts", drafts=[stream_draft(org.denmark, content="to be\x00")]), 400, "BAD_REQUEST",
        "Message must not contain null bytes")
    [draft_id] = create(hamlet, stream_draft(org.denmark))
    err(hamlet.patch(f"drafts/{draft_id}", draft=stream_draft(org.denmark, content="\x00")), 400, "BAD_REQUEST",
        "Message must not contain null bytes")


def test_id_never_accepted(org):
    """Is a draft object carrying an `id` refused on create and on edit?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("drafts", drafts=[stream_draft(org.denmark, id=5)]), 400, "BAD_REQUEST",
        "drafts[0] has an unexpected key 'id'")
    [draft_id] = create(hamlet, stream_draft(org.denmark))
    err(hamlet.patch(f"drafts/{draft_id}", draft=stream_draft(org.denmark, id=draft_id)), 400, "BAD_REQUEST",
        "draft has an unexpected key 'id'")


def test_malformed_drafts_refused(org):
    """Are a wrong type, a `to` that is not a list of integers, a missing field, empty content and a
    negative timestamp each refused with BAD_REQUEST?"""
    hamlet = org.client(org.hamlet)
    cases = [
        ({**stream_draft(org.denmark), "type": "direct"}, "Invalid drafts[0]['type']"),
        ({**stream_draft(org.denmark), "to": org.denmark.id}, "drafts[0]['to'] is not a list"),
        ({**stream_draft(org.denmark), "to": [str(org.denmark.id)]}, "drafts[0]['to'][0] is not an integer"),
        ({"type": "stream", "to": [org.denmark.id], "content": "c"}, "drafts[0] is missing 'topic'"),
        (stream_draft(org.denmark, content=" \n "), "Message must not be empty"),
        (stream_draft(org.denmark, timestamp=-1), "Timestamp must not be negative."),
        ("not a draft", "drafts[0] is not a dict"),
    ]
    for draft, msg in cases:
        err(hamlet.post("drafts", drafts=[draft]), 400, "BAD_REQUEST", msg)
    assert listed(hamlet) == []


def test_create_is_all_or_nothing(org):
    """When the second of two drafts is invalid, is the first left unstored and no event sent?"""
    hamlet = org.client(org.hamlet)
    queue = register(hamlet, event_types=["drafts"])["queue_id"]
    bad = {"type": "stream", "to": [], "topic": "t", "content": "c"}
    err(hamlet.post("drafts", drafts=[stream_draft(org.denmark), bad]), 400, "BAD_REQUEST",
        "Must specify exactly 1 channel ID for channel messages")
    assert listed(hamlet) == []
    assert get_events(hamlet, queue) == []
    with database.connection_context():
        assert Draft.select().count() == 0


def test_empty_create(org):
    """Does POST /drafts without drafts succeed with no ids?"""
    assert ok(org.client(org.hamlet).post("drafts"))["ids"] == []


def test_edit_replaces_the_draft(org):
    """Does PATCH replace every field of the draft, keep its id and refresh its timestamp?"""
    hamlet = org.client(org.hamlet)
    [draft_id] = create(hamlet, stream_draft(org.denmark, timestamp=1000))
    before = int(time.time())
    ok(hamlet.patch(f"drafts/{draft_id}", draft=private_draft(org.othello, content="Farewell")))
    [draft] = listed(hamlet)
    assert draft["timestamp"] >= before
    assert {**draft, "timestamp": 0} == {"id": draft_id, "type": "private", "to": [org.othello.id], "topic": "",
                                         "content": "Farewell", "timestamp": 0}


def test_unknown_draft(org):
    """Do editing and deleting a draft that does not exist give Zulip's error (HTTP 404, code
    BAD_REQUEST)?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.patch("drafts/9999", draft=stream_draft(org.denmark)), 404, "BAD_REQUEST", NOT_FOUND)
    err(hamlet.delete("drafts/9999"), 404, "BAD_REQUEST", NOT_FOUND)


def test_delete(org):
    """Is a deleted draft gone from the list, and a second delete not found?"""
    hamlet = org.client(org.hamlet)
    first, second = create(hamlet, stream_draft(org.denmark), private_draft(org.othello))
    ok(hamlet.delete(f"drafts/{first}"))
    assert [d["id"] for d in listed(hamlet)] == [second]
    err(hamlet.delete(f"drafts/{first}"), 404, "BAD_REQUEST", NOT_FOUND)


def test_other_users_drafts_are_invisible(org):
    """Does another user neither see, edit nor delete someone's draft, getting the same error as
    for a draft that does not exist?"""
    [draft_id] = create(org.client(org.hamlet), stream_draft(org.denmark))
    othello = org.client(org.othello)
    assert listed(othello) == []
    err(othello.patch(f"drafts/{draft_id}", draft=stream_draft(org.denmark, content="mine now")), 404,
        "BAD_REQUEST", NOT_FOUND)
    err(othello.delete(f"drafts/{draft_id}"), 404, "BAD_REQUEST", NOT_FOUND)
    assert listed(org.client(org.hamlet))[0]["content"] == "To be, or not to be"


def test_events_reach_the_authors_other_clients_only(org):
    """Do add, update and remove events arrive, in Zulip's shapes, on another queue of the same
    user, and on nobody else's queue?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    other_client = register(hamlet, event_types=["drafts"])["queue_id"]
    someone_else = register(othello, event_types=["drafts"])["queue_id"]
    ids = create(hamlet, stream_draft(org.denmark, timestamp=1000), private_draft(org.othello, timestamp=2000))
    ok(hamlet.patch(f"drafts/{ids[0]}", draft=stream_draft(org.verona, topic="balcony", timestamp=4000)))
    ok(hamlet.delete(f"drafts/{ids[1]}"))
    add, update, remove = get_events(hamlet, other_client)
    assert (add["op"], [d["id"] for d in add["drafts"]]) == ("add", ids)
    assert add["drafts"][0] == {"id": ids[0], "type": "stream", "to": [org.denmark.id], "topic": "castle",
                                "content": "To be, or not to be", "timestamp": 1000}
    assert update["op"] == "update" and update["draft"] == {
        "id": ids[0], "type": "stream", "to": [org.verona.id], "topic": "balcony",
        "content": "To be, or not to be", "timestamp": 4000}
    assert (remove["op"], remove["draft_id"]) == ("remove", ids[1])
    assert get_events(othello, someone_else) == []


def test_register_returns_drafts(org):
    """Does /register's `drafts` hold the same drafts, in the same order, as GET /drafts?"""
    hamlet = org.client(org.hamlet)
    create(hamlet, stream_draft(org.denmark, timestamp=1), private_draft(org.othello, timestamp=2))
    state = register(hamlet, fetch_event_types=["drafts"])
    assert state["drafts"] == listed(hamlet)
    assert register(org.client(org.othello), fetch_event_types=["drafts"])["drafts"] == []


def test_synchronization_turned_off(org):
    """With enable_drafts_synchronization off, are stored drafts forgotten (without events), every
    draft endpoint refused with Zulip's error, and no drafts returned by /register?"""
    hamlet = org.client(org.hamlet)
    [draft_id] = create(hamlet, stream_draft(org.denmark))
    queue = register(hamlet, event_types=["drafts"])["queue_id"]
    ok(hamlet.patch("settings", enable_drafts_synchronization=False))
    assert get_events(hamlet, queue) == []
    err(hamlet.get("drafts"), 400, "BAD_REQUEST", DISABLED)
    err(hamlet.post("drafts", drafts=[stream_draft(org.denmark)]), 400, "BAD_REQUEST", DISABLED)
    err(hamlet.patch(f"drafts/{draft_id}", draft=stream_draft(org.denmark)), 400, "BAD_REQUEST", DISABLED)
    err(hamlet.delete(f"drafts/{draft_id}"), 400, "BAD_REQUEST", DISABLED)
    # A row written behind the API's back shows /register consults the setting, not just the table.
    with database.connection_context():
        Draft.create(user_profile=org.hamlet.id, type="", to=[], topic="", content="x", last_edit_time=1)
    assert register(hamlet, fetch_event_types=["drafts"])["drafts"] == []
    ok(hamlet.patch("settings", enable_drafts_synchronization=True))
    assert [d["content"] for d in listed(hamlet)] == ["x"]
    assert ok(org.client(org.othello).get("drafts"))["count"] == 0


def test_long_text_truncated_not_refused(org):
    """Are an over-long topic and content shortened with Zulip's markers rather than refused, so an
    autosave never fails?"""
    hamlet = org.client(org.hamlet)
    create(hamlet, stream_draft(org.denmark, topic="t" * 70, content="c" * 10050))
    [draft] = listed(hamlet)
    assert draft["topic"] == "t" * 57 + "..."
    assert len(draft["content"]) == 10000 and draft["content"].endswith("\n[message truncated]")


def test_numbers_beyond_the_database_refused(org):
    """Are ids and timestamps too large for a database integer (or NaN) refused or not found, never
    an internal error?"""
    hamlet = org.client(org.hamlet)
    huge = 10**30
    err(hamlet.post("drafts", drafts=[{"type": "stream", "to": [huge], "topic": "t", "content": "c"}]), 400,
        "BAD_REQUEST", "drafts[0]['to'][0] is out of range")
    err(hamlet.post("drafts", drafts=[private_draft(org.othello, timestamp=1e300)]), 400, "BAD_REQUEST",
        "drafts[0]['timestamp'] is out of range")
    err(hamlet.post("drafts", drafts='[{"type": "", "to": [], "topic": "", "content": "c", "timestamp": NaN}]'),
        400, "BAD_REQUEST", "drafts[0]['timestamp'] is out of range")
    err(hamlet.patch(f"drafts/{huge}", draft=stream_draft(org.denmark)), 404, "BAD_REQUEST", NOT_FOUND)
