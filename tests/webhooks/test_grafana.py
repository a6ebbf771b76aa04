"""Grafana's integration: alert payloads of Grafana 8 and later (one message per alert) and of
Grafana 7 (tests/data/webhooks/grafana/, written from Grafana's documented payloads) must give
Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, incoming_bot, messages_from, post_fixture

G = "https://grafana.tidewater.example"
SILENCE = f"[Silence]({G}/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DDiskFull)"
GENERATOR = f"[Generator]({G}/alerting/grafana/abc123/view?orgId=1)"

CASES = [
    Case("alert_firing_v11", "[DiskFull]",
         ":alert: **FIRING**\n\n**DiskFull**\n\nThis alert was fired at <time:2026-12-05T03:04:05+01:00>.\n\n"
         "Labels:\n- alertname: DiskFull\n- instance: tide-db-2\n\nValues:\n- A: 93.5\n- B: 1\n\n"
         f"Annotations:\n- summary: Disk almost full on tide-db-2\n\n{GENERATOR}\n{SILENCE}"),
    Case("alert_resolved_v10", "[DiskFull]",
         ":checkbox: **RESOLVED**\n\n**DiskFull**\n\nThis alert was fired at <time:2026-12-05T03:04:05+01:00>.\n\n"
         "This alert was resolved at <time:2026-12-05T04:10:00+01:00>.\n\n"
         "Labels:\n- alertname: DiskFull\n- instance: tide-db-2\n\n"
         "Values:\n[ var='A' labels={instance=tide-db-2} value=71 ]\n\n"
         f"Annotations:\n- summary: Disk almost full on tide-db-2\n\n{GENERATOR}\n{SILENCE}\n"
         "[Image](https://img.tidewater.example/render/disk.png)"),
    Case("alert_alerting_v7", "[Alerting] Disk usage",
         f":alert: **ALERTING**\n\n[Disk usage]({G}/d/tides-db?tab=alert&viewPanel=4&orgId=1)\n\n"
         "Disk usage above 95%.\n\n**disk_used_percent:** 97.2\n**inodes_free:** 12\n\n"
         "[Click to view visualization](https://img.tidewater.example/render/legacy.png)"),
    Case("alert_ok_v7", "[OK] Disk usage",
         f":squared_ok: **OK**\n\n[Disk usage]({G}/d/tides-db?tab=alert&viewPanel=4&orgId=1)"),
    Case("alert_no_data_v7", "[No Data] Disk usage",
         f":info: **NO_DATA**\n\n[Disk usage]({G}/d/tides-db?tab=alert&viewPanel=4&orgId=1)\n\n"
         "No samples for 10 minutes."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_grafana_alert(org, flask_client, case):
    """Does this Grafana alert post Zulip's topic and message?"""
    check_case(org, flask_client, "grafana", case)


def test_grafana_alert_group_posts_each_alert(org, flask_client):
    """Does a group of alerts post one message per alert, an alert without a name in the topic of
    its fingerprint?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "grafana", key, "alert_multiple_v9", stream="Denmark")
    assert response.get_json()["result"] == "success"
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [
        ("[0a1b2c3d4e5f6a7b]", ":alert: **FIRING**\n\nThis alert was fired at <time:2026-12-05T05:00:00+00:00>.\n\n"
                               # No annotations: the labels' blank line and the links' newline add up.
                               f"Labels:\n- team: ops\n\n\n{GENERATOR}\n{SILENCE}"),
        ("[HighLatency]", ":alert: **FIRING**\n\n**HighLatency**\n\nThis alert was fired at "
                          "<time:2026-12-05T05:01:00+00:00>.\n\nLabels:\n- alertname: HighLatency\n- team: ops\n\n"
                          f"Annotations:\n- summary: Disk almost full on tide-db-2\n\n{GENERATOR}\n{SILENCE}"),
    ]


def test_grafana_only_events_filter_by_state(org, flask_client):
    """Do only_events= and exclude_events= filter Grafana alerts by their state?"""
    bot_id, key = incoming_bot(org)
    post_fixture(flask_client, "grafana", key, "alert_ok_v7", stream="Denmark", only_events='["alerting"]')
    post_fixture(flask_client, "grafana", key, "alert_alerting_v7", stream="Denmark", only_events='["alerting"]')
    assert [m.topic for m in messages_from(bot_id)] == ["[Alerting] Disk usage"]
