"""PagerDuty: incidents triggered, acknowledged, assigned, escalated and resolved, from the three
generations of PagerDuty webhooks (V1 and V2 "messages" lists, V3 "event"). The topic is
"Incident <number>" (V3: "Incident <title> (#<number>)")."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest

V1_ACTIONS = {"incident.trigger": "triggered", "incident.acknowledge": "acknowledged",
              "incident.unacknowledge": "unacknowledged", "incident.resolve": "resolved",
              "incident.assign": "assigned", "incident.escalate": "escalated", "incident.delegate": "delineated"}
V2_ACTIONS = {"incident.trigger": "triggered", "incident.acknowledge": "acknowledged",
              "incident.resolve": "resolved", "incident.assign": "assigned"}
V3_ACTIONS = {"incident.triggered": "triggered", "incident.acknowledged": "acknowledged",
              "incident.unacknowledged": "unacknowledged", "incident.resolved": "resolved",
              "incident.reassigned": "reassigned"}


def agent(name: str, url: str) -> str:
    return f"[{name}]({url})"


def quoted(text: str) -> str:
    return f"``` quote\n{text}\n```"


def email_user(email: str) -> str:
    return email.rsplit("@", 1)[0]


def v1_fields(message) -> dict:
    incident = message["data"]["incident"]
    fields = {"action": V1_ACTIONS[message["type"]], "incident_num_title": incident["incident_number"],
              "incident_url": incident["html_url"], "service_name": incident["service"]["name"],
              "service_url": incident["service"]["html_url"], "assignee_info": "nobody"}
    if incident.get("assigned_to_user"):
        user = incident["assigned_to_user"]
        fields["assignee_info"] = agent(email_user(user["email"]), user["html_url"])
    if incident.get("resolved_by_user"):
        user = incident["resolved_by_user"]
        fields["agent_info"] = agent(email_user(user["email"]), user["html_url"])
    summary = incident.get("trigger_summary_data") or {}
    lines = [text for text in (summary.get("subject", ""), summary.get("description", "")) if text]
    fields["trigger_message"] = quoted("\n".join(lines))
    return fields


def v2_fields(message) -> dict:
    incident = message["incident"]
    fields = {"action": V2_ACTIONS[message["event"]], "incident_num_title": incident["incident_number"],
              "incident_url": incident["html_url"], "service_name": incident["service"]["name"],
              "service_url": incident["service"]["html_url"], "assignee_info": "nobody"}
    if incident["assignments"]:
        assignee = incident["assignments"][0]["assignee"]
        fields["assignee_info"] = agent(assignee["summary"], assignee["html_url"])
    changed_by = incident.get("last_status_change_by")
    if changed_by is not None:
        fields["agent_info"] = agent(changed_by["summary"], changed_by["html_url"])
    if incident.get("description") is not None:
        fields["trigger_message"] = quoted(incident["description"])
    return fields


def v3_fields(event) -> dict:
    data = event["data"]
    fields = {"action": V3_ACTIONS[event["event_type"]], "incident_url": data["html_url"],
              "incident_num_title": f"{data['title']} (#{data['number']})",
              "service_name": data["service"]["summary"], "service_url": data["service"]["html_url"],
              "assignee_info": "nobody", "trigger_message": ""}
    if data["assignees"]:
        fields["assignee_info"] = agent(data["assignees"][0]["summary"], data["assignees"][0]["html_url"])
    if event.get("agent") is not None:
        fields["agent_info"] = agent(event["agent"]["summary"], event["agent"]["html_url"])
    return fields


def message_for(kind: str, f: dict) -> tuple[str, str]:
    link = f"[{f['incident_num_title']}]({f['incident_url']})"
    if kind in ("incident.trigger", "incident.triggered", "incident.unacknowledge", "incident.unacknowledged"):
        body = (f"Incident {link} {f['action']} by [{f['service_name']}]({f['service_url']}) "
                f"(assigned to {f['assignee_info']}).\n\n{f['trigger_message']}")
    elif kind in ("incident.resolve", "incident.resolved"):
        by = f" by {f['agent_info']}" if "agent_info" in f else ""
        body = f"Incident {link} resolved{by}.\n\n{f['trigger_message']}"
    elif kind in ("incident.assign", "incident.reassigned"):
        body = f"Incident {link} {f['action']} to {f['assignee_info']}.\n\n{f['trigger_message']}"
    else:
        body = f"Incident {link} {f['action']} by {f['assignee_info']}.\n\n{f['trigger_message']}"
    return f"Incident {f['incident_num_title']}", body.strip()


def format_pagerduty(hook: WebhookRequest) -> list[tuple[str, str]]:
    p = hook.payload
    messages = p.get("messages")
    found = []
    if messages:
        for message in messages:  # V1: each message has a "type"
            kind = message.get("type")
            if kind is None:
                break
            if kind not in V1_ACTIONS:
                raise UnsupportedEvent(kind)
            found.append(message_for(kind, v1_fields(message)))
        for message in messages:  # V2: each message has an "event"
            kind = message.get("event")
            if kind is None:
                break
            if kind not in V2_ACTIONS:
                raise UnsupportedEvent(kind)
            found.append(message_for(kind, v2_fields(message)))
    elif "event" in p:  # V3
        kind = p["event"].get("event_type")
        if kind not in V3_ACTIONS:
            raise UnsupportedEvent(kind)
        found.append(message_for(kind, v3_fields(p["event"])))
    return found


def find_event(hook: WebhookRequest) -> str:
    """The action of the (first) incident message, for only_events/exclude_events."""
    p = hook.payload
    first = (p.get("messages") or [{}])[0]
    if first.get("type") in V1_ACTIONS:
        return V1_ACTIONS[first["type"]]
    if first.get("event") in V2_ACTIONS:
        return V2_ACTIONS[first["event"]]
    return V3_ACTIONS.get(str((p.get("event") or {}).get("event_type")), "triggered")


INTEGRATION = Integration(
    name="pagerduty",
    display_name="PagerDuty",
    description="PagerDuty incidents: triggered, acknowledged, assigned, escalated and resolved (webhooks V1 to V3).",
    find_event=find_event,
    formatters={action: format_pagerduty for action in
                {*V1_ACTIONS.values(), *V2_ACTIONS.values(), *V3_ACTIONS.values()}},
)
