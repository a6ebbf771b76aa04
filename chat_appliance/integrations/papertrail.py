"""Papertrail: a saved search's new matches (at most four shown, then a link to the rest), in
the topic "logs". Papertrail posts its JSON in a form field, `payload`."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, InvalidPayload, WebhookRequest, always, global_time

# Matches quoted in one message; the search's page has the rest.
SHOWN_EVENTS = 4


def format_matches(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    if not isinstance(p, dict) or "events" not in p:
        raise InvalidPayload("Events key is missing from payload")
    search = p["saved_search"]
    lines = [f'[Search for "{search["name"]}"]({search["html_search_url"]}) found **{len(p["events"])}** matches:\n']
    for number, event in enumerate(p["events"]):
        lines.append(f"{global_time(event['received_at'])} - {event['source_name']} - {search['query']}:\n"
                     f"``` quote\n{event['message']}\n```")
        if number >= SHOWN_EVENTS - 1:
            lines.append(f"[See more]({search['html_search_url']})")
            break
    return "logs", "\n".join(lines)


INTEGRATION = Integration(
    name="papertrail",
    display_name="Papertrail",
    description="Papertrail saved search alerts.",
    find_event=always("alert"),
    formatters={"alert": format_matches},
)
