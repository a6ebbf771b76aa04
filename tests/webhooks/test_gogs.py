"""Gogs' integration: each event Gogs sends (tests/data/webhooks/gogs/, written from Gogs'
documented payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case

R = "https://gogs.example.org/birds/aviary"
SH = ["1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c", "aa11bb22cc33dd44ee55ff6677889900aabbccdd"]
COMPARE = f"{R}/compare/aa11bb22cc...1d2c3b4a5f"
TOPIC_PR = "aviary / PR #31077 Add nest boxes"
TOPIC_ISSUE = "aviary / issue #7 Boxes face north"
PR = f"{R}/pulls/4"
ISSUE = f"{R}/issues/7"


def gogs(event, fixture, expected_topic, content, **query):
    return Case(fixture, expected_topic, content, headers={"X-Gogs-Event": event}, query=query)


CASES = [
    gogs("push", "push", "aviary / main",
         f"wren [pushed]({COMPARE}) 1 commit to branch main.\n\n* Add nest box sizes ([1d2c3b4a5f6]({R}/commit/{SH[0]}))"),
    gogs("create", "create__branch", "aviary / feature-nests", f"wren created [feature-nests]({R}/src/feature-nests) branch."),
    gogs("pull_request", "pull_request__opened", TOPIC_PR, f"wren opened [PR #4]({PR}) from `feature-nests` to `main`."),
    gogs("pull_request", "pull_request__assigned", TOPIC_PR,
         f"wren assigned finch to [PR #4]({PR}) from `feature-nests` to `main`."),
    gogs("pull_request", "pull_request__edited", "aviary / PR #31077 Add twelve nest boxes", f"wren edited [PR #4]({PR})."),
    gogs("pull_request", "pull_request__merged", TOPIC_PR, f"finch merged [PR #4]({PR}) from `feature-nests` to `main`."),
    gogs("issues", "issues__opened", TOPIC_ISSUE,
         f"wren opened [issue #7]({ISSUE}):\n\n~~~ quote\nHalf the boxes get no morning sun.\n~~~"),
    gogs("issue_comment", "issue_comment__new", TOPIC_ISSUE,
         f"finch [commented]({ISSUE}#issuecomment-5512) on [issue #7]({ISSUE}):\n\n~~~ quote\nI can turn them on Saturday.\n~~~"),
    gogs("release", "release__published", "aviary / v1.0 Aviary 1.0",
         f"wren published release [Aviary 1.0]({R}) for tag v1.0."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gogs_event(org, flask_client, case):
    """Does this Gogs event post Zulip's topic and message?"""
    check_case(org, flask_client, "gogs", case)
