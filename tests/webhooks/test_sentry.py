"""Sentry's integration: each payload Sentry sends (tests/data/webhooks/sentry/, written from
Sentry's documented payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

S = "https://sentry.io/organizations/tidewater"
TRACEBACK = """
Traceback:
```python3
     def poll(station):
         reading = fetch(station)

--->     raise ValueError(f"bad reading from {station}")

     if __name__ == "__main__":
         poll("B7")
```"""
TITLE = "ValueError: bad reading from B7"

CASES = [
    Case("event_for_exception_python", TITLE,
         f"**New exception:** [{TITLE}]({S}/issues/5012345678/events/4c2b6d1e8f9a4b7c9d0e1f2a3b4c5d6e/)\n"
         "```quote\n**level:** error\n**timestamp:** <time:2026-11-20T08:15:30+00:00>\n**filename:** worker.py\n```\n"
         + TRACEBACK),
    Case("event_for_exception_without_frame", "TypeError: station.read is not a function",
         "**New exception:** [TypeError: station.read is not a function]"
         f"({S}/issues/5012345679/events/aa2b6d1e8f9a4b7c9d0e1f2a3b4c5d6e/)\n"
         "```quote\n**level:** error\n**timestamp:** <time:2026-11-20T09:00:00+00:00>\n"
         "**filename:** /static/js/app.min.js\n```"),
    Case("event_for_message_golang", "Tide table refresh took 42s",
         f"**New message event:** [Tide table refresh took 42s]({S}/issues/5012345680/events/"
         "bb2b6d1e8f9a4b7c9d0e1f2a3b4c5d6e/)\n```quote\n**level:** warning\n"
         "**timestamp:** <time:2026-11-21T10:20:30+00:00>\n```"),
    Case("webhook_event_for_exception_python", "IndexError: list index out of range",
         "**New exception:** [IndexError: list index out of range](https://tidewater.sentry.io/issues/5012345681/events/"
         "cc2b6d1e8f9a4b7c9d0e1f2a3b4c5d6e/)\n```quote\n**level:** error\n"
         "**timestamp:** <time:2026-11-20T09:15:30+00:00>\n**filename:** worker.py\n```\n"
         + TRACEBACK),
    Case("issue_created", TITLE,
         f"**New issue created:** {TITLE}\n```quote\n**level:** error\n"
         "**timestamp:** <time:2026-11-20T08:15:30+00:00>\n**assignee:** No one\n```"),
    Case("issue_assigned_to_individual", TITLE,
         f"Issue **{TITLE}** has now been assigned to **Tomas Berg** by **Rosa Lindqvist**."),
    Case("issue_assigned_to_team", TITLE,
         f"Issue **{TITLE}** has now been assigned to **team on-call** by **Rosa Lindqvist**."),
    Case("issue_resolved", TITLE, f"Issue **{TITLE}** was marked as resolved by **Rosa Lindqvist**."),
    Case("issue_ignored", TITLE, f"Issue **{TITLE}** was ignored by **Rosa Lindqvist**."),
    Case("deprecated_exception_message", "tides",
         "New [issue](https://sentry.io/tidewater/tides/issues/98765/) (level: ERROR):\n\n``` quote\n"
         "ValueError: bad reading from B7\n```"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sentry_event(org, flask_client, case):
    """Does this Sentry payload post Zulip's topic and message?"""
    check_case(org, flask_client, "sentry", case)


@pytest.mark.parametrize("fixture,event", [("raven_sdk_python_event", "Raven SDK"),
                                           ("issue_archived", "archived action")])
def test_sentry_unsupported(org, flask_client, fixture, event):
    """Are events from the deprecated Raven SDK and issue actions Zulip does not handle answered
    with its success note, posting nothing?"""
    body = check_ignored(org, flask_client, "sentry", fixture)
    assert body["msg"] == f"The '{event}' event isn't currently supported by the Sentry webhook; ignoring"
