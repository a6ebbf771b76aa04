"""Papertrail's integration: saved search alerts, posted as Papertrail posts them (its JSON in a
form's `payload` field; tests/data/webhooks/papertrail/, written from Papertrail's documented
payload), must give Zulip's topic and message exactly."""

from ..support.webhook_helpers import FIXTURES, incoming_bot, messages_from

SEARCH = "https://my.papertrailapp.com/searches/77"


def post_papertrail(flask_client, key, fixture):
    body = (FIXTURES / "papertrail" / f"{fixture}.json").read_text()
    return flask_client.post("/api/v1/external/papertrail", query_string={"api_key": key, "stream": "Denmark"},
                             data={"payload": body})


def match(source, message):
    return f"<time:2026-12-05T01:30:02-08:00> - {source} - timed out:\n``` quote\n{message}\n```"


def test_papertrail_short_post(org, flask_client):
    """Are a few matches quoted in full in the topic "logs"?"""
    bot_id, key = incoming_bot(org)
    post_papertrail(flask_client, key, "short_post")
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [(
        "logs", f'[Search for "API timeouts"]({SEARCH}) found **2** matches:\n\n'
                f"{match('harbor-api', 'upstream timed out (1)')}\n{match('harbor-worker', 'job timed out')}")]


def test_papertrail_long_post(org, flask_client):
    """Are only four matches quoted, followed by a link to see more?"""
    bot_id, key = incoming_bot(org)
    post_papertrail(flask_client, key, "long_post")
    quoted = "\n".join(match("harbor-api", f"upstream timed out ({n})") for n in range(1, 5))
    assert [m.content for m in messages_from(bot_id)] == [
        f'[Search for "API timeouts"]({SEARCH}) found **6** matches:\n\n{quoted}\n[See more]({SEARCH})']


def test_papertrail_without_events(org, flask_client):
    """Is a payload without events refused with Zulip's 400?"""
    bot_id, key = incoming_bot(org)
    response = post_papertrail(flask_client, key, "no_events")
    assert response.status_code == 400 and response.get_json()["msg"] == "Events key is missing from payload"
    assert messages_from(bot_id) == []
