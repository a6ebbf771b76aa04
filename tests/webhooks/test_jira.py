"""Jira's integration: each event Jira sends (tests/data/webhooks/jira/, written from Jira's
documented payloads) must give Zulip's topic and message exactly, naming an assignee who is a
member of the organization by their full name."""

import pytest

from ..support.webhook_helpers import (Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture,
                              post_payload)

TOPIC = "TIDE-42: Buoy 7 stops reporting"
ISSUE = "[TIDE-42: Buoy 7 stops reporting](https://harbor.atlassian.net/browse/TIDE-42)"
OTHELLO = "**Othello, the Moor of Venice**"

CASES = [
    Case("issue_created", TOPIC,
         f"Lena Ortiz created {ISSUE}:\n\n* **Priority**: High\n* **Assignee**: Noor Haddad"),
    Case("issue_created__no_assignee", TOPIC,
         f"Lena Ortiz created {ISSUE}:\n\n* **Priority**: High\n* **Assignee**: no one"),
    Case("issue_deleted", TOPIC, f"Lena Ortiz deleted {ISSUE}."),
    Case("issue_deleted__title_with_punctuation", "TIDE-42: Why does buoy 7 stop?",
         "Lena Ortiz deleted [TIDE-42: Why does buoy 7 stop?](https://harbor.atlassian.net/browse/TIDE-42)"),
    Case("issue_updated__changelog", TOPIC,
         f"Lena Ortiz updated {ISSUE} (assigned to {OTHELLO}):\n\n"
         f"* Changed status from **To Do** to **In Progress**\n"
         f"* Changed assignee from **Noor Haddad** to {OTHELLO}\n"
         "* Changed labels to **hardware**"),
    Case("issue_updated__unknown_assignee", TOPIC,
         f"Lena Ortiz updated {ISSUE} (assigned to **sam@harbor.example**):\n\n"
         "* Changed priority from **High** to **Highest**"),
    Case("issue_updated__commented", TOPIC,
         f"Lena Ortiz commented on {ISSUE}:\n\n``` quote\n**Urgent**: see `buoy.log` and "
         "[the dashboard](https://dash.example.org/b7) **unknown Jira user (5b10a2844c20...)**\n```"),
    Case("issue_updated__comment_edited", TOPIC,
         f"Lena Ortiz edited a comment on {ISSUE}:\n\n``` quote\n> Battery swapped, readings back.\n```"),
    Case("issue_updated__comment_deleted", TOPIC, f"Lena Ortiz deleted a comment from {ISSUE} (assigned to {OTHELLO})."),
    Case("issue_updated__transition", TOPIC,
         f"Lena Ortiz updated {ISSUE}:\n\n* Changed status from **In Progress** to **Done**"),
    Case("comment_created", TOPIC,
         f"Noor Haddad commented on {ISSUE}\n``` quote\nReplaced the battery ~~~ quote\nvoltage was 2.1V\n~~~\n```"),
    Case("comment_updated", TOPIC,
         f"Noor Haddad updated their comment on {ISSUE}\n``` quote\nReplaced the battery and the antenna.\n```"),
    Case("comment_deleted", TOPIC, f"Noor Haddad deleted their comment on {ISSUE}\n``` quote\n~~Wrong buoy, sorry!~~\n```"),
    Case("issue_created", "Buoy alerts",
         f"Lena Ortiz created {ISSUE}:\n\n* **Priority**: High\n* **Assignee**: Noor Haddad", query={"topic": "Buoy%20alerts"}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_jira_event(org, flask_client, case):
    """Does this Jira event post Zulip's topic and message?"""
    check_case(org, flask_client, "jira", case)


def test_jira_ignored_and_unsupported_events(org, flask_client):
    """Is an event Zulip ignores (a sprint started) answered with plain success, and one it does
    not handle (a version created) with its note, both posting nothing?"""
    assert check_ignored(org, flask_client, "jira", "sprint_started") == {"result": "success", "msg": ""}
    body = check_ignored(org, flask_client, "jira", "version_created")
    assert body["msg"] == "The 'jira:version_created' event isn't currently supported by the Jira webhook; ignoring"


def test_jira_payload_without_event(org, flask_client):
    """Is a payload that names no event refused with Zulip's 400, posting nothing?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "jira", key, "issue_created", stream="Denmark")
    assert response.status_code == 200
    response = post_payload(flask_client, "jira", key, {"issue": {"key": "TIDE-1"}}, stream="Denmark")
    assert response.status_code == 400
    assert response.get_json()["msg"] == "Unable to parse request: Did Jira generate this event?"
    assert len(messages_from(bot_id)) == 1
