"""What every integration shares: its description (Integration), what a formatter is handed
(WebhookRequest), and the outcomes other than a message (the errors below).

An integration is one module of this package that defines INTEGRATION. It says how the event
type is found (a header, a payload field, or a function), has one formatter per event type it
posts, and lists the events it knowingly ignores. A formatter takes the WebhookRequest and returns
(topic, content in Zulip Markdown), a list of such pairs, or None to post nothing. The HTTP side (api/webhooks.py) does
the rest in one place for all: authentication, the body, the topic= override, only_events= and
exclude_events=, the unsupported-event answer and the send.
"""

from __future__ import annotations

import fnmatch
from datetime import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

class WebhookError(Exception):
    """An outcome other than a message; `integration` is the display name ("GitHub")."""

    def __init__(self, integration: str = "(unknown)") -> None:
        super().__init__()
        self.integration = integration


class UnsupportedEvent(WebhookError):
    """An event the service sends that has no formatter here: answered with success and a note,
    as Zulip does, so that the service does not retry or disable the hook."""

    def __init__(self, event: str, integration: str = "(unknown)") -> None:
        super().__init__(integration)
        self.event = event

    def message(self) -> str:
        return f"The '{self.event}' event isn't currently supported by the {self.integration} webhook; ignoring"


class AnomalousPayload(WebhookError):
    """A payload this integration cannot read: not from the service, or not in its format."""

    def message(self) -> str:
        return f"Unable to parse request: Did {self.integration} generate this event?"


class InvalidPayload(WebhookError):
    """A payload that lacks what the integration needs, answered with a plain 400 and `text`
    (Zulip's "Invalid payload" for UptimeRobot)."""

    def __init__(self, text: str = "Invalid payload", code: str = "BAD_REQUEST", **data: Any) -> None:
        super().__init__()
        self.text = text
        self.code = code
        self.data = data

    def message(self) -> str:
        return self.text


def missing_argument(name: str) -> InvalidPayload:
    """Zulip's error for a parameter an integration requires (Zendesk's ticket_id)."""
    return InvalidPayload(f"Missing '{name}' argument", code="REQUEST_VARIABLE_MISSING", var_name=name)


class MissingEventHeader(WebhookError):
    """The header that names the event type is absent: usually the URL of another integration."""

    def __init__(self, header: str, integration: str = "(unknown)") -> None:
        super().__init__(integration)
        self.header = header

    def message(self) -> str:
        return f"Missing the HTTP event header '{self.header}'"


@dataclass(frozen=True)
class DirectMessage:
    """What a formatter returns for a message to one member rather than to the channel (TeamCity's
    personal builds go to whoever started them)."""

    user_id: int
    content: str


@dataclass
class WebhookRequest:
    """What a formatter may read: the JSON payload, the request's headers and query parameters,
    whether the URL chose the topic (git integrations then name the item in the message), and a
    way to show an organization member's full name for an email a payload mentions."""

    payload: Any
    headers: Any  # a case-insensitive mapping of the request's headers
    params: Mapping[str, str]
    topic_given: bool = False
    full_name_for_email: Callable[[str], str | None] = lambda email: None
    # The active member whose full name is this, or whose email starts with it: Zulip's guess at
    # who a service's user name means (TeamCity). Their id, or None.
    guess_user: Callable[[str], int | None] = lambda name: None
    event: str = ""

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def flag(self, name: str, default: bool) -> bool:
        """A boolean URL option, as Zulip's JSON-encoded booleans ("true"/"false")."""
        value = self.params.get(name)
        if value is None:
            return default
        return value.strip().lower() not in ("false", "0", "no", "off", "")

    def branch_wanted(self, branch: str) -> bool:
        """True unless `branches=` lists others: pushes to an unlisted branch post nothing."""
        allowed = self.params.get("branches")
        if allowed is None:
            return True
        return branch in {name.strip() for name in allowed.split(",")}


# The formatters key of an integration that formats every event name the same way (Opsgenie's
# actions include custom ones).
ANY_EVENT = "*"


def always(value: str) -> Callable[[WebhookRequest], str]:
    """An event finder for a service with a single kind of event."""
    return lambda request: value


@dataclass(frozen=True)
class Integration:
    """One integration, as the registry, the HTTP view and docs/integrations.md see it.

    name: the last part of /api/v1/external/<name>. display_name: as the service is written in
    Zulip's messages ("GitHub"). event_header: the header that names the event, if any (its
    absence is a 400, as in Zulip). find_event: how the event type is found when the header's
    value alone is not it (a payload field, an action); it may raise UnsupportedEvent, or return
    None for an event knowingly ignored. formatters: event type -> formatter. ignored_events:
    events knowingly ignored (shell-style patterns). options: URL parameters this integration
    reads besides the common ones, with what they do. description: one line for
    docs/integrations.md. unquote_url_parameters: the service double-escapes the URL's stream= and topic=.
    answers_head_requests: the service checks the URL with a HEAD request before posting.
    slack_compatible: answer as Slack does, {"ok": true} and {"ok": false, "error": ...}, since
    scripts written for Slack read that. form_parameters: the payload is the request's parameters
    (query string and form fields), for services that post a form rather than JSON (Zendesk).
    """

    name: str
    display_name: str
    formatters: Mapping[str, Callable[[WebhookRequest], Any]]
    event_header: str | None = None
    find_event: Callable[[WebhookRequest], str | None] | None = None
    ignored_events: frozenset[str] = frozenset()
    options: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    unquote_url_parameters: bool = False
    answers_head_requests: bool = False
    slack_compatible: bool = False
    form_parameters: bool = False
    doc_url: str = ""

    def event_of(self, request: WebhookRequest) -> str | None:
        """The event type of this request, or None when it is one to ignore."""
        header_value = None
        if self.event_header is not None:
            header_value = request.header(self.event_header)
            if header_value is None:
                raise MissingEventHeader(self.event_header, self.display_name)
        event = self.find_event(request) if self.find_event is not None else header_value
        if event is None or self.ignores(event):
            return None
        return event

    def formatter_for(self, event: str) -> Callable[[WebhookRequest], Any] | None:
        """The event's formatter; ANY_EVENT's for a service whose event names are open-ended."""
        return self.formatters.get(event) or self.formatters.get(ANY_EVENT)

    def ignores(self, event: str) -> bool:
        return any(fnmatch.fnmatchcase(event, pattern) for pattern in self.ignored_events)

    def documentation_url(self) -> str:
        return self.doc_url or f"https://zulip.com/integrations/doc/{self.name}"


def matches_any(event: str, patterns: list[str]) -> bool:
    """Zulip's only_events/exclude_events matching: Unix shell-style wildcards."""
    return any(fnmatch.fnmatch(event, pattern) for pattern in patterns)


def global_time(value: str) -> str:
    """Zulip's global time, <time:ISO 8601>, which each reader sees in their own time zone. The
    offset the service gave is kept, as Zulip keeps it."""
    return f"<time:{datetime.fromisoformat(value).isoformat(timespec='seconds')}>"
