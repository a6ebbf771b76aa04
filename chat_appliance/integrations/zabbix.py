"""Zabbix: a trigger's problem or recovery, in the host's topic. Zabbix's media type script
posts the fields below; a payload missing one answers 400 "Invalid payload"."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, InvalidPayload, WebhookRequest, always

FIELDS = ("hostname", "severity", "status", "item", "trigger", "link")


def format_alert(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    if not isinstance(p, dict) or any(not isinstance(p.get(field), str) for field in FIELDS):
        raise InvalidPayload()
    return p["hostname"], (f"{p['status']} ({p['severity']}) alert on [{p['hostname']}]({p['link']}):\n"
                           f"* {p['trigger']}\n* {p['item']}")


INTEGRATION = Integration(
    name="zabbix",
    display_name="Zabbix",
    description="Zabbix trigger problems and recoveries, per host.",
    find_event=always("alert"),
    formatters={"alert": format_alert},
)
