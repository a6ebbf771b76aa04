"""The remaining rules of sending and narrowing, each in a test of its own."""

import pytest

from chat_appliance.models import Realm, database

from ..support.helpers import err, ok


def send(client, content="hi", stream="Denmark", topic="t", **extra):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra))["id"]


def ids(client, narrow, **params):
    body = ok(client.get("messages", anchor="newest", num_before=100, num_after=0, narrow=narrow, **params))
    return [m["id"] for m in body["messages"]]


def flags(client, msg_id):
    return ok(client.get(f"messages/{msg_id}"))["message"]["flags"]


def test_mandatory_topics(org):
    """With topics required in the organization, is an empty topic (or its aliases) refused?"""
    with database.connection_context():
        realm = Realm.get_by_id(org.realm.id)
        realm.settings = dict(realm.settings, mandatory_topics=True)
        realm.save()
    for topic in ("", "(no topic)", "general chat"):
        err(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic=topic, content="x"), 400,
            "BAD_REQUEST", "Topics are required in this organization.")


def test_group_mention_sets_mentioned_for_members(org):
    """Does @*group* set `mentioned` for the group's members who receive the message, and not others?"""
    group_id = ok(org.client(org.admin).post("user_groups/create", name="backstage", description="crew",
                                             members=[org.othello.id]))["group_id"]
    msg = send(org.client(org.hamlet), "@*backstage* places please")
    assert "mentioned" in flags(org.client(org.othello), msg)
    assert "mentioned" not in flags(org.client(org.admin), msg)
    assert f'data-user-group-id="{group_id}"' in ok(org.client(org.othello).get(f"messages/{msg}"))["message"]["content"]


def test_topic_wildcard_needs_permission_in_busy_topics(org, app):
    """Is @**topic** refused to members in a topic with more than 15 participants?"""
    from chat_appliance.actions.channels import subscribe_users_to_streams
    from chat_appliance.actions.messages import check_send_message
    from chat_appliance.actions.users import do_create_user

    with database.connection_context():
        extra = [do_create_user(org.realm, f"p{i}@zulip.example", "pw-long-enough", f"Player {i}",
                                password_method="pbkdf2:sha256:1") for i in range(16)]
        subscribe_users_to_streams([org.verona], extra)
        for user in extra:
            check_send_message(user, message_type="stream", to="Verona", topic="crowd", content="here",
                               client_name="test", limits=app.extensions["chat_appliance"].limits)
    err(org.client(org.hamlet).post("messages", type="stream", to="Verona", topic="crowd", content="@**topic** hi"),
        400, "TOPIC_WILDCARD_MENTION_NOT_ALLOWED")
    ok(org.client(org.hamlet).post("messages", type="stream", to="Verona", topic="quiet", content="@**topic** hi"))


def test_automatic_unmute_in_muted_channel(org):
    """With following turned off, does sending in a muted channel unmute the topic (policy 2)?"""
    from chat_appliance.models import Subscription, UserProfile

    client = org.client(org.hamlet)
    with database.connection_context():
        user = UserProfile.get_by_id(org.hamlet.id)
        user.settings = dict(user.settings or {}, automatically_follow_topics_policy=4)
        user.save()
        Subscription.update(is_muted=True).where((Subscription.user_profile == org.hamlet.id)
                                                  & (Subscription.stream == org.denmark.id)).execute()
    body = ok(client.post("messages", type="stream", to="Denmark", topic="loud", content="x"))
    assert body["automatic_new_visibility_policy"] == 2


# (follow policy, unmute policy, channel muted, topic already has a message, the sender's policy
# for the topic before) -> the policy the send sets, None when it sets none. Policies: 1 on
# participation, 2 on send, 3 on initiation, 4 never; topic visibility 0 inherit, 1 muted, 2
# unmuted, 3 followed.
AUTOMATIC_CASES = [
    ((3, 4, False, False, 0), 3),   # following a topic one starts
    ((3, 4, False, True, 0), None),  # ... not one someone else started
    ((2, 4, False, True, 1), 3),   # following on send, even a muted topic
    ((2, 4, False, True, 3), None),  # already followed: nothing new to report
    ((4, 3, True, False, 0), 2),   # unmuting in a muted channel a topic one starts
    ((4, 3, True, True, 0), None),  # ... not one someone else started
    ((4, 2, True, True, 1), 2),    # unmuting on send a muted topic
    ((4, 2, False, True, 0), None),  # the channel is not muted: nothing to unmute
    ((4, 2, True, True, 2), None),  # already unmuted
    ((4, 4, True, False, 0), None),  # both never
]


@pytest.mark.parametrize("case, expected", AUTOMATIC_CASES)
def test_automatic_policies(org, case, expected):
    """Does a send set the topic policy each combination of the sender's automatic follow and
    unmute settings, the channel's muting, the topic's history and the sender's earlier policy
    calls for, reported as automatic_new_visibility_policy and kept in GET /user_topics?"""
    from chat_appliance.models import Subscription, UserProfile

    follow, unmute, channel_muted, topic_exists, before = case
    topic = "auto"
    if topic_exists:
        send(org.client(org.othello), stream="Denmark", topic=topic)
    client = org.client(org.hamlet)
    if before:
        ok(client.post("user_topics", stream_id=org.denmark.id, topic=topic, visibility_policy=before))
    with database.connection_context():
        user = UserProfile.get_by_id(org.hamlet.id)
        user.settings = dict(user.settings or {}, automatically_follow_topics_policy=follow,
                             automatically_unmute_topics_in_muted_streams_policy=unmute)
        user.save()
        Subscription.update(is_muted=channel_muted).where((Subscription.user_profile == org.hamlet.id)
                                                          & (Subscription.stream == org.denmark.id)).execute()
    body = ok(client.post("messages", type="stream", to="Denmark", topic=topic, content="x"))
    assert body.get("automatic_new_visibility_policy") == expected
    policies = {(t["stream_id"], t["topic_name"]): t["visibility_policy"] for t in ok(client.get("user_topics"))["user_topics"]}
    assert policies.get((org.denmark.id, topic), 0) == (before if expected is None else expected)


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


@pytest.mark.parametrize("client_gravatar, expect_null", [(True, True), (False, False)])
def test_message_avatar_url_follows_client_gravatar(org, client_gravatar, expect_null):
    """Is a message's avatar_url null exactly when client_gravatar is on and the sender's email is visible?"""
    msg = send(org.client(org.hamlet))
    body = ok(org.client(org.othello).get("messages", anchor=msg, num_before=0, num_after=0,
                                          client_gravatar=client_gravatar))
    assert (body["messages"][0]["avatar_url"] is None) == expect_null


def test_avatar_url_present_when_email_hidden(org):
    """With client_gravatar on but the sender's email hidden from the viewer, is avatar_url a URL?"""
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    msg = send(org.client(org.hamlet))
    body = ok(org.client(org.othello).get("messages", anchor=msg, num_before=0, num_after=0, client_gravatar=True))
    assert body["messages"][0]["avatar_url"].startswith("https://")
