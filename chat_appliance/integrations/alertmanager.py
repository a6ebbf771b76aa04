"""Prometheus Alertmanager: a group of alerts, told per topic (the alert's `name=` label or
annotation, "instance" by default) and status, with each alert's `desc=` field ("alertname" by
default) and a link to its source."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, WebhookRequest, always


def field(alert, name: str, missing: str) -> str:
    """A label, else an annotation of that name."""
    labels, annotations = alert.get("labels", {}), alert.get("annotations", {})
    return labels.get(name, annotations.get(name, missing))


def format_alerts(hook: WebhookRequest) -> list[tuple[str, str]]:
    name_field = hook.params.get("name", "instance")
    desc_field = hook.params.get("desc", "alertname")
    topics: dict[str, dict[str, list[str]]] = {}
    for alert in hook.payload["alerts"]:
        name = field(alert, name_field, "(unknown)")
        desc = field(alert, desc_field, f"<missing field: {desc_field}>")
        # Prometheus links to the graph's table tab; the graph itself says more.
        url = alert["generatorURL"].replace("tab=1", "tab=0")
        topics.setdefault(name, {"firing": [], "resolved": []})[alert["status"]].append(f"{desc} ([source]({url}))")
    messages = []
    for topic, statuses in topics.items():
        for status, lines in statuses.items():
            if not lines:
                continue
            icon, title = (":alert:", "FIRING") if status == "firing" else (":squared_ok:", "Resolved")
            if len(lines) == 1:
                messages.append((topic, f"{icon} **{title}** {lines[0]}"))
            else:
                messages.append((topic, f"{icon} **{title}**\n" + "\n".join(f"* {line}" for line in lines)))
    return messages


INTEGRATION = Integration(
    name="alertmanager",
    display_name="Alertmanager",
    description="Prometheus Alertmanager alerts, grouped by instance and status.",
    find_event=always("alerts"),
    formatters={"alerts": format_alerts},
    options={
        "name": "The label or annotation whose value is the topic (default: `instance`).",
        "desc": "The label or annotation that describes each alert (default: `alertname`).",
    },
)
