"""Bitbucket Cloud's integration (bitbucket2): each event Bitbucket sends (tests/data/webhooks/
bitbucket2/, written from Bitbucket's documented payloads) must give Zulip's topic and message."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture

B = "https://bitbucket.org/harbor-team/pelican"
SH = ["c0ffee1a2b3c4d5e6f708192a3b4c5d6e7f80912", "b16b00b5a4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9",
      "7e57ab1e0d15ea5e5ca1ab1ef00dcafe12345678"]
COMPARE = f"{B}/branches/compare/{SH[1]}..{SH[0]}"
TIDES = f"* Add harbor tide tables ([b16b00b5a4c]({B}/commits/{SH[1]}))"
TOPIC_PR = "pelican / PR #9 Fix DST handling"
TOPIC_ISSUE = "pelican / issue #4 Tide times off by an hour"
PR = f"{B}/pull-requests/9"
ISSUE = f"{B}/issues/4"
PR_COMMENT = f"{B}/pull-requests/9/_/diff#comment-8801"


def bitbucket(fixture, expected_topic, content, key=None, **query):
    return Case(fixture, expected_topic, content, headers={"X-Event-Key": key} if key else {}, query=query)


CASES = [
    bitbucket("push", "pelican / main", f"Ava Stone [pushed]({COMPARE}) 1 commit to branch main.\n\n{TIDES}",
              "repo:push"),
    bitbucket("push", "pelican / main", f"Ava Stone [pushed]({COMPARE}) 1 commit to branch main.\n\n{TIDES}",
              "repo:push", branches="main"),
    bitbucket("push__multiple_committers", "pelican / main",
              f"Ava Stone [pushed]({COMPARE}) 2 commits to branch main. Commits by Ava Stone (1) and Ben (1).\n\n"
              f"{TIDES}\n* Fix the tide rounding ([7e57ab1e0d1]({B}/commits/{SH[2]}))", "repo:push"),
    bitbucket("push__truncated", "pelican / main",
              f"Ava Stone [pushed]({COMPARE}) 3 commits to branch main.\n\n{TIDES}\n{TIDES}\n{TIDES}\n"
              "[and more commit(s)]", "repo:push"),
    bitbucket("push__force", "pelican / main",
              f"Ava Stone [force pushed]({COMPARE}) to branch main. Head is now {SH[2]}.", "repo:push"),
    bitbucket("push__remove_branch", "pelican / old-ui", "Ava Stone deleted branch old-ui.", "repo:push"),
    bitbucket("push__tag", "pelican", f"Ava Stone pushed tag [v2.0]({B}/commits/tag/v2.0).", "repo:push"),
    bitbucket("push__remove_tag", "pelican", f"Ava Stone removed tag [v1.9]({B}/commits/tag/v1.9).", "repo:push"),
    bitbucket("fork", "pelican",
              "Ava Stone forked the repository into [ava/pelican](https://bitbucket.org/ava/pelican).", "repo:fork"),
    bitbucket("commit_comment", "pelican",
              f"Ava Stone [commented]({B}/commits/{SH[1]}#comment-5501) on [b16b00b5a4c]({B}/commits/{SH[1]}):\n"
              "~~~ quote\nShould this handle leap seconds?\n~~~", "repo:commit_comment_created"),
    bitbucket("commit_status", "pelican",
              f"[System ci-build](https://ci.example.org/pelican/412) changed status of "
              f"[b16b00b5a4c]({B}/commits/{SH[1]}) to SUCCESSFUL.", "repo:commit_status_updated"),
    bitbucket("issue_created", TOPIC_ISSUE,
              f"Ava Stone created [issue #4]({ISSUE}) (assigned to Ben Ortiz):\n\n~~~ quote\n"
              "After the DST change every time is one hour late.\n~~~", "issue:created"),
    bitbucket("issue_created__without_assignee", TOPIC_ISSUE,
              f"Ava Stone created [issue #4]({ISSUE}):\n\n~~~ quote\nAfter the DST change every time is one hour late.\n~~~",
              "issue:created"),
    bitbucket("issue_created", "notifications",
              f"Ava Stone created [issue #4 Tide times off by an hour]({ISSUE}) (assigned to Ben Ortiz):\n\n~~~ quote\n"
              "After the DST change every time is one hour late.\n~~~", "issue:created", topic="notifications"),
    bitbucket("issue_updated", TOPIC_ISSUE, f"Ava Stone updated [issue #4]({ISSUE}).", "issue:updated"),
    bitbucket("issue_commented", TOPIC_ISSUE, f"Ben Ortiz [commented]({ISSUE}#comment-7702) on [issue #4]({ISSUE}).",
              "issue:comment_created"),
    bitbucket("pull_request_created", TOPIC_PR,
              f"Ava Stone created [PR #9]({PR}) from `dst-fix` to `main` (assigned to Ben Ortiz):\n\n~~~ quote\n"
              "Uses zoneinfo for every station.\n~~~", "pullrequest:created"),
    bitbucket("pull_request_created", "notifications",
              f"Ava Stone created [PR #9 Fix DST handling]({PR}) from `dst-fix` to `main` (assigned to Ben Ortiz):\n\n"
              "~~~ quote\nUses zoneinfo for every station.\n~~~", "pullrequest:created", topic="notifications"),
    bitbucket("pull_request_created", "Release notes",
              f"Ava Stone created [PR #9 Fix DST handling]({PR}) from `dst-fix` to `main` (assigned to Ben Ortiz):\n\n"
              "~~~ quote\nUses zoneinfo for every station.\n~~~", "pullrequest:created", topic="Release%20notes"),
    bitbucket("pull_request_created__without_reviewers", TOPIC_PR,
              f"Ava Stone created [PR #9]({PR}) from `dst-fix` to `main`.", "pullrequest:created"),
    bitbucket("pull_request_updated", TOPIC_PR,
              f"Ava Stone updated [PR #9]({PR}) (assigned to Ben Ortiz):\n\n~~~ quote\nUses zoneinfo everywhere.\n~~~",
              "pullrequest:updated"),
    bitbucket("pull_request_approved", TOPIC_PR, f"Ben Ortiz approved [PR #9]({PR}).", "pullrequest:approved"),
    bitbucket("pull_request_unapproved", TOPIC_PR, f"Ben Ortiz unapproved [PR #9]({PR}).", "pullrequest:unapproved"),
    bitbucket("pull_request_fulfilled", TOPIC_PR, f"Ben Ortiz merged [PR #9]({PR}) from `dst-fix` to `main`.",
              "pullrequest:fulfilled"),
    bitbucket("pull_request_rejected", TOPIC_PR, f"Ben Ortiz rejected [PR #9]({PR}).", "pullrequest:rejected"),
    bitbucket("pull_request_comment_created", TOPIC_PR,
              f"Ben Ortiz [commented]({PR_COMMENT}) on [PR #9]({PR}):\n\n~~~ quote\n"
              "Could we cover the southern hemisphere too?\n~~~", "pullrequest:comment_created"),
    bitbucket("pull_request_comment_updated", TOPIC_PR,
              f"Ben Ortiz updated a [comment]({PR_COMMENT}) on [PR #9]({PR}):\n\n~~~ quote\n"
              "Could we cover the southern hemisphere too?\n~~~", "pullrequest:comment_updated"),
    bitbucket("pull_request_comment_deleted", TOPIC_PR,
              f"Ben Ortiz deleted a [comment]({PR_COMMENT}) on [PR #9]({PR}):\n\n~~~ quote\n"
              "Could we cover the southern hemisphere too?\n~~~", "pullrequest:comment_deleted"),
    bitbucket("repo_updated", "pelican-tides",
              "Ava Stone changed the website of the **pelican-tides** repo to **https://tides.example.org**.\n"
              "Ava Stone changed the name of the **pelican-tides** repo from **pelican** to **pelican-tides**.\n"
              "Ava Stone changed the language of the **pelican-tides** repo from **python** to **python**.\n"
              "Ava Stone changed the full name of the **pelican-tides** repo from **harbor-team/pelican** to "
              "**harbor-team/pelican-tides**.\n"
              "Ava Stone changed the description of the **pelican-tides** repo to **Tide tables for small harbors!**",
              "repo:updated"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_bitbucket2_event(org, flask_client, case):
    """Does this Bitbucket event post Zulip's topic and message?"""
    check_case(org, flask_client, "bitbucket2", case)


