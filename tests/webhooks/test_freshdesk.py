"""Freshdesk's integration: ticket events from a Dispatch'r or Observer rule's webhook, with the
JSON content Zulip documents (tests/data/webhooks/freshdesk/), must give Zulip's topic and
message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

WHO = "Lotte Brandt <lotte@example.org>"
T318 = "[ticket #318](https://tidewater.freshdesk.com/helpdesk/tickets/318)"
TOPIC = "#318: Ferry tickets not arriving"

CASES = [
    Case("ticket_created", TOPIC,
         f"{WHO} created {T318}:\n\n``` quote\nI bought two ferry tickets this morning and the e-mail never came.\n```\n\n"
         "* **Type**: Incident\n* **Priority**: Medium\n* **Status**: Open"),
    Case("ticket_created_html", "#319: Wrong ⛴ departure time",
         f"{WHO} created [ticket #319](https://tidewater.freshdesk.com/helpdesk/tickets/319):\n\n``` quote\n"
         "The board at pier 2 shows the **08:15** ferry as leaving at 08:50. See [the\n"
         "timetable](https://tidewater.example/timetable).\n\n  \n\n"
         "[pier2_board.jpg](https://attachments.freshdesk.com/data/helpdesk/attachments/production/5521907/original/"
         "pier2_board.jpg)\n```\n\n* **Type**: Problem\n* **Priority**: Urgent\n* **Status**: Pending"),
    Case("status_changed", TOPIC, f"{WHO} updated {T318}:\n\n* **Status**: Open -> Waiting on Customer"),
    Case("custom_status_changed", TOPIC, f"{WHO} updated {T318}:\n\n* **Status**: Waiting on Customer -> 12"),
    Case("priority_changed", TOPIC, f"{WHO} updated {T318}:\n\n* **Priority**: Medium -> Urgent"),
    Case("private_note", TOPIC, f"{WHO} added a private note to {T318}."),
    Case("public_note", TOPIC, f"{WHO} added a public note to {T318}."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_freshdesk_ticket_event(org, flask_client, case):
    """Does this Freshdesk ticket event post Zulip's topic and message?"""
    check_case(org, flask_client, "freshdesk", case)


def test_freshdesk_other_change_posts_nothing(org, flask_client):
    """Is a change Zulip does not tell (the ticket's group) accepted, posting nothing?"""
    check_ignored(org, flask_client, "freshdesk", "group_changed")
