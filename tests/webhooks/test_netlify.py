"""Netlify's integration: deploy notifications (tests/data/webhooks/netlify/, written from
Netlify's documented deploy payload) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

BUILD = "The build [tide-tables](https://tide-tables.netlify.app) on branch main"


@pytest.mark.parametrize("case", [
    Case("deploy_building", "main", f"{BUILD} is now building.", headers={"X-Netlify-Event": "deploy_building"}),
    Case("deploy_created", "main", f"{BUILD} is now ready.", headers={"X-Netlify-Event": "deploy_created"}),
    Case("deploy_failed", "main",
         f"{BUILD} Failed during stage 'building site': Build script returned non-zero exit code: 2",
         headers={"X-Netlify-Event": "deploy_failed"}),
    Case("deploy_locked", "main", f"{BUILD} is now locked.", headers={"X-Netlify-Event": "deploy_locked"}),
    Case("deploy_unlocked", "main", f"{BUILD} is now unlocked.", headers={"X-Netlify-Event": "deploy_unlocked"}),
], ids=str)
def test_netlify_deploy(org, flask_client, case):
    """Does this Netlify deploy event post Zulip's topic and message?"""
    check_case(org, flask_client, "netlify", case)


def test_netlify_unsupported_event(org, flask_client):
    """Is an event Zulip does not handle answered with its success note?"""
    body = check_ignored(org, flask_client, "netlify", "deploy_created", {"X-Netlify-Event": "deploy_request_pending"})
    assert body["msg"] == "The 'deploy_request_pending' event isn't currently supported by the Netlify webhook; ignoring"
