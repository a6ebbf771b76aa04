"""Opsgenie: alert actions (Create, Acknowledge, AddNote, custom actions, ...), each a list of
the fields the action carries, in the topic of the Opsgenie integration that sent it."""

from __future__ import annotations

from chat_appliance.integrations.base import ANY_EVENT, Integration, WebhookRequest

# The alert's fields shown, in this order, with their labels.
FIELDS = {"note": "Note", "recipient": "Recipient", "addedTags": "Tags added", "team": "Team added",
          "owner": "Assigned owner", "removedTags": "Tags removed", "message": "Message", "tags": "Tags",
          "escalationName": "Escalation"}


def format_alert(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    alert = p["alert"]
    tags = ", ".join(f"`{tag}`" for tag in alert.get("tags", []))
    lines = ""
    for field, label in FIELDS.items():
        if field == "tags" and tags:
            value = tags
        elif field == "escalationName" and field in p:
            value = p[field]
        elif field in alert and field != "tags":
            value = alert[field]
        else:
            continue
        lines += f"* **{label}**: {value}\n"
    region = "eu." if hook.flag("eu_region", False) else ""
    body = (f"[Opsgenie alert for {p['integrationName']}](https://app.{region}opsgenie.com/alert/V2#/show/"
            f"{alert['alertId']}):\n* **Type**: {p['action']}\n{lines}")
    return p["integrationName"], body.strip()


INTEGRATION = Integration(
    name="opsgenie",
    display_name="Opsgenie",
    description="Opsgenie alert actions: created, acknowledged, noted, assigned, escalated, closed and custom ones.",
    find_event=lambda hook: hook.payload["action"],
    formatters={ANY_EVENT: format_alert},
    options={"eu_region": "true: link to Opsgenie's EU site (app.eu.opsgenie.com)."},
)
