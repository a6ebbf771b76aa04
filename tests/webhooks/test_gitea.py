"""Gitea's integration: each event Gitea sends (tests/data/webhooks/gitea/, written from Gitea's
documented payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

R = "https://git.example.org/birds/aviary"
SH = ["1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c", "aa11bb22cc33dd44ee55ff6677889900aabbccdd"]
COMPARE = f"{R}/compare/aa11bb22cc...1d2c3b4a5f"
NESTS = f"* Add nest box sizes ([1d2c3b4a5f6]({R}/commit/{SH[0]}))"
TOPIC_PR = "aviary / PR #31077 Add nest boxes"
TOPIC_ISSUE = "aviary / issue #7 Boxes face north"
PR = f"{R}/pulls/4"
ISSUE = f"{R}/issues/7"


def gitea(event, fixture, expected_topic, content, **query):
    return Case(fixture, expected_topic, content, headers={"X-Gitea-Event": event}, query=query)


CASES = [
    gitea("push", "push", "aviary / main", f"wren [pushed]({COMPARE}) 1 commit to branch main.\n\n{NESTS}"),
    gitea("push", "push", "aviary / main", f"wren [pushed]({COMPARE}) 1 commit to branch main.\n\n{NESTS}",
          branches="main"),
    gitea("push", "push__commits_multiple_committers", "aviary / main",
          f"wren [pushed]({COMPARE}) 2 commits to branch main. Commits by Jo (1) and wren (1).\n\n{NESTS}\n"
          f"* Mark the oak trees ([aa11bb22cc3]({R}/commit/{SH[1]}))"),
    gitea("create", "create__branch", "aviary / feature-nests",
          f"wren created [feature-nests]({R}/src/feature-nests) branch."),
    gitea("pull_request", "pull_request__opened", TOPIC_PR,
          f"wren opened [PR #4]({PR}) from `feature-nests` to `main`."),
    gitea("pull_request", "pull_request__opened", "notifications",
          f"wren opened [PR #4 Add nest boxes]({PR}) from `feature-nests` to `main`.", topic="notifications"),
    gitea("pull_request", "pull_request__assigned", TOPIC_PR,
          f"wren assigned finch to [PR #4]({PR}) from `feature-nests` to `main` (assigned to finch)."),
    gitea("pull_request", "pull_request__edited", "aviary / PR #31077 Add twelve nest boxes",
          f"wren edited [PR #4]({PR})."),
    gitea("pull_request", "pull_request__merged", TOPIC_PR,
          f"finch merged [PR #4]({PR}) from `feature-nests` to `main`."),
    gitea("issues", "issues__opened", TOPIC_ISSUE,
          f"wren opened [issue #7]({ISSUE}):\n\n~~~ quote\nHalf the boxes get no morning sun.\n~~~"),
    gitea("issues", "issues__assigned", TOPIC_ISSUE,
          f"wren assigned finch to [issue #7]({ISSUE}) (assigned to finch):\n\n~~~ quote\n"
          "Half the boxes get no morning sun.\n~~~"),
    gitea("issues", "issues__closed", TOPIC_ISSUE,
          f"wren closed [issue #7]({ISSUE}):\n\n~~~ quote\nHalf the boxes get no morning sun.\n~~~"),
    gitea("issue_comment", "issue_comment__new", TOPIC_ISSUE,
          f"finch [commented]({ISSUE}#issuecomment-5512) on [issue #7]({ISSUE}):\n\n~~~ quote\n"
          "I can turn them on Saturday.\n~~~"),
    gitea("issue_comment", "issue_comment__edited", TOPIC_ISSUE,
          f"finch edited a [comment]({ISSUE}#issuecomment-5512) on [issue #7]({ISSUE}):\n\n~~~ quote\n"
          "I can turn them on Sunday.\n~~~"),
    gitea("release", "release__published", "aviary / v1.0 Aviary 1.0",
          f"wren published release [Aviary 1.0]({R}) for tag v1.0."),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_gitea_event(org, flask_client, case):
    """Does this Gitea event post Zulip's topic and message?"""
    check_case(org, flask_client, "gitea", case)


def test_gitea_push_to_unlisted_branch_posts_nothing(org, flask_client):
    """Does branches= leave out pushes to other branches, answering success?"""
    check_ignored(org, flask_client, "gitea", "push", {"X-Gitea-Event": "push"}, branches="dev")


def test_gitea_unsupported_event(org, flask_client):
    """Is an event Zulip does not handle (a fork) answered with its success note, posting nothing?"""
    body = check_ignored(org, flask_client, "gitea", "fork", {"X-Gitea-Event": "fork"})
    assert body["msg"] == "The 'fork' event isn't currently supported by the Gitea webhook; ignoring"
