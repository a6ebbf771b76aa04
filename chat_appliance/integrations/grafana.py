"""Grafana: alerting from Grafana 8 on ("alerts", one message per alert in the topic
"[alertname]") and Grafana 7's legacy alerts (one message in the alert's title)."""

from __future__ import annotations


from chat_appliance.integrations.base import AnomalousPayload, Integration, WebhookRequest, global_time

# Grafana's "not resolved yet".
NO_END_TIME = "0001-01-01T00:00:00Z"
LEGACY_STATES = {"no_data", "paused", "alerting", "ok", "pending", "unknown"}



def status_line(icon: str, state: str) -> str:
    return f"{icon} **{state.upper()}**\n\n"


def listing(items) -> str:
    return "".join(f"- {key}: {value}\n" for key, value in items.items())


def alert_message(alert) -> tuple[str, str]:
    status = alert["status"]
    if status not in ("firing", "resolved"):
        raise AnomalousPayload()
    body = status_line(":alert:" if status == "firing" else ":checkbox:", status)
    labels = alert["labels"]
    if labels.get("alertname"):
        topic = f"[{labels['alertname']}]"
        body += f"**{labels['alertname']}**\n\n"
    else:
        topic = f"[{alert['fingerprint']}]"  # no name: the fingerprint tells alerts apart
    body += f"This alert was fired at {global_time(alert['startsAt'])}."
    if alert["endsAt"] != NO_END_TIME:
        body += f"\n\nThis alert was resolved at {global_time(alert['endsAt'])}."
    if labels:
        body += f"\n\nLabels:\n{listing(labels)}\n"
    if alert.get("values"):
        body += f"Values:\n{listing(alert['values'])}\n"
    elif alert.get("valueString"):
        body += f"Values:\n{alert['valueString']}\n\n"
    if alert.get("annotations"):
        body += f"Annotations:\n{listing(alert['annotations'])}"
    for key, label in (("generatorURL", "Generator"), ("silenceURL", "Silence"), ("imageURL", "Image")):
        if alert.get(key):
            body += f"\n[{label}]({alert[key]})"
    return topic, body + "\n"


def legacy_message(p) -> tuple[str, str]:
    state = p["state"]
    if state not in LEGACY_STATES:
        raise AnomalousPayload()
    icon = {"alerting": ":alert:", "ok": ":squared_ok:"}.get(state, ":info:")
    matches = "".join(f"**{m['metric']}:** {m['value']}\n" for m in p.get("evalMatches") or [])
    message = f"{p['message']}\n\n" if "message" in p else ""
    body = f"{status_line(icon, state)}[{p['ruleName']}]({p['ruleUrl']})\n\n{message}{matches}"
    if "imageUrl" in p:
        body += f"\n[Click to view visualization]({p['imageUrl']})"
    return p["title"], body.strip()


def format_grafana(hook: WebhookRequest):
    p = hook.payload
    if "alerts" in p:
        return [alert_message(alert) for alert in p["alerts"]]
    return legacy_message(p)


def find_event(hook: WebhookRequest) -> str:
    """The alert's state, for only_events/exclude_events (for alert groups, the group's status)."""
    p = hook.payload
    return p["status"] if "alerts" in p else p["state"]


INTEGRATION = Integration(
    name="grafana",
    display_name="Grafana",
    description="Grafana alerts: firing and resolved (Grafana 8 and later), and legacy alert states.",
    find_event=find_event,
    formatters={event: format_grafana for event in ("firing", "resolved", "ok", "pending", "alerting", "paused",
                                                     "no_data", "unknown")},
)
