"""Jira: the payload's webhookEvent names the event (jira:issue_created, comment_created, ...);
an issue update is told apart by its issue_event_type_name. Topics are "KEY-12: summary". Jira's
wiki markup in comments is turned into Markdown, and an assignee named by email is shown by
their full name when they are a member of the organization.

Jira double-escapes the URL it was given, so stream= and topic= are unquoted."""

from __future__ import annotations

import re
import string
from typing import Any

from chat_appliance.integrations.base import AnomalousPayload, Integration, UnsupportedEvent, WebhookRequest

IGNORED_EVENTS = frozenset({"attachment_created", "issuelink_created", "issuelink_deleted", "jira:version_released",
                            "jira:worklog_updated", "sprint_closed", "sprint_started", "worklog_created",
                            "worklog_updated"})

# How much of an unresolvable account id a mention shows.
MAX_ACCOUNT_ID_LENGTH = 15


def get_in(payload: Any, keys: list[str], default: Any = "") -> Any:
    """payload[k1][k2]..., or `default` when any step is missing: Jira leaves out what is empty."""
    try:
        for key in keys:
            payload = payload[key]
    except (KeyError, TypeError, IndexError):
        return default
    return payload


def convert_jira_markup(content: str) -> str:
    """Jira's wiki markup as Zulip Markdown, as far as Zulip converts it."""
    content = re.sub(r"\*([^\*]+)\*", r"**\1**", content)  # *bold*
    content = re.sub(r"{{([^\*]+?)}}", r"`\1`", content)  # {{monospace}}
    content = re.sub(r"bq\. (.*)", r"> \1", content)  # bq. a quoted line
    content = re.sub(re.compile(r"{quote}(.*?){quote}", re.DOTALL), r"~~~ quote\n\1\n~~~", content)
    content = re.sub(re.compile(r"{noformat}(.*?){noformat}", re.DOTALL), r"~~~\n\1\n~~~", content)
    content = re.sub(re.compile(r"{code[^\n]*}(.*?){code}", re.DOTALL), r"~~~\n\1\n~~~", content)
    # [https://example.com] and [title|https://example.com]
    content = re.sub(r"\[([^\|~]+?)\]", r"[\1](\1)", content)
    content = re.sub(re.compile(r"\[(?:(?P<title>[^|~]+)\|)(?P<url>[^\]]*)\]"), r"[\g<title>](\g<url>)", content)
    # [~accountid:...] mentions need Jira's API to be named; without it Zulip shows the id's start.
    content = re.sub(r"\[~accountid:([\w\-:]+)\]",
                     lambda m: f"**unknown Jira user ({m.group(1)[: MAX_ACCOUNT_ID_LENGTH - 3]}...)**", content)
    # Jira escapes "!" twice.
    return content.replace("\\!", "!")


def issue_id(p) -> str:
    if "issue" not in p:
        # Old Jira versions send comment events without the issue: its internal number stands in.
        return p["comment"]["self"].split("/")[-3]
    return get_in(p, ["issue", "key"])


def issue_title(p) -> str:
    if "issue" not in p:
        return "Upgrade Jira to get the issue title here."
    return get_in(p, ["issue", "fields", "summary"])


def issue_string(p, key: str | None = None, with_title: bool = False) -> str:
    """A link to the issue's page, guessed from its REST URL (.../rest/api/... -> .../browse/KEY)."""
    key = issue_id(p) if key is None else key
    text = f"{key}: {issue_title(p)}" if with_title else key
    base_url = re.match(r"(.*)\/rest\/api/.*", get_in(p, ["issue", "self"]))
    if base_url and len(base_url.groups()):
        return f"[{text}]({base_url.group(1)}/browse/{key})"
    return text


def issue_author(p) -> str:
    return get_in(p, ["user", "displayName"])


def assignee_mention(hook: WebhookRequest, email: str) -> str:
    if email == "":
        return ""
    return f"**{hook.full_name_for_email(email) or email}**"


def update_sub_event(p) -> str:
    sub_event = p.get("issue_event_type_name", "")
    if sub_event == "":
        if p.get("comment"):
            return "issue_commented"
        if p.get("transition"):
            return "issue_transited"
    return sub_event


