"""Splunk: an alert of a saved search, in the search's topic; fields Splunk leaves out are
named as missing rather than refused."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, WebhookRequest, always

# Zulip's topic length: a longer search name is cut with "..." here, as Zulip cuts it.
MAX_TOPIC_LENGTH = 60


def format_alert(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    result = p.get("result", {})
    search = p.get("search_name", "Missing search_name")
    topic = f"{search[:MAX_TOPIC_LENGTH - 3]}..." if len(search) >= MAX_TOPIC_LENGTH else search
    return topic, (f"Splunk alert from saved search:\n"
                   f"* **Search**: [{search}]({p.get('results_link', 'Missing results_link')})\n"
                   f"* **Host**: {result.get('host', 'Missing host')}\n"
                   f"* **Source**: `{result.get('source', 'Missing source')}`\n"
                   f"* **Raw**: `{result.get('_raw', 'Missing _raw')}`")


INTEGRATION = Integration(
    name="splunk",
    display_name="Splunk",
    description="Splunk saved search alerts.",
    find_event=always("alert"),
    formatters={"alert": format_alert},
)
