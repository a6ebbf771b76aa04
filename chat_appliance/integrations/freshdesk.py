"""Freshdesk: tickets created (a Dispatch'r rule) and changed (an Observer rule: status, priority,
notes), from the JSON content Zulip documents for the rule's "Trigger Webhook" action, in the
ticket's topic "#<id>: <subject>". Freshdesk signs in with HTTP Basic credentials."""

from __future__ import annotations

import re
import subprocess
import sys

from chat_appliance.integrations.base import Integration, WebhookRequest

# Freshdesk's webhook gives a status or priority by number only. These are the names Zulip shows
# (Freshdesk's defaults, then the custom statuses of the helpdesk Zulip's integration was written
# for); a number past the list is shown as the number.
STATUSES = ["", "", "Open", "Pending", "Resolved", "Closed", "Waiting on Customer", "Job Application", "Monthly"]
PRIORITIES = ["", "Low", "Medium", "High", "Urgent"]
NAMES = {"status": STATUSES, "priority": PRIORITIES}

# How long html2text may take on one description.
HTML2TEXT_TIMEOUT_SECONDS = 10


def html_to_markdown(html: str) -> str:
    """The description, which Freshdesk sends as HTML, in Markdown as Zulip writes it: html2text's
    output, with its `![](.../name.png?123)` images turned into `[name.png](.../name.png)` links.
    html2text is GPL-licensed, so it runs in its own process (as in Zulip) rather than imported."""
    markdown = subprocess.run([sys.executable, "-m", "html2text"], input=html.encode(), capture_output=True,
                              check=True, timeout=HTML2TEXT_TIMEOUT_SECONDS).stdout.decode()
    return re.sub(r"!\[\]\((\S*)/(\S*)\?(\S*)\)", r"[\2](\1/\2)", markdown).strip()


def parse_event(triggered: str) -> list[str]:
    """Freshdesk's {{triggered_event}}, which is not JSON: "{ticket_action:created}",
    "{note_type:private}" or "{status:{from:4,to:6}}" -> ["status", "Resolved", "Waiting on Customer"]."""
    parts = triggered.replace("{", "").replace("}", "").replace(",", ":").split(":")
    if len(parts) == 2:
        return parts
    field, _from, old, _to, new = parts
    names = NAMES.get(field, [])

    def name(index: int) -> str:
        return names[index] if index < len(names) else str(index)

    return [field, name(int(old)), name(int(new))] if names else [field, "", ""]


def requester(ticket) -> str:
    return f"{ticket['requester_name']} <{ticket['requester_email']}>"


def ticket_link(ticket) -> str:
    return f"[ticket #{ticket['ticket_id']}]({ticket['ticket_url']})"


def format_ticket_event(hook: WebhookRequest) -> tuple[str, str]:
    ticket = hook.payload["freshdesk_webhook"]
    event = parse_event(ticket["triggered_event"])
    topic = f"#{ticket['ticket_id']}: {ticket['ticket_subject']}"
    if event[1] == "created":
        body = (f"{requester(ticket)} created {ticket_link(ticket)}:\n\n``` quote\n"
                f"{html_to_markdown(ticket['ticket_description'])}\n```\n\n"
                f"* **Type**: {ticket['ticket_type']}\n* **Priority**: {ticket['ticket_priority']}\n"
                f"* **Status**: {ticket['ticket_status']}")
    elif event[0] == "note_type":
        body = f"{requester(ticket)} added a {event[1]} note to {ticket_link(ticket)}."
    else:
        body = f"{requester(ticket)} updated {ticket_link(ticket)}:\n\n* **{event[0].capitalize()}**: {event[1]} -> {event[2]}"
    return topic, body


def find_event(hook: WebhookRequest) -> str | None:
    """created, note, status or priority; None (nothing posted, as in Zulip) for other changes."""
    event = parse_event(hook.payload["freshdesk_webhook"]["triggered_event"])
    if event[1] == "created":
        return "created"
    if event[0] == "note_type":
        return "note"
    return event[0] if event[0] in NAMES else None


INTEGRATION = Integration(
    name="freshdesk",
    display_name="Freshdesk",
    description="Freshdesk tickets: created, status and priority changes, and notes, in the ticket's topic.",
    find_event=find_event,
    formatters={event: format_ticket_event for event in ("created", "note", "status", "priority")},
    doc_url="https://zulip.com/integrations/doc/freshdesk",
)
