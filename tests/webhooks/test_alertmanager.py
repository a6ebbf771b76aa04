"""Alertmanager's integration: alert groups (tests/data/webhooks/alertmanager/, written from
Alertmanager's documented webhook payload) must give Zulip's topics and messages exactly."""

from ..support.webhook_helpers import Case, check_case, incoming_bot, messages_from, post_fixture

SOURCE = "([source](http://prometheus.tidewater.example:9090/graph?g0.expr=node_filesystem_avail_bytes+%3C+1e9&g0.tab=0))"


def test_alertmanager_group_by_instance_and_status(org, flask_client):
    """Is a group told in one message per instance and status, firing alerts listed when there
    are several?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "alertmanager", key, "alert", stream="Denmark")
    assert response.get_json()["result"] == "success"
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [
        ("tide-db-1", f":alert: **FIRING**\n* DiskLow {SOURCE}\n* DiskLow {SOURCE}"),
        ("tide-db-1", f":squared_ok: **Resolved** DiskLow {SOURCE}"),
        ("tide-web-1", f":alert: **FIRING** DiskLow {SOURCE}"),
    ]


def test_alertmanager_name_and_desc_fields(org, flask_client):
    """Do name= and desc= choose the topic's and the description's labels or annotations?"""
    bot_id, key = incoming_bot(org)
    post_fixture(flask_client, "alertmanager", key, "alert", stream="Denmark", name="summary", desc="description")
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [
        ("Disk space low", f":alert: **FIRING**\n* /var has 800MB left {SOURCE}\n* /srv has 300MB left {SOURCE}\n"
                           f"* /var has 900MB left {SOURCE}"),
        ("Disk space low", f":squared_ok: **Resolved** /tmp is fine again {SOURCE}"),
    ]


def test_alertmanager_single_alert(org, flask_client):
    """Is one resolved alert told on one line?"""
    check_case(org, flask_client, "alertmanager",
               Case("single_alert", "tide-db-1", f":squared_ok: **Resolved** DiskLow {SOURCE}"))


def test_alertmanager_fields_from_annotations_and_missing(org, flask_client):
    """Are the topic and description read from annotations when labels lack them, and a missing
    description named as Zulip names it?"""
    check_case(org, flask_client, "alertmanager",
               Case("alert_with_fields_in_annotations", "tide-db-1",
                    f":alert: **FIRING** <missing field: runbook> {SOURCE}", query={"name": "host", "desc": "runbook"}))
