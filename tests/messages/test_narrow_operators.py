"""Narrow operators of GET /messages beyond channel and topic: channels:public, the legacy
group-pm-with, is:mentioned/resolved/followed, has:image/attachment/reaction, in:all, near, id
and with."""

from chat_appliance.models import database

from ..support.helpers import err, ok


def send(client, content="hi", stream="Denmark", topic="t", **extra):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra))["id"]


def ids(client, narrow, **params):
    body = ok(client.get("messages", anchor="newest", num_before=100, num_after=0, narrow=narrow, **params))
    return [m["id"] for m in body["messages"]]


def test_channels_public_reaches_unsubscribed_public_history(org):
    """Does channels:public show public channels' messages to a member who is not subscribed,
    and never private ones?"""
    in_verona = send(org.client(org.hamlet), stream="Verona")
    in_secret = send(org.client(org.hamlet), stream="secret")
    found = ids(org.client(org.othello), [{"operator": "channels", "operand": "public"}])
    assert in_verona in found and in_secret not in found
    err(org.client(org.othello).get("messages", anchor="newest", num_before=1, num_after=0,
                                    narrow=[["channels", "private"]]), 400, "BAD_NARROW")


def test_group_pm_with_alias(org):
    """Is the legacy group-pm-with operator read as dm-including?"""
    msg = ok(org.client(org.hamlet).post("messages", type="direct", to=[org.othello.id, org.cordelia.id],
                                         content="three"))["id"]
    assert msg in ids(org.client(org.othello), [["group-pm-with", org.cordelia.email]])


def test_is_mentioned_resolved_followed(org):
    """Do is:mentioned, is:resolved and is:followed narrow correctly?"""
    hamlet = org.client(org.hamlet)
    mention = send(hamlet, "@**Othello, the Moor of Venice** hi")
    resolved = send(hamlet, topic="✔ done")
    plain = send(hamlet, topic="open")
    othello = org.client(org.othello)
    assert ids(othello, [["is", "mentioned"]]) == [mention]
    found = ids(othello, [["is", "resolved"]])
    assert resolved in found and plain not in found
    ok(othello.post("user_topics", stream_id=org.denmark.id, topic="open", visibility_policy=3))
    assert ids(othello, [["is", "followed"]]) == [plain]


def test_has_image_attachment_reaction(org):
    """Do has:image, has:attachment and has:reaction narrow correctly?"""
    from chat_appliance.models import Reaction

    hamlet = org.client(org.hamlet)
    image = send(hamlet, "[pic](https://example.com/cat.png)")
    upload = send(hamlet, "[file](/user_uploads/1/ab/report.pdf)")
    plain = send(hamlet, "nothing")
    with database.connection_context():
        Reaction.create(message=plain, user_profile=org.othello.id, emoji_name="smile", emoji_code="1f642")
    othello = org.client(org.othello)
    assert image in ids(othello, [["has", "image"]]) and plain not in ids(othello, [["has", "image"]])
    assert ids(othello, [["stream", "Denmark"], ["has", "attachment"]]) == [upload]
    assert ids(othello, [["has", "reaction"]]) == [plain]
    # Reactions keep the deprecated `user` object: zulip-terminal 0.7.0 reads it.
    reaction = ok(othello.get(f"messages/{plain}"))["message"]["reactions"][0]
    assert reaction["user_id"] == org.othello.id and reaction["user"]["id"] == org.othello.id


def test_in_all_near_id_with(org):
    """Do in:all (no filter), near (no filter), id, and with (the message's conversation) work?"""
    hamlet = org.client(org.hamlet)
    first = send(hamlet, topic="story")
    other = send(hamlet, topic="elsewhere")
    second = send(hamlet, topic="story")
    othello = org.client(org.othello)
    everything = ids(othello, [["in", "all"]])
    assert {first, other, second} <= set(everything)
    assert ids(othello, [["stream", "Denmark"], ["near", str(other)]]) == ids(othello, [["stream", "Denmark"]])
    assert ids(othello, [{"operator": "id", "operand": other}]) == [other]
    assert ids(othello, [{"operator": "with", "operand": second}]) == [first, second]
