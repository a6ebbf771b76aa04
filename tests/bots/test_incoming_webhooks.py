"""Incoming webhooks at /api/v1/external/{integration}: what every integration shares (the key,
the body, the topic and channel, the event filters, the answers), and the registry behind them.
Each integration's own messages are tested in tests/webhooks/test_<name>.py."""

import base64
import html
import json
import re

from chat_appliance.integrations import registry
from chat_appliance.models import Message, UserProfile, database

from ..support.helpers import err, ok
from ..support.webhook_helpers import incoming_bot, messages_from, post_payload

PUSH = {"ref": "refs/heads/main", "compare": "https://github.com/o/widgets/compare/a...b", "created": False,
        "deleted": False, "forced": False, "repository": {"name": "widgets", "full_name": "o/widgets"},
        "sender": {"login": "ana", "html_url": "https://github.com/ana"},
        "commits": [{"id": "0123456789abcdef0123", "message": "Fix the frobnicator\n\nlong",
                     "url": "https://github.com/o/widgets/commit/0123456",
                     "author": {"name": "Ana", "username": "ana"}}]}
PUSH_CONTENT = ("ana [pushed](https://github.com/o/widgets/compare/a...b) 1 commit to branch main.\n\n"
                "* Fix the frobnicator ([0123456789a](https://github.com/o/widgets/commit/0123456))")


def test_json_formatter_posts_a_code_block(org, flask_client):
    """Does the json integration post the payload as a ```json block in the given channel and topic?"""
    bot_id, key = incoming_bot(org)
    ok(post_payload(flask_client, "json", key, {"b": 1, "a": [1, 2]}, stream="Denmark", topic="alerts"))
    [message] = messages_from(bot_id)
    assert (message.stream_id, message.topic) == (org.denmark.id, "alerts")
    assert message.content == '```json\n{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n```'
    assert '<div class="codehilite" data-code-language="JSON">' in message.rendered_content


def test_body_is_json_whatever_its_content_type(org, flask_client):
    """Is a JSON body read as JSON when the service labels it form data or plain text?"""
    bot_id, key = incoming_bot(org)
    for content_type in ("application/x-www-form-urlencoded", "text/plain", "application/octet-stream"):
        ok(post_payload(flask_client, "github", key, json.dumps(PUSH), {"X-GitHub-Event": "push"},
                        content_type=content_type, stream="Denmark"))
    assert [m.content for m in messages_from(bot_id)] == [PUSH_CONTENT] * 3


def test_basic_auth_works_in_place_of_the_query_key(org, flask_client):
    """May the incoming webhook bot send its key as HTTP Basic credentials instead of api_key=?"""
    bot_id, key = incoming_bot(org)
    with database.connection_context():
        email = UserProfile.get_by_id(bot_id).email
    token = base64.b64encode(f"{email}:{key}".encode()).decode()
    response = flask_client.post("/api/v1/external/github", query_string={"stream": "Denmark"}, data=json.dumps(PUSH),
                                 content_type="application/json",
                                 headers={"Authorization": f"Basic {token}", "X-GitHub-Event": "push"})
    ok(response)
    assert [m.content for m in messages_from(bot_id)] == [PUSH_CONTENT]


def test_webhook_bot_key_opens_nothing_else(org, flask_client):
    """Is an incoming webhook bot's key refused on every other route, with Zulip's 400 and text,
    whether it comes as Basic credentials to the REST API or to the events endpoint?"""
    bot_id, key = incoming_bot(org)
    with database.connection_context():
        email = UserProfile.get_by_id(bot_id).email
    token = base64.b64encode(f"{email}:{key}".encode()).decode()
    headers = {"Authorization": f"Basic {token}"}
    text = "This API is not available to incoming webhook bots."
    err(flask_client.get("/api/v1/users/me", headers=headers), 400, "BAD_REQUEST", text)
    err(flask_client.post("/api/v1/messages", headers=headers,
                          data={"type": "stream", "to": "Denmark", "topic": "t", "content": "hi"}),
        400, "BAD_REQUEST", text)
    err(flask_client.post("/api/v1/register", headers=headers), 400, "BAD_REQUEST", text)
    err(flask_client.get("/api/v1/events", headers=headers, query_string={"queue_id": "x", "last_event_id": -1}),
        400, "BAD_REQUEST", text)
    assert messages_from(bot_id) == []


