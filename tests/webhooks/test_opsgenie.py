"""Opsgenie's integration: alert actions (tests/data/webhooks/opsgenie/, written from Opsgenie's
documented webhook payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, incoming_bot, messages_from, post_fixture

TOPIC = "Harbor monitoring"
HEAD = "[Opsgenie alert for Harbor monitoring](https://app.opsgenie.com/alert/V2#/show/7f3c2a10-9b8e-4d6f-a1c2-3e4f5a6b7c8d):"
TAGS = "* **Tags**: `harbor`, `pumps`"
MESSAGE = "* **Message**: Pump 2 pressure low"

CASES = [
    Case("create", TOPIC, f"{HEAD}\n* **Type**: Create\n{MESSAGE}\n{TAGS}"),
    Case("acknowledge", TOPIC, f"{HEAD}\n* **Type**: Acknowledge\n{MESSAGE}\n{TAGS}"),
    Case("addnote", TOPIC, f"{HEAD}\n* **Type**: AddNote\n* **Note**: Spare pump is on its way\n{MESSAGE}\n{TAGS}"),
    Case("addrecipient", TOPIC, f"{HEAD}\n* **Type**: AddRecipient\n* **Recipient**: harbor_night_shift\n{MESSAGE}\n{TAGS}"),
    Case("addtags", TOPIC, f"{HEAD}\n* **Type**: AddTags\n* **Tags added**: urgent,night\n{MESSAGE}\n"
                           "* **Tags**: `harbor`, `pumps`, `urgent`, `night`"),
    Case("removetags", TOPIC, f"{HEAD}\n* **Type**: RemoveTags\n* **Tags removed**: night\n{MESSAGE}\n"
                              "* **Tags**: `harbor`, `pumps`, `urgent`"),
    Case("addteam", TOPIC, f"{HEAD}\n* **Type**: AddTeam\n* **Team added**: harbor-ops\n{MESSAGE}\n{TAGS}"),
    Case("assignownership", TOPIC,
         f"{HEAD}\n* **Type**: AssignOwnership\n* **Assigned owner**: kai@tidewater.example\n{MESSAGE}\n{TAGS}"),
    Case("close", TOPIC, f"{HEAD}\n* **Type**: Close\n{MESSAGE}"),
    Case("escalate", TOPIC, f"{HEAD}\n* **Type**: Escalate\n* **Escalation**: Harbor escalation"),
    Case("customaction", TOPIC, f"{HEAD}\n* **Type**: RestartPump\n{MESSAGE}\n{TAGS}"),
    Case("close", TOPIC, f"{HEAD.replace('app.opsgenie', 'app.eu.opsgenie')}\n* **Type**: Close\n{MESSAGE}",
         query={"eu_region": "true"}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_opsgenie_alert_action(org, flask_client, case):
    """Does this Opsgenie alert action post Zulip's topic and message?"""
    check_case(org, flask_client, "opsgenie", case)


def test_opsgenie_filters_by_action(org, flask_client):
    """Do only_events= and exclude_events= filter by the alert's action?"""
    bot_id, key = incoming_bot(org)
    post_fixture(flask_client, "opsgenie", key, "create", stream="Denmark", exclude_events='["Create", "Add*"]')
    post_fixture(flask_client, "opsgenie", key, "addnote", stream="Denmark", exclude_events='["Create", "Add*"]')
    post_fixture(flask_client, "opsgenie", key, "close", stream="Denmark", exclude_events='["Create", "Add*"]')
    assert [m.content.split("\n")[1] for m in messages_from(bot_id)] == ["* **Type**: Close"]
