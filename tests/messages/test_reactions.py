"""POST and DELETE /messages/{id}/reactions, and reaction events."""

from ..support.helpers import err, get_events, ok, register


def fetch(client, message_id):
    """GET /messages/{id} without schema validation: the reaction's deprecated `user` object
    (zulip-terminal 0.7.0 reads it) is no longer in Zulip's description."""
    response = client.get(f"messages/{message_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()["message"]


def send(client, to="Denmark", topic="castle", content="hello"):
    return ok(client.post("messages", type="stream", to=to, topic=topic, content=content))["id"]


def test_add_reaction_by_name_only(org):
    """Does emoji_name=wave alone (as bots send it) resolve the Unicode code, show on the message
    with the legacy user object, and reach a recipient's queue as a reaction event?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    mid = send(hamlet)
    queue = register(othello, event_types=["reaction"])["queue_id"]
    ok(othello.post(f"messages/{mid}/reactions", emoji_name="wave"))
    [reaction] = fetch(hamlet, mid)["reactions"]
    assert reaction == {"emoji_name": "wave", "emoji_code": "1f44b", "reaction_type": "unicode_emoji",
                        "user_id": org.othello.id, "user": {"id": org.othello.id, "email": org.othello.email,
                                                            "full_name": org.othello.full_name,
                                                            "is_mirror_dummy": False}}
    [event] = get_events(othello, queue)
    assert {k: v for k, v in event.items() if k != "id"} == {
        "type": "reaction", "op": "add", "message_id": mid, "emoji_name": "wave", "emoji_code": "1f44b",
        "reaction_type": "unicode_emoji", "user_id": org.othello.id,
        "user": {"user_id": org.othello.id, "email": org.othello.email, "full_name": org.othello.full_name}}


def test_duplicate_remove_and_missing(org):
    """Is a repeated reaction 'Reaction already exists.', does removal send op=remove, and is
    removing again "Reaction doesn't exist."?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    ok(hamlet.post(f"messages/{mid}/reactions", emoji_name="tada", emoji_code="1f389",
                   reaction_type="unicode_emoji"))
    err(hamlet.post(f"messages/{mid}/reactions", emoji_name="tada"), 400, "BAD_REQUEST", "Reaction already exists.")
    queue = register(org.client(org.othello), event_types=["reaction"])["queue_id"]
    ok(hamlet.delete(f"messages/{mid}/reactions", emoji_name="tada"))
    assert fetch(hamlet, mid)["reactions"] == []
    [event] = get_events(org.client(org.othello), queue)
    assert (event["op"], event["emoji_code"], event["user"]["user_id"]) == ("remove", "1f389", org.hamlet.id)
    err(hamlet.delete(f"messages/{mid}/reactions", emoji_name="tada"), 400, "BAD_REQUEST",
        "Reaction doesn't exist.")


def test_invalid_emoji(org):
    """Are unknown names, mismatched codes, and a custom emoji id that does not exist refused with Zulip's texts?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    err(hamlet.post(f"messages/{mid}/reactions", emoji_name="no_such_emoji"), 400, "BAD_REQUEST",
        "Invalid emoji name.")
    err(hamlet.post(f"messages/{mid}/reactions", emoji_name="wave", emoji_code="1f389"), 400, "BAD_REQUEST",
        "Invalid emoji code.")
    err(hamlet.post(f"messages/{mid}/reactions", emoji_name="party", reaction_type="realm_emoji",
                    emoji_code="1"), 400, "BAD_REQUEST", "Invalid custom emoji.")
    err(hamlet.post(f"messages/{mid}/reactions", emoji_name="wave", reaction_type="bogus"), 400, "BAD_REQUEST")


def test_zulip_extra_emoji_and_has_reaction(org):
    """Does the service_extra_emoji 'zulip' work, and does has:reaction find the message?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    send(hamlet, content="unloved")
    ok(hamlet.post(f"messages/{mid}/reactions", emoji_name="zulip", reaction_type="service_extra_emoji"))
    reaction = fetch(hamlet, mid)["reactions"][0]
    assert (reaction["emoji_code"], reaction["reaction_type"]) == ("zulip", "service_extra_emoji")
    found = hamlet.get("messages", anchor="newest", num_before=10, num_after=0, narrow=[["has", "reaction"]])
    assert [m["id"] for m in found.get_json()["messages"]] == [mid]


def test_reacting_needs_access(org):
    """Is a reaction to a direct message one is not in, or a missing message, 'Invalid message(s)'?
    And does reacting to a public channel's history give the reactor a copy?"""
    hamlet = org.client(org.hamlet)
    dm = ok(hamlet.post("messages", type="direct", to=[org.othello.id], content="psst"))["id"]
    for mid in (dm, dm + 1000):
        err(org.client(org.cordelia).post(f"messages/{mid}/reactions", emoji_name="wave"), 400, "BAD_REQUEST",
            "Invalid message(s)")
    mid = send(hamlet)
    ok(org.client(org.cordelia).post(f"messages/{mid}/reactions", emoji_name="wave"))
    flags = fetch(org.client(org.cordelia), mid)["flags"]
    assert "historical" in flags and "read" in flags