def test_topic_parameter_overrides_the_topic(org, flask_client):
    """Does topic= replace the integration's topic?"""
    bot_id, key = incoming_bot(org)
    ok(post_payload(flask_client, "github", key, PUSH, {"X-GitHub-Event": "push"}, stream="Denmark",
                    topic="deploys"))
    [message] = messages_from(bot_id)
    assert message.topic == "deploys" and message.content == PUSH_CONTENT


def test_only_and_exclude_events_filter_with_wildcards(org, flask_client):
    """Do only_events= and exclude_events= (JSON lists with shell-style wildcards of the
    integration's event names) decide what posts, answering success either way?"""
    bot_id, key = incoming_bot(org)
    push = {"X-GitHub-Event": "push"}
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", only_events='["issue*"]'))
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", exclude_events='["push_*"]'))
    assert messages_from(bot_id) == []
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", only_events='["push_commits"]'))
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", exclude_events='["push_tags"]'))
    assert len(messages_from(bot_id)) == 2
    err(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", only_events="push"),
        400, "BAD_REQUEST", 'Argument "only_events" is not valid JSON.')


def test_branches_filter_pushes(org, flask_client):
    """Does branches= post pushes to the listed branches only, answering success for the others?"""
    bot_id, key = incoming_bot(org)
    push = {"X-GitHub-Event": "push"}
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", branches="dev, release"))
    assert messages_from(bot_id) == []
    ok(post_payload(flask_client, "github", key, PUSH, push, stream="Denmark", branches="dev,main"))
    assert [m.content for m in messages_from(bot_id)] == [PUSH_CONTENT]


def test_unsupported_event_answers_success_and_posts_nothing(org, flask_client):
    """Is an event the integration does not handle answered with HTTP 200, Zulip's success
    envelope and its sentence, and nothing posted?"""
    bot_id, key = incoming_bot(org)
    response = post_payload(flask_client, "github", key, {"action": "frobbed"}, {"X-GitHub-Event": "frobnication"},
                            stream="Denmark")
    assert response.status_code == 200
    assert response.get_json() == {
        "result": "success",
        "msg": "The 'frobnication:frobbed' event isn't currently supported by the GitHub webhook; ignoring"}
    assert messages_from(bot_id) == []


def test_unreadable_payload_and_missing_header(org, flask_client):
    """Are a payload the integration cannot read and a missing event header 400s with Zulip's
    texts, posting nothing?"""
    bot_id, key = incoming_bot(org)
    response = post_payload(flask_client, "github", key, {"ref": 5}, {"X-GitHub-Event": "push"}, stream="Denmark")
    assert response.status_code == 400
    assert response.get_json() == {"result": "error", "code": "ANOMALOUS_WEBHOOK_PAYLOAD", "webhook_name": "GitHub",
                                   "msg": "Unable to parse request: Did GitHub generate this event?"}
    response = post_payload(flask_client, "github", key, PUSH, stream="Denmark")
    assert response.status_code == 400
    assert response.get_json() == {"result": "error", "code": "MISSING_HTTP_EVENT_HEADER", "header": "X-GitHub-Event",
                                   "msg": "Missing the HTTP event header 'X-GitHub-Event'"}
    assert messages_from(bot_id) == []


