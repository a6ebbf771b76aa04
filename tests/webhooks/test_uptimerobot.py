"""UptimeRobot's integration: monitor alerts (tests/data/webhooks/uptimerobot/, written from the
alert contact's JSON template Zulip documents) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture

CASES = [
    Case("monitor_down", "Tide tables site",
         "Tide tables site (https://tides.tidewater.example) is DOWN (Connection Timeout)."),
    Case("monitor_up", "Tide tables site",
         "Tide tables site (https://tides.tidewater.example) is back UP (HTTP 200 - OK).\n"
         "It was down for 22 minutes and 17 seconds."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_uptimerobot_alert(org, flask_client, case):
    """Does this UptimeRobot alert post Zulip's topic and message?"""
    check_case(org, flask_client, "uptimerobot", case)


def test_uptimerobot_missing_fields(org, flask_client):
    """Is an alert without the monitor's name refused with Zulip's 400 "Invalid payload"?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "uptimerobot", key, "monitor_down_missing_name", stream="Denmark")
    assert response.status_code == 400 and response.get_json()["msg"] == "Invalid payload"
    assert messages_from(bot_id) == []


def test_uptimerobot_other_alert_type(org, flask_client):
    """Is an alert type other than up and down answered with Zulip's success note?"""
    body = check_ignored(org, flask_client, "uptimerobot", "monitor_paused")
    assert body["msg"] == "The 'Started' event isn't currently supported by the UptimeRobot webhook; ignoring"
