"""Zendesk's integration: a URL target's notification, posted as Zendesk posts it (form fields,
HTTP Basic credentials), must give Zulip's topic and message exactly."""

import base64

from chat_appliance.models import UserProfile, database

from ..support.webhook_helpers import incoming_bot, messages_from


def post_zendesk(flask_client, bot_id, key, **fields):
    with database.connection_context():
        email = UserProfile.get_by_id(bot_id).email
    token = base64.b64encode(f"{email}:{key}".encode()).decode()
    return flask_client.post("/api/v1/external/zendesk", data=dict(fields, stream="Denmark"),
                             headers={"Authorization": f"Basic {token}"})


def test_zendesk_ticket(org, flask_client):
    """Is the trigger's message posted in the ticket's topic?"""
    bot_id, key = incoming_bot(org)
    message = "Ticket [#4: Pier light out](https://tidewater.zendesk.com/agent/tickets/4) was updated by Ines\n* Status: open"
    assert post_zendesk(flask_client, bot_id, key, ticket_title="Pier light out", ticket_id="4",
                        message=message).get_json()["result"] == "success"
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [("#4: Pier light out", message)]


def test_zendesk_long_title(org, flask_client):
    """Is a topic longer than Zulip's 60 characters cut with "..."?"""
    bot_id, key = incoming_bot(org)
    post_zendesk(flask_client, bot_id, key, ticket_title="Lights" + "!" * 80, ticket_id="5", message="x")
    assert [m.topic for m in messages_from(bot_id)] == ["#5: Lights" + "!" * 47 + "..."]


def test_zendesk_missing_field(org, flask_client):
    """Is a notification without the ticket's id refused with Zulip's missing-argument error?"""
    bot_id, key = incoming_bot(org)
    response = post_zendesk(flask_client, bot_id, key, ticket_title="Pier light out", message="x")
    assert response.status_code == 400
    assert response.get_json() == {"result": "error", "code": "REQUEST_VARIABLE_MISSING", "var_name": "ticket_id",
                                   "msg": "Missing 'ticket_id' argument"}
    assert messages_from(bot_id) == []