def test_bad_key_unknown_integration_and_bad_json(org, flask_client):
    """Are a wrong key (401), an unknown integration (404), malformed JSON (400), a payload nested
    too deeply (400) and one too large (413) refused?"""
    _bot_id, key = incoming_bot(org)
    err(post_payload(flask_client, "json", "wrong-key", {"x": 1}, stream="Denmark"), 401, "INVALID_API_KEY")
    err(post_payload(flask_client, "nosuch", key, {"x": 1}, stream="Denmark"), 404, "NOT_FOUND")
    err(post_payload(flask_client, "json", key, "{not json", stream="Denmark"), 400, "BAD_REQUEST", "Malformed JSON")
    err(post_payload(flask_client, "json", key, "[" * 100 + "]" * 100, stream="Denmark"), 400, "BAD_REQUEST",
        "Malformed JSON: nested too deeply")
    huge = json.dumps({"x": "a" * (3 * 1024 * 1024)})
    assert post_payload(flask_client, "json", key, huge, stream="Denmark").status_code == 413


def test_no_channel_sends_to_the_bot_owner(org, flask_client):
    """Without `stream`, does the message go to the bot's owner as a direct message?"""
    bot_id, key = incoming_bot(org)
    ok(post_payload(flask_client, "json", key, {"x": 1}))
    [message] = messages_from(bot_id)
    assert message.stream_id is None
    messages = ok(org.client(org.hamlet).get("messages", anchor="newest", num_before=1, num_after=0))["messages"]
    assert messages[-1]["sender_id"] == bot_id


def test_missing_channel_tells_the_owner(org, flask_client):
    """Does a post to a channel that does not exist answer success, post nothing, and send the
    bot's owner Zulip's notice from Notification Bot (once, however often the service retries)?"""
    bot_id, key = incoming_bot(org)
    ok(post_payload(flask_client, "json", key, {"x": 1}, stream="No such channel"))
    ok(post_payload(flask_client, "json", key, {"x": 1}, stream="No such channel"))
    assert messages_from(bot_id) == []
    with database.connection_context():
        bot = UserProfile.get_by_id(bot_id)
        notices = [m for m in Message.select().where(Message.stream.is_null(True)).order_by(Message.id)
                   if "tried to send a message to channel" in m.content]
    assert [m.content for m in notices] == [
        f"Your bot `{bot.delivery_email}` tried to send a message to channel #**No such channel**, but that "
        "channel does not exist. Click [here](#channels/new) to create it."]
    assert notices[0].sender.full_name == "Notification Bot"


def test_every_integration_is_registered_with_its_events():
    """Does the registry find every integration module, each with its name, events and docs link?"""
    found = registry()
    assert {"github", "json", "slack_incoming"} <= set(found)
    for name, integration in found.items():
        assert integration.name == name and integration.formatters
        assert integration.documentation_url().startswith("https://")


def test_web_client_page_lists_the_integrations(flask_client):
    """Does the web client's page carry every integration, with its documentation link, for the
    bots settings to offer?"""
    page = flask_client.get("/").get_data(as_text=True)
    content = re.search(r'<meta name="integrations" content="([^"]*)">', page).group(1)
    listed = json.loads(html.unescape(content))
    assert [name for name, _label, _doc in listed] == sorted(registry())
    assert ["github", "GitHub", "https://zulip.com/integrations/doc/github"] in listed


def test_payload_html_is_never_rendered_as_html(org, flask_client):
    """Does HTML inside a payload come out as text, only the integration's Markdown rendering?"""
    bot_id, key = incoming_bot(org)
    ok_body = post_payload(flask_client, "slack_incoming", key,
                           {"text": "*done* <script>alert(1)</script><img src=x onerror=alert(2)>"},
                           stream="Denmark").get_json()
    assert ok_body["ok"] is True
    [message] = messages_from(bot_id)
    assert "<strong>done</strong>" in message.rendered_content
    assert "<script" not in message.rendered_content and "<img" not in message.rendered_content
    assert "&lt;script&gt;" in message.rendered_content
