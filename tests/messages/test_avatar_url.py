"""A message's avatar_url: null when the client computes Gravatars itself and may see the sender's
address, a URL otherwise."""

import pytest

from ..support.helpers import ok


def send(client, content="hi", stream="Denmark", topic="t", **extra):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra))["id"]


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
