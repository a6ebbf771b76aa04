"""TeamCity's integration: builds from the tcWebHooks plugin's Legacy Webhook (JSON) format
(tests/data/webhooks/teamcity/, written from the plugin's documented payload) must give Zulip's
topic and message exactly."""

import pytest

from .webhook_helpers import Case, check_case, check_ignored

LOG = "https://ci.tidewater.example/viewLog.html?buildTypeId=HarborDeploy_Build&buildId=48213"
LINKS = f"See [changes]({LOG}&tab=buildChangesDiv) and [build log]({LOG})."
TOPIC = "Harbor Deploy :: Build"

CASES = [
    Case("success", TOPIC, f"{TOPIC} build 1.8.212 was successful! :thumbs_up: {LINKS}"),
    Case("success_branch", f"{TOPIC} (tide-rounding)", f"{TOPIC} build 1.8.212 was successful! :thumbs_up: {LINKS}"),
    Case("fixed", TOPIC, f"{TOPIC} build 1.8.212 has been fixed! :thumbs_up: {LINKS}"),
    Case("broken", TOPIC, f"{TOPIC} build 1.8.212 is broken with status Tests failed: 3 (3 new), passed: 409! "
                          f":thumbs_down: {LINKS}"),
    Case("still_failing", TOPIC, f"{TOPIC} build 1.8.212 is still broken with status Tests failed: 3, passed: 409! "
                                 f":thumbs_down: {LINKS}"),
    Case("started", TOPIC, f"{TOPIC} build 1.8.212 has started. {LINKS}"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_teamcity_build(org, flask_client, case):
    """Does this TeamCity build post Zulip's topic and message?"""
    check_case(org, flask_client, "teamcity", case)


@pytest.mark.parametrize("fixture", ["personal", "slack_format"])
def test_teamcity_posts_nothing(org, flask_client, fixture):
    """Are a personal build and a payload in another of the plugin's formats accepted, posting nothing?"""
    check_ignored(org, flask_client, "teamcity", fixture)
