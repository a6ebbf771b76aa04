"""New Relic: workflow notifications of an issue (created, activated, acknowledged, closed), in
a spoiler block headed by its priority and what happened, in the topic "<State> <Priority>
Priority". A payload without the fields New Relic's default template sends gets Zulip's
fallback notice."""

from __future__ import annotations

from datetime import datetime, timezone

from chat_appliance.integrations.base import AnomalousPayload, Integration, UnsupportedEvent, WebhookRequest

PRIORITIES = {"CRITICAL": ":red_circle:", "HIGH": ":orange_circle:", "MEDIUM": ":yellow:", "LOW": ":blue_circle:"}
TIMESTAMPS = {"CREATED": "createdAt", "ACTIVATED": "activatedAt", "UPDATED": "updatedAt", "CLOSED": "closedAt",
              "ACKNOWLEDGED": "acknowledgedAt"}
INCIDENT_STATES = ["CREATED", "ACTIVATED", "CLOSED"]
DEFAULT_URL = "https://one.newrelic.com/alerts-ai"
ESSENTIAL_FIELDS = ["issueUrl", "title", "priority", "totalIncidents", "state", "createdAt", "updatedAt",
                    "alertPolicyNames", "alertConditionNames"]
# The date Zulip's fallback notice gives for its integration.
INTEGRATION_LAST_UPDATED = "June 2024"
FALLBACK = f"""```spoiler :danger: An [incident](https://one.newrelic.com/alerts-ai) updated

**Warning: Unable to send the default notification format**
At least one essential field is missing from the payload. Try
to reset the payload template to the default from New Relic
if you're unsure.

Please reach out to [the Zulip development community](https://chat.zulip.org/#narrow/stream/127-integrations)
if you think this integration is out-of-date.
> *Integration last updated: **{INTEGRATION_LAST_UPDATED}***
```"""


def timestamp(p, key: str) -> str | None:
    """A millisecond Unix time as Zulip prints the datetime (str())."""
    value = p.get(key, "N/A")
    if value == "N/A":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise AnomalousPayload()
    return str(datetime.fromtimestamp(value / 1000, tz=timezone.utc))


def status_of(p, times: dict[str, str | None]) -> str:
    """What happened, read from which timestamp equals the update's."""
    updated = times["UPDATED"]
    if not updated:
        raise UnsupportedEvent(p.get("title", "No title."))
    for status, key in (("ACKNOWLEDGED", "ACKNOWLEDGED"), ("ACTIVATED", "CREATED"), ("CLOSED", "CLOSED")):
        if times[key] and updated == times[key]:
            return status
    return "UPDATED"


def custom_fields(p) -> str:
    lines = ""
    for key, value in (p.get("zulipCustomFields") or {}).items():
        name = key.capitalize()
        scalar = (int, float, str, type(None))
        if isinstance(value, list) and all(isinstance(v, scalar) for v in value):
            lines += f"|{name}: {', '.join(f'**`{v}`**' for v in value)}|\n"
        elif isinstance(value, scalar):
            lines += f"|{name}: **{value}**|\n"
        else:
            lines += (f"|*The **{name}** contains [unsupported field](/integrations/doc/newrelic#displaying-custom-fields)"
                      " format.* |\n")
    return lines


def format_issue(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    if not all(key in p for key in ESSENTIAL_FIELDS):
        return "Incident alerts", FALLBACK
    times = {name: timestamp(p, key) for name, key in TIMESTAMPS.items()}
    priority, state = p.get("priority"), p.get("state", "UPDATED")
    if priority not in PRIORITIES or state not in INCIDENT_STATES:
        raise AnomalousPayload()
    url = p.get("issueUrl", DEFAULT_URL)
    conditions = ", ".join(f"**`{c}`**" for c in p.get("alertConditionNames", ["Unknown condition"]))
    policies = ", ".join(f"**`{c}`**" for c in p.get("alertPolicyNames", ["Unknown policy"]))
    header = (f"{PRIORITIES[priority]} {priority} **priority [issue]({url}) has been **{status_of(p, times)}** at** "
              f"<time: {times['UPDATED']} >")
    body = (f"\n**[{p.get('title', 'No title.')}]({url})**\n\n| :file:  **Incident details**  |\n|:--------|\n"
            f"|:checkbox: Alert policy: {policies}|\n|:spiral_notepad: Conditions: {conditions}|\n"
            f"|:warning: Total incidents: **{p['totalIncidents']}**|\n"
            f"|:clock: Incident created at: <time: {times['CREATED']} > |\n")
    if p.get("owner") is not None:
        body += f"|:silhouette:  Acknowledged by **{p['owner']}**|\n"
    body += custom_fields(p)
    return f"{state} {priority} priority".title(), f"```spoiler {header}\n{body}\n```"


def find_event(hook: WebhookRequest) -> str:
    """The issue's state, for only_events/exclude_events."""
    return str(hook.payload.get("state", "UPDATED"))


INTEGRATION = Integration(
    name="newrelic",
    display_name="NewRelic",
    description="New Relic issues: created, activated, acknowledged and closed.",
    find_event=find_event,
    formatters={state: format_issue for state in [*INCIDENT_STATES, "UPDATED"]},
)
