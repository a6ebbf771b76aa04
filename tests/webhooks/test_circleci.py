"""CircleCI's integration: job and workflow events (tests/data/webhooks/circleci/, written from
CircleCI's documented webhook payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case

SHA = "4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
GH = f"[`4d5e6f70819: Cache station metadata`](https://github.com/tidewater/tide-tables/commit/{SHA})"
BB = f"https://bitbucket.org/tidewater/tide-tables/commits/{SHA}"
BY = "on branch `main` by Ines Moreau."
WORKFLOW = "[`build-test`](https://app.circleci.com/pipelines/github/tidewater/tide-tables/{}/workflows/w1)"

CASES = [
    Case("ping", "Test event", "Webhook 'Zulip notifications' test event successful."),
    Case("github_job_completed", "tide-tables",
         f"Job `unit-tests` within Pipeline #12 has succeeded.\n\nTriggered on {GH} {BY}"),
    Case("github_job_failed", "tide-tables", f"Job `unit-tests` within Pipeline #13 has failed.\n\nTriggered on {GH} {BY}"),
    Case("github_workflow_completed", "tide-tables",
         f"Workflow {WORKFLOW.format(12)} within Pipeline #12 has succeeded.\n\nTriggered on {GH} {BY}"),
    Case("github_workflow_canceled", "tide-tables",
         f"Workflow {WORKFLOW.format(14)} within Pipeline #14 was canceled.\n\nTriggered on {GH} {BY}"),
    Case("github_tag_workflow_completed", "tide-tables",
         f"Workflow {WORKFLOW.format(15)} within Pipeline #15 has succeeded.\n\n"
         f"Triggered on the latest tag on [4d5e6f70819](https://github.com/tidewater/tide-tables/commit/{SHA})."),
    Case("bitbucket_manual_workflow_completed", "tide-tables",
         f"Workflow {WORKFLOW.format(16)} within Pipeline #16 had an error.\n\n"
         f"Triggered on `main`'s HEAD on [4d5e6f70819]({BB})."),
    Case("bitbucket_job_completed", "tide-tables",
         f"Job `unit-tests` within Pipeline #17 was unauthorized.\n\nTriggered on "
         f"[`4d5e6f70819: Cache station metadata`]({BB}) {BY}"),
    Case("gitlab_workflow_completed", "tide-tables",
         f"Workflow {WORKFLOW.format(18)} within Pipeline #18 has succeeded.\n\nTriggered on "
         f"[`4d5e6f70819: Cache station metadata`](https://gitlab.com/tidewater/tide-tables/-/commit/{SHA}) {BY}"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_circleci_event(org, flask_client, case):
    """Does this CircleCI event post Zulip's topic and message?"""
    check_case(org, flask_client, "circleci", case)
