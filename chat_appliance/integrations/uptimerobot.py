"""UptimeRobot: a monitor going down or coming back up, in the monitor's topic. UptimeRobot's
alert contact must be set to post the JSON fields below (Zulip's documented template)."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, InvalidPayload, UnsupportedEvent, WebhookRequest

REQUIRED = {"Up": ("monitor_friendly_name", "monitor_url", "alert_details", "alert_friendly_duration"),
            "Down": ("monitor_friendly_name", "monitor_url", "alert_details")}


def format_alert(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    kind = p["alert_type_friendly_name"]
    if kind not in REQUIRED:
        raise UnsupportedEvent(kind)
    if any(not isinstance(p.get(field), str) for field in REQUIRED[kind]):
        raise InvalidPayload()
    name, url, details = p["monitor_friendly_name"], p["monitor_url"], p["alert_details"]
    if kind == "Up":
        return name, f"{name} ({url}) is back UP ({details}).\nIt was down for {p['alert_friendly_duration']}."
    return name, f"{name} ({url}) is DOWN ({details})."


def find_event(hook: WebhookRequest) -> str:
    kind = hook.payload["alert_type_friendly_name"]
    return {"Up": "up", "Down": "down"}.get(kind, kind)


INTEGRATION = Integration(
    name="uptimerobot",
    display_name="UptimeRobot",
    description="UptimeRobot monitors going down and coming back up.",
    find_event=find_event,
    formatters={"up": format_alert, "down": format_alert},
)
