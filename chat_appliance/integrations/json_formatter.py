"""JSON formatter: any JSON body, posted as a highlighted code block (Zulip's "json")."""

import json

from chat_appliance.integrations.base import Integration, WebhookRequest, always


def format_payload(request: WebhookRequest) -> tuple[str, str]:
    """The payload as Zulip shows it: json.dumps with an indent of 2 in a ```json block (a
    longer fence when the text itself holds three backticks)."""
    text = json.dumps(request.payload, indent=2)
    fence = "```"
    while fence in text:
        fence += "`"
    return "JSON", f"{fence}json\n{text}\n{fence}"


INTEGRATION = Integration(
    name="json",
    display_name="JSON",
    description="Any JSON payload, shown as a code block.",
    find_event=always("json"),
    formatters={"json": format_payload},
)