def change_line(content: str, field: str | None, from_value: str | None, to_value: str | None) -> str:
    content += f"* Changed {field}"
    if from_value:
        content += f" from **{from_value}**"
    if to_value:
        content += f" to {to_value}\n"
    return content


def issue_updated(hook: WebhookRequest) -> str:
    # Reassignments, comments, transitions and edits all arrive as jira:issue_updated.
    p = hook.payload
    key = get_in(p, ["issue", "key"])
    issue = issue_string(p, key, True)
    mention = assignee_mention(hook, get_in(p, ["issue", "fields", "assignee", "emailAddress"], ""))
    blurb = f" (assigned to {mention})" if mention != "" else ""
    sub_event = update_sub_event(p)
    if "comment" in sub_event:
        verbs = {"issue_commented": "commented on", "issue_comment_edited": "edited a comment on"}
        verb = verbs.get(sub_event, "deleted a comment from")
        author = p["comment"]["author"]["displayName"] if p.get("webhookEvent") == "comment_created" else issue_author(p)
        content = f"{author} {verb} {issue}{blurb}"
        comment = get_in(p, ["comment", "body"])
        if comment:
            return f"{content}:\n\n``` quote\n{convert_jira_markup(comment)}\n```"
        return f"{content}."
    content = f"{issue_author(p)} updated {issue}{blurb}:\n\n"
    changelog = p.get("changelog")
    if changelog:
        for item in changelog.get("items"):
            field = item.get("field")
            if field == "assignee" and mention != "":
                target = mention
            else:
                target = f"**{item.get('toString')}**"
            source = item.get("fromString")
            if target or source:
                content = change_line(content, field, source, target)
    elif sub_event == "issue_transited":
        source = get_in(p, ["transition", "from_status"])
        target = f"**{get_in(p, ['transition', 'to_status'])}**"
        content = change_line(content, "status", source, target)
    return content


def issue_created(hook: WebhookRequest) -> str:
    p = hook.payload
    return (f"{issue_author(p)} created {issue_string(p, with_title=True)}:\n\n"
            f"* **Priority**: {get_in(p, ['issue', 'fields', 'priority', 'name'])}\n"
            f"* **Assignee**: {get_in(p, ['issue', 'fields', 'assignee', 'displayName'], 'no one')}")


def issue_deleted(hook: WebhookRequest) -> str:
    p = hook.payload
    punctuation = "." if issue_title(p)[-1] not in string.punctuation else ""
    return f"{issue_author(p)} deleted {issue_string(p, with_title=True)}{punctuation}"


def comment_event(verb: str, strike: bool = False):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        comment = convert_jira_markup(get_in(p, ["comment", "body"]))
        if strike:
            comment = f"~~{comment}~~"
        return (f"{p['comment']['author']['displayName']} {verb} {issue_string(p, with_title=True)}\n"
                f"``` quote\n{comment}\n```\n")
    return body


BODIES = {
    "jira:issue_created": issue_created,
    "jira:issue_deleted": issue_deleted,
    "jira:issue_updated": issue_updated,
    "comment_created": comment_event("commented on"),
    "comment_updated": comment_event("updated their comment on"),
    "comment_deleted": comment_event("deleted their comment on", strike=True),
}


def formatter(event: str):
    def format_event(hook: WebhookRequest) -> tuple[str, str]:
        return f"{issue_id(hook.payload)}: {issue_title(hook.payload)}", BODIES[event](hook)
    return format_event


def find_event(hook: WebhookRequest) -> str | None:
    p = hook.payload
    if not isinstance(p, dict):
        raise AnomalousPayload()
    event = p.get("webhookEvent")
    if event is None and p.get("transition"):
        event = "jira:issue_updated"
    if event in IGNORED_EVENTS:
        return None
    if event is None:
        raise AnomalousPayload()
    if event not in BODIES:
        raise UnsupportedEvent(event)
    return event


INTEGRATION = Integration(
    name="jira",
    display_name="Jira",
    description="Issues created, updated, transitioned, commented on and deleted in Jira.",
    find_event=find_event,
    formatters={event: formatter(event) for event in BODIES},
    ignored_events=IGNORED_EVENTS,
    unquote_url_parameters=True,
)
