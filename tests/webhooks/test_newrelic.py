"""New Relic's integration: issue notifications (tests/data/webhooks/newrelic/, written from New
Relic's default workflow payload template) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

URL = "https://radar-api.service.newrelic.com/accounts/4455667/issues/c1d2e3f4?notifier=WEBHOOK"
DETAILS = (f"\n\n**[Harbor API error rate above 5%]({URL})**\n\n| :file:  **Incident details**  |\n|:--------|\n"
           "|:checkbox: Alert policy: **`Harbor production`**|\n"
           "|:spiral_notepad: Conditions: **`Error rate`**, **`Latency p99`**|\n")
CREATED = "|:clock: Incident created at: <time: 2026-12-04 11:00:00+00:00 > |\n"

CASES = [
    Case("incident_activated", "Activated Critical Priority",
         f"```spoiler :red_circle: CRITICAL **priority [issue]({URL}) has been **ACTIVATED** at** "
         f"<time: 2026-12-04 11:00:00+00:00 >{DETAILS}|:warning: Total incidents: **2**|\n{CREATED}\n```"),
    Case("incident_acknowledged", "Activated High Priority",
         f"```spoiler :orange_circle: HIGH **priority [issue]({URL}) has been **ACKNOWLEDGED** at** "
         f"<time: 2026-12-04 11:10:00.500000+00:00 >{DETAILS}|:warning: Total incidents: **2**|\n{CREATED}"
         "|:silhouette:  Acknowledged by **Ines Moreau**|\n\n```"),
    Case("incident_closed", "Closed Low Priority",
         f"```spoiler :blue_circle: LOW **priority [issue]({URL}) has been **CLOSED** at** "
         f"<time: 2026-12-04 12:10:00+00:00 >{DETAILS}|:warning: Total incidents: **2**|\n{CREATED}"
         "|Runbookurl: **https://wiki.tidewater.example/runbooks/harbor-api**|\n"
         "|Affectedhosts: **`api-1`**, **`api-2`**|\n|Errorcount: **41**|\n|Region: **None**|\n"
         "|*The **Details** contains [unsupported field](/integrations/doc/newrelic#displaying-custom-fields) format.* |"
         "\n\n```"),
    Case("incident_updated", "Created Medium Priority",
         f"```spoiler :yellow: MEDIUM **priority [issue]({URL}) has been **UPDATED** at** "
         f"<time: 2026-12-04 11:16:40+00:00 >{DETAILS}|:warning: Total incidents: **3**|\n{CREATED}\n```"),
    Case("incident_missing_fields", "Incident alerts",
         "```spoiler :danger: An [incident](https://one.newrelic.com/alerts-ai) updated\n\n"
         "**Warning: Unable to send the default notification format**\n"
         "At least one essential field is missing from the payload. Try\n"
         "to reset the payload template to the default from New Relic\nif you're unsure.\n\n"
         "Please reach out to [the Zulip development community](https://chat.zulip.org/#narrow/stream/127-integrations)\n"
         "if you think this integration is out-of-date.\n> *Integration last updated: **June 2024***\n```"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_newrelic_issue(org, flask_client, case):
    """Does this New Relic notification post Zulip's topic and message?"""
    check_case(org, flask_client, "newrelic", case)


def test_newrelic_issue_without_update_time(org, flask_client):
    """Is a notification that does not say when it happened answered with Zulip's success note?"""
    body = check_ignored(org, flask_client, "newrelic", "incident_without_update_time")
    assert body["msg"] == ("The 'Harbor API error rate above 5%' event isn't currently supported by the NewRelic "
                           "webhook; ignoring")
