"""Zabbix's integration: trigger alerts (tests/data/webhooks/zabbix/, written from the fields
Zulip's Zabbix media type script sends) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, incoming_bot, messages_from, post_fixture

LINK = "https://zabbix.tidewater.example/tr_events.php?triggerid=20411&eventid="


@pytest.mark.parametrize("case", [
    Case("alert", "tide-db-2", f"PROBLEM (High) alert on [tide-db-2]({LINK}99812):\n"
                               "* Free disk space is less than 5% on volume /var\n* Free disk space on /var (%): 4.2"),
    Case("recovery", "tide-db-2", f"OK (High) alert on [tide-db-2]({LINK}99840):\n"
                                  "* Free disk space is less than 5% on volume /var\n* Free disk space on /var (%): 31.0"),
], ids=str)
def test_zabbix_alert(org, flask_client, case):
    """Does this Zabbix alert post Zulip's topic and message?"""
    check_case(org, flask_client, "zabbix", case)


def test_zabbix_missing_field(org, flask_client):
    """Is an alert missing a field refused with Zulip's 400 "Invalid payload"?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "zabbix", key, "missing_hostname", stream="Denmark")
    assert response.status_code == 400 and response.get_json()["msg"] == "Invalid payload"
    assert messages_from(bot_id) == []
