"""Posting an integration's payload fixtures (tests/support/data/webhooks/<integration>/<fixture>.json) to
/api/v1/external/<integration> as the service would, and reading back what the bot posted.

An integration's test file is a table of cases: (fixture, headers, expected topic, expected
content), checked by check_case; `query` adds URL parameters (topic=, branches=, ...)."""

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from chat_appliance.models import Message, database

from .helpers import ok

FIXTURES = Path(__file__).parent / "data" / "webhooks"
# Bots' short names must differ within an organization.
_bot_numbers = itertools.count(1)


@dataclass
class Case:
    """One fixture posted, and the message Zulip posts for it."""

    fixture: str
    topic: str
    content: str
    headers: dict = field(default_factory=dict)
    query: dict = field(default_factory=dict)

    def __str__(self):
        return self.fixture


def incoming_bot(org):
    """A new incoming webhook bot of Hamlet's: (its user id, its API key)."""
    number = next(_bot_numbers)
    created = ok(org.client(org.hamlet).post("bots", full_name=f"Alerts Bot {number}", short_name=f"alerts{number}",
                                             bot_type=2))
    return created["user_id"], created["api_key"]


def fixture_body(integration, fixture):
    """The fixture's bytes, as the service sends them."""
    return (FIXTURES / integration / f"{fixture}.json").read_bytes()


def post_payload(flask_client, integration, key, body, headers=None, content_type="application/json", **query):
    """POST a raw body to the integration's URL with the key and the given parameters."""
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    return flask_client.post(f"/api/v1/external/{integration}", query_string=dict(query, api_key=key), data=body,
                             content_type=content_type, headers=headers or {})


def post_fixture(flask_client, integration, key, fixture, headers=None, **query):
    return post_payload(flask_client, integration, key, fixture_body(integration, fixture), headers, **query)


def messages_from(sender_id):
    """Everything this sender posted, oldest first."""
    with database.connection_context():
        return list(Message.select().where(Message.sender == sender_id).order_by(Message.id))


def check_case(org, flask_client, integration, case, stream="Denmark"):
    """Post the case's fixture; assert success and exactly one message with its topic and content."""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, integration, key, case.fixture, case.headers, stream=stream, **case.query)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["result"] == "success", response.get_json()
    posted = messages_from(bot_id)
    assert len(posted) == 1, [m.content for m in posted]
    assert posted[0].topic == case.topic
    assert posted[0].content == case.content


def check_ignored(org, flask_client, integration, fixture_or_payload, headers=None, **query):
    """Post a payload that the integration knowingly ignores: success, and nothing posted."""
    bot_id, key = incoming_bot(org)
    if isinstance(fixture_or_payload, str):
        response = post_fixture(flask_client, integration, key, fixture_or_payload, headers, stream="Denmark", **query)
    else:
        response = post_payload(flask_client, integration, key, fixture_or_payload, headers, stream="Denmark", **query)
    body = response.get_json()
    assert response.status_code == 200 and body["result"] == "success", body
    assert messages_from(bot_id) == []
    return body