def test_bitbucket2_push_to_two_branches_posts_twice(org, flask_client):
    """Is each branch of a push told in its own topic, as Zulip does?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "bitbucket2", key, "push__two_branches", {"X-Event-Key": "repo:push"},
                            stream="Denmark")
    assert response.get_json()["result"] == "success"
    assert [(m.topic, m.content) for m in messages_from(bot_id)] == [
        ("pelican / main", f"Ava Stone [pushed]({COMPARE}) 1 commit to branch main.\n\n{TIDES}"),
        ("pelican / docs", f"Ava Stone [pushed]({B}/branches/compare/{SH[2]}..{SH[0]}) 1 commit to branch docs.\n\n"
                           f"* Describe the tide tables ([7e57ab1e0d1]({B}/commits/{SH[2]}))"),
    ]


def test_bitbucket2_ignored_pushes(org, flask_client):
    """Are a push without changes and a push to a branch outside branches= answered with success,
    posting nothing?"""
    check_ignored(org, flask_client, "bitbucket2", "push__no_changes", {"X-Event-Key": "repo:push"})
    check_ignored(org, flask_client, "bitbucket2", "push", {"X-Event-Key": "repo:push"}, branches="release")


def test_bitbucket2_unsupported_pull_request_action(org, flask_client):
    """Is a pull request action Zulip does not handle answered with its success note?"""
    body = check_ignored(org, flask_client, "bitbucket2", "pull_request_changes_requested",
                         {"X-Event-Key": "pullrequest:changes_request_created"})
    assert body["msg"] == ("The 'pullrequest:changes_request_created' event isn't currently supported by the "
                           "Bitbucket2 webhook; ignoring")
