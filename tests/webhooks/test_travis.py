"""Travis CI's integration: build notifications, posted as Travis posts them (its JSON in a form's
`payload` field; tests/data/webhooks/travis/, written from Travis's documented payload), must give
Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import FIXTURES, incoming_bot, messages_from

DETAILS = ("Details: [changes](https://github.com/tidewater/tide-tables/compare/3f1c2a9d8e7b...4d5e6f708192), "
           "[build log](https://app.travis-ci.com/tidewater/tide-tables/builds/771100)")


def post_travis(flask_client, key, fixture, **query):
    """POST the fixture as Travis does: form-encoded, the JSON in `payload`."""
    body = (FIXTURES / "travis" / f"{fixture}.json").read_text()
    return flask_client.post("/api/v1/external/travis", query_string=dict(query, api_key=key, stream="Denmark"),
                             data={"payload": body})


@pytest.mark.parametrize("fixture,content", [
    ("build", f"Author: Ines Moreau\nBuild status: Passed :thumbs_up:\n{DETAILS}"),
    ("build_failed", f"Author: Ines Moreau\nBuild status: Still Failing :thumbs_down:\n{DETAILS}"),
    ("pull_request", f"Author: Ines Moreau\nBuild status: Pending :counterclockwise:\n{DETAILS}"),
    ("build_unknown_status", f"Author: Ines Moreau\nBuild status: Queued (No emoji specified for status 'Queued'.)\n{DETAILS}"),
])
def test_travis_build(org, flask_client, fixture, content):
    """Does this Travis build post Zulip's message in the "builds" topic?"""
    bot_id, key = incoming_bot(org)
    assert post_travis(flask_client, key, fixture).get_json()["result"] == "success"
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [("builds", content)]


def test_travis_event_filters(org, flask_client):
    """Do exclude_events= and only_events= filter pushes and pull requests?"""
    bot_id, key = incoming_bot(org)
    post_travis(flask_client, key, "pull_request", exclude_events='["pull_request"]')
    post_travis(flask_client, key, "build", only_events='["pull_*"]')
    assert messages_from(bot_id) == []
    post_travis(flask_client, key, "build", exclude_events='["pull_request"]')
    assert len(messages_from(bot_id)) == 1
