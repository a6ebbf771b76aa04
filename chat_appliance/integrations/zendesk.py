"""Zendesk: a trigger's notification to a URL target, whose message is the Zendesk user's own
template, in the topic "#<ticket id>: <ticket title>". Zendesk posts form fields and
authenticates with HTTP Basic (the bot's email and API key)."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, WebhookRequest, always, missing_argument

# Zulip's topic length: the title is cut with "..." to fit.
MAX_TOPIC_LENGTH = 60


def format_ticket(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    for name in ("ticket_title", "ticket_id", "message"):
        if name not in p:
            raise missing_argument(name)
    topic = f"#{p['ticket_id']}: {p['ticket_title']}"
    if len(topic) > MAX_TOPIC_LENGTH:
        topic = topic[: MAX_TOPIC_LENGTH - 3] + "..."
    return topic, p["message"]


INTEGRATION = Integration(
    name="zendesk",
    display_name="Zendesk",
    description="Zendesk ticket notifications, in the message template set in the Zendesk trigger.",
    find_event=always("ticket"),
    formatters={"ticket": format_ticket},
    form_parameters=True,
    options={"ticket_title": "The ticket's title (`{{ ticket.title }}` in Zendesk's URL).",
             "ticket_id": "The ticket's id (`{{ ticket.id }}`)."},
)
