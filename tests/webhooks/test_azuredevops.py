"""Azure DevOps's integration: Azure Repos service hooks (tests/data/webhooks/azuredevops/, written
from Microsoft's documented service hook payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

REPO = "https://dev.azure.com/tidewater/Harbor/_git/harbor-api"
COMPARE = (f"{REPO}/branchCompare?baseVersion=GC3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"
           "&targetVersion=GC7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b&_a=files")
INES = f"* Add berth booking endpoint ([7a8b9c0d1e2]({REPO}/commit/7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b))\n"
KAI = f"* Log refused bookings ([5c6d7e8f9a0]({REPO}/commit/5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d))\n"
MARA = f"* Fix tide offset ([1f2e3d4c5b6]({REPO}/commit/1f2e3d4c5b6a79880716253443526170f9e8d7c6))\n"
OTTO = f"* Bump dependencies ([9e8d7c6b5a4]({REPO}/commit/9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807))\n"
NEW, ZERO = "7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b", "0" * 40
PR7 = "harbor-api / PR #7 Berth booking endpoint"
PR7_LINK = f"[PR #7 Berth booking endpoint]({REPO}/pullrequest/7)"

CASES = [
    Case("push", "harbor-api / main", f"Ines Moreau [pushed]({COMPARE}) 1 commit to branch main.\n\n{INES}".rstrip()),
    Case("push_multiple_committers", "harbor-api / main",
         f"Ines Moreau [pushed]({COMPARE}) 3 commits to branch main. Commits by Kai Larsen (2) and Ines Moreau (1)."
         f"\n\n{KAI}{INES}{KAI}".rstrip()),
    Case("push_committers_with_others", "harbor-api / main",
         f"Ines Moreau [pushed]({COMPARE}) 6 commits to branch main. Commits by Ines Moreau (2), Kai Larsen (2), "
         f"Mara Quint (1) and others (1).\n\n{KAI}{KAI}{INES}{INES}{MARA}{OTTO}".rstrip()),
    Case("push_commits_over_limit", "harbor-api / main",
         f"Ines Moreau [pushed]({COMPARE}) 23 commits to branch main.\n\n{INES * 20}[and 3 more commit(s)]"),
    Case("push_new_branch_without_commits", "harbor-api / feature/berths",
         f"Ines Moreau [pushed]({REPO}/branchCompare?baseVersion=GC{ZERO}&targetVersion=GC{NEW}&_a=files) "
         "the branch feature/berths."),
    Case("push_remove_branch", "harbor-api / feature/berths",
         f"Ines Moreau [pushed]({REPO}/branchCompare?baseVersion=GC{NEW}&targetVersion=GC{ZERO}&_a=files) "
         "the branch feature/berths."),
    Case("push", "harbor-api / main", f"Ines Moreau [pushed]({COMPARE}) 1 commit to branch main.\n\n{INES}".rstrip(),
         query={"branches": "main,dev"}),
    Case("pull_request_created", PR7,
         f"Ines Moreau created {PR7_LINK} from `feature/berths` to `main`:\n\n~~~ quote\nBooks a berth for a vessel.\n\n"
         "Refuses vessels longer than the berth.\n~~~"),
    Case("pull_request_created_without_description", "harbor-api / PR #8 Tide offsets?",
         f"Ines Moreau created [PR #8 Tide offsets?]({REPO}/pullrequest/8) from `feature/berths` to `main`."),
    Case("pull_request_merged", PR7, f"Ines Moreau merged {PR7_LINK} from `feature/berths` to `main`."),
    Case("pull_request_updated", PR7,
         f"Ines Moreau updated {PR7_LINK}:\n\n~~~ quote\nInes Moreau updated the source branch of "
         f"[pull request 7]({REPO}/pullrequest/7) (Berth booking endpoint) in [harbor-api]({REPO}/)\r\n"
         "Berth booking endpoint\r\n\n~~~"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-branches' if c.query else ''}" for c in CASES])
def test_azuredevops_event(org, flask_client, case):
    """Does this Azure DevOps service hook post Zulip's topic and message?"""
    check_case(org, flask_client, "azuredevops", case)


def test_azuredevops_push_to_unlisted_branch(org, flask_client):
    """Does a push to a branch that branches= leaves out post nothing?"""
    check_ignored(org, flask_client, "azuredevops", "push_dev", branches="main")


def test_azuredevops_merge_attempt(org, flask_client):
    """Is a "merged" hook that only tells of a merge attempt (a conflict) left unposted?"""
    check_ignored(org, flask_client, "azuredevops", "pull_request_merge_attempted")


def test_azuredevops_unsupported_event(org, flask_client):
    """Is a service hook Zulip does not handle answered with its success note?"""
    body = check_ignored(org, flask_client, "azuredevops", "workitem_created")
    assert body["msg"] == "The 'workitem.created' event isn't currently supported by the AzureDevOps webhook; ignoring"
