"""PagerDuty's integration: incident messages of PagerDuty's webhooks V1, V2 and V3
(tests/data/webhooks/pagerduty/, written from PagerDuty's documented payloads) must give Zulip's
topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture

PD = "https://tidewater.pagerduty.com"
V1 = f"[33]({PD}/incidents/PT4KHLK)"
V2 = f"[34]({PD}/incidents/PQ9DRFT)"
V3 = f"[Pump 2 pressure low (#35)]({PD}/incidents/PZ3EVNT)"
INES = f"[ines.moreau]({PD}/users/PUSR01)"
QUOTE = "``` quote\nBuoy 7 offline\nNo heartbeat for 15 minutes\n```"
TOPIC_V3 = "Incident Pump 2 pressure low (#35)"

CASES = [
    Case("trigger", "Incident 33",
         f"Incident {V1} triggered by [Buoy network]({PD}/services/PSVC01) (assigned to {INES}).\n\n{QUOTE}"),
    Case("acknowledge", "Incident 33", f"Incident {V1} acknowledged by {INES}.\n\n{QUOTE}"),
    Case("unacknowledge", "Incident 33",
         f"Incident {V1} unacknowledged by [Buoy network]({PD}/services/PSVC01) (assigned to nobody).\n\n"
         "``` quote\nBuoy 7 offline\n```"),
    Case("resolve_by_user", "Incident 33", f"Incident {V1} resolved by [kai]({PD}/users/PUSR02).\n\n{QUOTE}"),
    Case("resolve", "Incident 33", f"Incident {V1} resolved.\n\n``` quote\nHeartbeat is back\n```"),
    Case("assign", "Incident 33", f"Incident {V1} assigned to {INES}.\n\n{QUOTE}"),
    Case("escalate", "Incident 33", f"Incident {V1} escalated by {INES}.\n\n{QUOTE}"),
    Case("trigger_v2", "Incident 34",
         f"Incident {V2} triggered by [Tide gauges]({PD}/services/PSVC02) (assigned to [Ines Moreau]({PD}/users/PUSR01))."
         "\n\n``` quote\nGauge 3 reads 40cm high\n```"),
    Case("acknowledge_v2", "Incident 34",
         f"Incident {V2} acknowledged by [Ines Moreau]({PD}/users/PUSR01).\n\n``` quote\nGauge 3 reads 40cm high\n```"),
    Case("resolve_v2", "Incident 34",
         f"Incident {V2} resolved by [Kai Nordin]({PD}/users/PUSR02).\n\n``` quote\nGauge 3 reads 40cm high\n```"),
    Case("assign_v2", "Incident 34",
         f"Incident {V2} assigned to [Ines Moreau]({PD}/users/PUSR01).\n\n``` quote\nGauge 3 reads 40cm high\n```"),
    Case("triggered_v3", TOPIC_V3,
         f"Incident {V3} triggered by [Harbor pumps]({PD}/services/PSVC03) (assigned to [Kai Nordin]({PD}/users/PUSR02))."),
    Case("acknowledged_v3", TOPIC_V3, f"Incident {V3} acknowledged by [Kai Nordin]({PD}/users/PUSR02)."),
    Case("unacknowledged_v3", TOPIC_V3,
         f"Incident {V3} unacknowledged by [Harbor pumps]({PD}/services/PSVC03) (assigned to nobody)."),
    Case("resolved_v3", TOPIC_V3, f"Incident {V3} resolved by [Ines Moreau]({PD}/users/PUSR01)."),
    Case("resolved_v3_without_agent", TOPIC_V3, f"Incident {V3} resolved."),
    Case("reassigned_v3", TOPIC_V3, f"Incident {V3} reassigned to [Kai Nordin]({PD}/users/PUSR02)."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pagerduty_incident(org, flask_client, case):
    """Does this PagerDuty incident message post Zulip's topic and message?"""
    check_case(org, flask_client, "pagerduty", case)


def test_pagerduty_several_messages(org, flask_client):
    """Does a V1 payload with several messages post each of them?"""
    bot_id, key = incoming_bot(org)
    post_fixture(flask_client, "pagerduty", key, "trigger_and_assign", stream="Denmark")
    assert [m.content.split(" (assigned")[0].split(".\n")[0] for m in messages_from(bot_id)] == [
        f"Incident {V1} triggered by [Buoy network]({PD}/services/PSVC01)", f"Incident {V1} assigned to {INES}"]


@pytest.mark.parametrize("fixture,event", [("custom_v2", "incident.custom"), ("annotated_v3", "incident.annotated")])
def test_pagerduty_unsupported(org, flask_client, fixture, event):
    """Are event types Zulip does not handle answered with its success note, posting nothing?"""
    body = check_ignored(org, flask_client, "pagerduty", fixture)
    assert body["msg"] == f"The '{event}' event isn't currently supported by the PagerDuty webhook; ignoring"
