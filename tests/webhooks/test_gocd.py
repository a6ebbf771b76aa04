"""GoCD's integration: stage notifications (tests/data/webhooks/gocd/, written from the payload of
GoCD's WebHook notifier plugin) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

COMMIT = "[`4d5e6f70819`](https://github.com/tidewater/tide-tables/commit/4d5e6f70819) on branch `main`"


@pytest.mark.parametrize("case", [
    Case("pipeline_building", "tide-tables / unit",
         f"**Pipeline building**: tide-tables / unit\n- **Commit**: {COMMIT}\n- **Started**: <time:Dec 5, 2026, 9:10:00 AM>"),
    Case("pipeline_passed", "tide-tables / unit",
         f":green_circle: **Build passed**: tide-tables / unit\n- **Commit**: {COMMIT}\n"
         "- **Started**: <time:Dec 5, 2026, 9:10:00 AM>\n- **Finished**: <time:Dec 5, 2026, 9:14:00 AM>\n"
         "- **Passed**: `pytest`"),
    Case("pipeline_failed", "tide-tables / unit",
         f":red_circle: **Build failed**: tide-tables / unit\n- **Commit**: {COMMIT}\n"
         "- **Started**: <time:Dec 5, 2026, 9:10:00 AM>\n- **Finished**: <time:Dec 5, 2026, 9:16:30 AM>\n"
         "- **Failed**: `pytest`, `mypy`\n- **Passed**: `lint`"),
], ids=str)
def test_gocd_stage(org, flask_client, case):
    """Does this GoCD stage notification post Zulip's topic and message?"""
    check_case(org, flask_client, "gocd", case)


def test_gocd_agent_notification_posts_nothing(org, flask_client):
    """Is an agent notification answered with success and nothing posted, as in Zulip?"""
    check_ignored(org, flask_client, "gocd", "agent_status")
