"""Slack-compatible incoming webhooks: messages in Slack's format (tests/data/webhooks/
slack_incoming/, written from Slack's documented incoming webhook payloads) must give Zulip's
topic and message exactly, answered as Slack answers."""

import json

import pytest

from ..support.webhook_helpers import Case, check_case, incoming_bot, messages_from, post_fixture

CASES = [
    Case("text", "deploys", "Deploy **finished** in *42s* ~~maybe~~ see [the log](https://ci.tidewater.example/runs/77)"),
    Case("text_with_icon", "kai", ":rocket: Release 2.4 is out"),
    Case("blocks", "C04BUILDS",
         "## Nightly build\n\n**3 failures** in [run 78](https://ci.tidewater.example/runs/78)\n\n"
         "[badge](https://ci.tidewater.example/badge.png)\n\n| | |\n|-|-|\n| **Branch** main | **Commit** 5b8d2e1 |\n"
         "| a b |  |\n\n----\n\n[ci](https://ci.tidewater.example/icon.png)\n\nTriggered by *kai*\n\n"
         "[Duration graph](https://ci.tidewater.example/graph.png)"),
    Case("attachment", "releases",
         "## [Release 2.4](https://tides.tidewater.example/releases/2.4)\n\nNew release\n\nFaster **tide** tables\n\n"
         "**Version**: 2.4.0\n**Notes**\nNo breaking changes\n\n[](https://tides.tidewater.example/banner.png)\n\n"
         "Release bot\n\n<time:2026-12-04T12:00:00+00:00>"),
    Case("attachment_blocks", "", "Pump 2 is **down**\n\nSince 09:00"),
    Case("text", "builds", "Deploy **finished** in *42s* ~~maybe~~ see [the log](https://ci.tidewater.example/runs/77)",
         query={"topic": "builds"}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_slack_incoming_message(org, flask_client, case):
    """Does this Slack-format message post Zulip's topic ("(no topic)", the empty topic, when
    there is no channel) and Markdown?"""
    check_case(org, flask_client, "slack_incoming", case)


def test_slack_incoming_answers_as_slack(org, flask_client):
    """Is success answered with Slack's "ok": true, a payload with nothing to show posted as
    nothing, and an unreadable block answered as Slack answers errors?"""
    bot_id, key = incoming_bot(org)
    body = post_fixture(flask_client, "slack_incoming", key, "attachment_all_null", stream="Denmark").get_json()
    assert body == {"result": "success", "msg": "", "ok": True}
    response = post_fixture(flask_client, "slack_incoming", key, "bad_block", stream="Denmark")
    assert response.status_code == 400 and response.get_json() == {"ok": False, "error": "Malformed payload"}
    assert messages_from(bot_id) == []


def test_slack_incoming_accepts_a_form_payload(org, flask_client):
    """Is Slack's form encoding (a `payload` field holding JSON) accepted too?"""
    bot_id, key = incoming_bot(org)
    response = flask_client.post("/api/v1/external/slack_incoming", query_string={"api_key": key, "stream": "Denmark"},
                                 data={"payload": json.dumps({"text": "from a *form*"})})
    assert response.get_json()["ok"] is True
    [message] = messages_from(bot_id)
    assert (message.topic, message.content) == ("", "from a **form**")
