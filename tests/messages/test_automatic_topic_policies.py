"""The topic policy a send sets from the sender's automatic follow and unmute settings, the
channel's muting and the topic's history."""

import pytest

from chat_appliance.models import database

from ..support.helpers import ok


def send(client, content="hi", stream="Denmark", topic="t", **extra):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra))["id"]


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
