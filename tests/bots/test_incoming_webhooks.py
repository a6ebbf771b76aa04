"""Incoming webhooks at /api/v1/external/{integration}: the key in the query string, the
message formatted by the integration and sent as the bot."""

import json

from chat_appliance.models import Message, database

from ..support.helpers import err, ok


def incoming_bot(org):
    created = ok(org.client(org.hamlet).post("bots", full_name="Alerts Bot", short_name="alerts", bot_type=2))
    return created["user_id"], created["api_key"]


def post_hook(flask_client, integration, key, payload, headers=None, **query):
    query = dict(query, api_key=key)
    return flask_client.post(f"/api/v1/external/{integration}", query_string=query, data=json.dumps(payload),
                             content_type="application/json", headers=headers or {})


def newest_from(sender_id):
    with database.connection_context():
        return Message.select().where(Message.sender == sender_id).order_by(Message.id.desc()).first()


def test_json_formatter_posts_a_code_block(org, flask_client):
    """Does the json integration post the payload as a ```json block in the given channel and topic?"""
    bot_id, key = incoming_bot(org)
    ok(post_hook(flask_client, "json", key, {"b": 1, "a": [1, 2]}, stream="Denmark", topic="alerts"))
    message = newest_from(bot_id)
    assert (message.stream_id, message.topic) == (org.denmark.id, "alerts")
    assert message.content.startswith("```json\n") and '"a": [' in message.content
    assert '<div class="codehilite" data-code-language="JSON">' in message.rendered_content


def test_slack_incoming_converts_mrkdwn(org, flask_client):
    """Does slack_incoming turn *bold*, _italic_, ~strike~ and <url|label> into Zulip Markdown,
    taking the payload's text and attachments?"""
    bot_id, key = incoming_bot(org)
    payload = {"text": "*Deploy* _done_ ~maybe~ see <https://example.com/x|the log>",
               "attachments": [{"title": "Build 7", "text": "all green"}]}
    ok(post_hook(flask_client, "slack_incoming", key, payload, stream="Denmark", topic="deploys"))
    content = newest_from(bot_id).content
    assert content.startswith("**Deploy** *done* ~~maybe~~ see [the log](https://example.com/x)")
    assert "**Build 7**\nall green" in content


def test_slack_incoming_accepts_a_form_payload(org, flask_client):
    """Is Slack's form encoding (a `payload` field holding JSON) accepted too?"""
    bot_id, key = incoming_bot(org)
    response = flask_client.post("/api/v1/external/slack_incoming", query_string={"api_key": key, "stream": "Denmark"},
                                 data={"payload": json.dumps({"text": "from a form"})})
    ok(response)
    message = newest_from(bot_id)
    assert message.content == "from a form" and message.topic == ""  # "(no topic)" is the empty topic


def test_github_push_pull_request_and_issue(org, flask_client):
    """Are GitHub push, pull_request and issues events formatted into per-branch, per-PR and
    per-issue topics?"""
    bot_id, key = incoming_bot(org)
    repo = {"name": "widgets"}
    sender = {"login": "ana", "html_url": "https://github.com/ana"}
    push = {"ref": "refs/heads/main", "compare": "https://github.com/o/widgets/compare/a...b", "repository": repo,
            "sender": sender, "commits": [{"id": "0123456789abcdef", "message": "Fix the frobnicator\n\nlong",
                                           "url": "https://github.com/o/widgets/commit/0123456"}]}
    ok(post_hook(flask_client, "github", key, push, {"X-GitHub-Event": "push"}, stream="Denmark"))
    message = newest_from(bot_id)
    assert message.topic == "widgets / main"
    assert "pushed](https://github.com/o/widgets/compare/a...b) 1 commit to branch main." in message.content
    assert "* Fix the frobnicator ([0123456](https://github.com/o/widgets/commit/0123456))" in message.content
    pr = {"action": "closed", "repository": repo, "sender": sender,
          "pull_request": {"number": 5, "title": "Faster", "merged": True, "html_url": "https://github.com/o/w/pull/5"}}
    ok(post_hook(flask_client, "github", key, pr, {"X-GitHub-Event": "pull_request"}, stream="Denmark"))
    message = newest_from(bot_id)
    assert message.topic == "widgets / PR #5 Faster" and "merged [PR #5]" in message.content
    issue = {"action": "opened", "repository": repo, "sender": sender,
             "issue": {"number": 9, "title": "Broken", "body": "It broke.", "html_url": "https://github.com/o/w/issues/9"}}
    ok(post_hook(flask_client, "github", key, issue, {"X-GitHub-Event": "issues"}, stream="Denmark"))
    message = newest_from(bot_id)
    assert message.topic == "widgets / issue #9 Broken" and "It broke." in message.content


def test_github_ping_and_unsupported_events(org, flask_client):
    """Is `ping` acknowledged without a message, and an unsupported event refused with a clear
    error that sends nothing?"""
    bot_id, key = incoming_bot(org)
    ok(post_hook(flask_client, "github", key, {"zen": "hi"}, {"X-GitHub-Event": "ping"}, stream="Denmark"))
    body = err(post_hook(flask_client, "github", key, {}, {"X-GitHub-Event": "gollum"}, stream="Denmark"),
               400, "UNSUPPORTED_WEBHOOK_EVENT_TYPE")
    assert "gollum" in body["msg"]
    assert newest_from(bot_id) is None


def test_no_channel_sends_to_the_bot_owner(org, flask_client):
    """Without `stream`, does the message go to the bot's owner as a direct message?"""
    bot_id, key = incoming_bot(org)
    ok(post_hook(flask_client, "json", key, {"x": 1}))
    message = newest_from(bot_id)
    assert message.stream_id is None
    messages = ok(org.client(org.hamlet).get("messages", anchor="newest", num_before=1, num_after=0))["messages"]
    assert messages[-1]["sender_id"] == bot_id


def test_bad_key_unknown_integration_and_bad_json(org, flask_client):
    """Are a wrong key (401), an unknown integration (404) and malformed JSON (400) refused?"""
    _bot_id, key = incoming_bot(org)
    err(post_hook(flask_client, "json", "wrong-key", {"x": 1}, stream="Denmark"), 401, "INVALID_API_KEY")
    err(post_hook(flask_client, "nosuch", key, {"x": 1}, stream="Denmark"), 404, "NOT_FOUND")
    response = flask_client.post("/api/v1/external/json", query_string={"api_key": key, "stream": "Denmark"},
                                 data="{not json", content_type="application/json")
    err(response, 400, "BAD_REQUEST", "Malformed JSON")
