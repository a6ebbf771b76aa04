"""Travis CI: a build's status for a push or a pull request, in the topic "builds". Travis posts
its JSON in a form field, `payload`."""

from __future__ import annotations

from chat_appliance.integrations.base import AnomalousPayload, Integration, WebhookRequest

GOOD_STATUSES = ["Passed", "Fixed"]
BAD_STATUSES = ["Failed", "Broken", "Still Failing", "Errored", "Canceled"]
PENDING_STATUSES = ["Pending"]
FIELDS = ("author_name", "status_message", "compare_url", "build_url", "type")


def format_build(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    if not isinstance(p, dict) or any(not isinstance(p.get(field), str) for field in FIELDS):
        raise AnomalousPayload()
    status = p["status_message"]
    if status in GOOD_STATUSES:
        emoji = ":thumbs_up:"
    elif status in BAD_STATUSES:
        emoji = ":thumbs_down:"
    elif status in PENDING_STATUSES:
        emoji = ":counterclockwise:"
    else:
        emoji = f"(No emoji specified for status '{status}'.)"
    return "builds", (f"Author: {p['author_name']}\nBuild status: {status} {emoji}\n"
                      f"Details: [changes]({p['compare_url']}), [build log]({p['build_url']})")


def find_event(hook: WebhookRequest) -> str:
    """push or pull_request, for only_events/exclude_events."""
    p = hook.payload
    return str(p.get("type")) if isinstance(p, dict) else "push"


INTEGRATION = Integration(
    name="travis",
    display_name="Travis",
    description="Travis CI build statuses for pushes and pull requests.",
    find_event=find_event,
    formatters={"push": format_build, "pull_request": format_build, "api": format_build, "cron": format_build},
)
