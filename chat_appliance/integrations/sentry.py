"""Sentry: events (an exception, with the lines around where it was raised, or a message) and
issues (created, assigned, resolved, ignored), from an internal integration's alert rules or
from the plain webhooks plugin, whose payload is read the same way. The topic is the event's
or issue's title."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import urljoin

from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest, global_time

# Sentry's platform -> the code block's language.
SYNTAX_HIGHLIGHT_AS = {"go": "go", "java": "java", "javascript": "javascript", "node": "javascript",
                       "python": "python3", "ruby": "ruby"}



def traceback_lines(lines: list[str] | None) -> str:
    return "".join("\n" if line == "" else f"     {line}\n" for line in lines or [])


def exception_frame(event):
    """The frame of the file where the exception was raised, if its line is known."""
    filename = event["metadata"].get("filename")
    stacktrace = next((value["stacktrace"] for value in reversed(event["exception"]["values"])
                       if "stacktrace" in value), None)
    if not (stacktrace and filename):
        return None
    frame = next((f for f in reversed(stacktrace["frames"]) if f.get("filename") == filename), None)
    return frame if frame and frame.get("context_line") is not None else None


def event_message(event) -> tuple[str, str]:
    title = event["title"]
    platform = event["platform"]
    # The Raven SDKs are deprecated; Sentry's sample event still says it comes from one.
    if platform == "python" and int(event["version"]) < 7 and title != "This is an example Python exception":
        raise UnsupportedEvent("Raven SDK")
    head = f"[{title}]({event['web_url']})\n```quote\n**level:** {event['level']}\n" \
           f"**timestamp:** {global_time(event['datetime'])}\n"
    if "exception" in event:
        body = f"**New exception:** {head}**filename:** {event['metadata'].get('filename')}\n```\n"
        frame = exception_frame(event)
        if frame is not None:
            body += (f"\nTraceback:\n```{SYNTAX_HIGHLIGHT_AS.get(platform, '')}\n"
                     f"{traceback_lines(frame.get('pre_context'))}---> {frame['context_line']}\n"
                     f"{traceback_lines(frame.get('post_context'))}```\n")
        return title, body
    if "logentry" in event:
        return title, f"**New message event:** {head}```\n"
    raise UnsupportedEvent("unknown-event type")


def issue_message(action: str, issue, actor) -> tuple[str, str]:
    title = issue["title"]
    assigned = issue["assignedTo"]
    if assigned:
        assignee = f"team {assigned['name']}" if assigned["type"] == "team" else assigned["name"]
    else:
        assignee = "No one"
    if action == "created":
        return title, (f"**New issue created:** {title}\n```quote\n**level:** {issue['level']}\n"
                       f"**timestamp:** {global_time(issue['lastSeen'])}\n**assignee:** {assignee}\n```")
    if action == "resolved":
        return title, f"Issue **{title}** was marked as resolved by **{actor['name']}**."
    if action == "assigned":
        return title, f"Issue **{title}** has now been assigned to **{assignee}** by **{actor['name']}**."
    if action == "ignored":
        return title, f"Issue **{title}** was ignored by **{actor['name']}**."
    raise UnsupportedEvent(f"{action} action")


def deprecated_message(p) -> tuple[str, str]:
    return (f"{p.get('project_name')}",
            f"New [issue]({p.get('url')}) (level: {p['level'].upper()}):\n\n``` quote\n{p.get('message')}\n```")


def plugin_data(p):
    """The webhooks plugin's payload, shaped as an integration's `data`: the event's link and time
    are made from its URL and timestamp. None for the oldest payloads, which have no event id."""
    event = p.get("event") or {}
    if not event.get("event_id"):
        return None
    event["web_url"] = urljoin(p["url"], f"events/{event['event_id']}/")
    timestamp = event.get("timestamp", event["received"])
    event["datetime"] = datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="microseconds")
    return p


def format_sentry(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    data = p.get("data")
    if data is None:
        data = plugin_data(p)
    if not data:
        return deprecated_message(p)
    if "event" in data:
        return event_message(data["event"])
    if "issue" in data:
        return issue_message(p["action"], data["issue"], p["actor"])
    raise UnsupportedEvent(str(list(data.keys())))


INTEGRATION = Integration(
    name="sentry",
    display_name="Sentry",
    description="Sentry's errors and messages (with the failing lines) and issue changes.",
    find_event=lambda hook: "sentry",
    formatters={"sentry": format_sentry},
)
