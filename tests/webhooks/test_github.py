"""GitHub's integration: each event type GitHub sends, posted as GitHub would (the fixtures in
tests/data/webhooks/github/ follow GitHub's documented payloads), must give Zulip's topic and
message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

R = "https://github.com/octo-org/widgets"
COMPARE = f"{R}/compare/3f1c2a9d8e7b...5b8d2e1f9c4a"
PR = f"{R}/pull/15"
ISSUE = f"{R}/issues/14"
TOPIC_REPO = "widgets"
TOPIC_BRANCH = "widgets / main"
TOPIC_PR = "widgets / PR #15 Speed up the parser"
TOPIC_ISSUE = "widgets / issue #14 Crash on empty config"
TOPIC_LONG_ISSUE = "widgets / issue #21 Configuration loader crashes when the..."
TOPIC_DISCUSSION = "widgets discussion #7: Roadmap ideas"
SHAS = ["3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a", "a7e19c0b5d2f8e4a6c3b1d9f0e2a4c6b8d0f1e",
        "5b8d2e1f9c4a7b3e6d0f2a8c1e5b9d3f7a0c4e"]


def commit_line(i, message="Tighten the parser's error messages"):
    """The line of the fixtures' i-th commit (their ids end with the commit's number)."""
    sha = f"{SHAS[i % 3]}{i:02d}"
    return f"* {message} ([{sha[:11]}]({R}/commit/{sha}))"


def lines(count):
    return "\n".join(commit_line(i) for i in range(count))


def github(event, fixture, expected_topic, content, **query):
    return Case(fixture, expected_topic, content, headers={"X-GitHub-Event": event}, query=query)


CASES = [
    github("ping", "ping", TOPIC_REPO, "GitHub webhook has been successfully configured by mara."),
    github("ping", "ping__organization", "octo-org", "GitHub webhook has been successfully configured by mara."),
    github("star", "star", TOPIC_REPO,
           f"[mara](https://github.com/mara) starred the repository [octo-org/widgets]({R})."),
    github("star", "star__deleted", TOPIC_REPO,
           f"[mara](https://github.com/mara) unstarred the repository [octo-org/widgets]({R})."),
    github("push", "push__1_commit", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 1 commit to branch main.\n\n{commit_line(1)}"),
    github("push", "push__1_commit", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 1 commit to branch main.\n\n{commit_line(1)}", branches="dev,main"),
    github("push", "push__1_commit_without_username", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 1 commit to branch main. Commits by Jon Doe (1).\n\n"
           f"{commit_line(2, 'Document the config file')}"),
    github("push", "push__force_1_commit", TOPIC_BRANCH,
           f"mara [force pushed]({COMPARE}) 1 commit to branch main.\n\n{commit_line(3, 'Rewrite the tokenizer')}"),
    github("push", "push__force_remove_commits", TOPIC_BRANCH, f"mara [force pushed]({COMPARE}) the branch main."),
    github("push", "push__multiple_committers", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 6 commits to branch main. Commits by kim (3), lee (2) and mara (1).\n\n{lines(6)}"),
    github("push", "push__multiple_committers_with_others", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 10 commits to branch main. Commits by kim (4), lee (3), noa (2) and others (1)."
           f"\n\n{lines(10)}"),
    github("push", "push__50_commits", TOPIC_BRANCH,
           f"mara [pushed]({COMPARE}) 50 commits to branch main.\n\n{lines(20)}\n[and 30 more commit(s)]"),
    github("push", "push__delete_branch", "widgets / feature-x",
           f"mara [deleted]({R}/compare/3f1c2a9d8e7b...000000000000) the branch feature-x."),
    github("push", "push__local_branch_without_commits", "widgets / feature-x",
           f"mara [pushed]({R}/compare/feature-x) the branch feature-x."),
    github("push", "push__tag", TOPIC_REPO, "mara pushed tag v1.2.0."),
    github("push", "push__tag_removed", TOPIC_REPO, "mara removed tag v1.1.9."),
    github("commit_comment", "commit_comment", TOPIC_REPO,
           f"kim [commented]({R}/commit/{SHAS[0]}39#commitcomment-880001) on [3f1c2a9d8e7]({R}/commit/{SHAS[0]}39):"
           "\n~~~ quote\nNice catch, this was flaky.\n~~~"),
    github("create", "create", TOPIC_REPO, "mara created tag v1.2.0."),
    github("create", "create__branch", TOPIC_REPO, "mara created branch feature-x."),
    github("delete", "delete", TOPIC_REPO, "mara deleted branch feature-x."),
    github("deployment", "deployment", "widgets / Deployment on staging", "mara created new deployment."),
    github("deployment_status", "deployment_status", "widgets / Deployment on staging",
           "Deployment changed status to failure."),
    github("fork", "fork", TOPIC_REPO, "kim forked [widgets](https://github.com/kim/widgets)."),
    github("issue_comment", "issue_comment", TOPIC_ISSUE,
           f"mara [commented]({ISSUE}#issuecomment-4410001) on [issue #14]({ISSUE}):\n\n~~~ quote\n"
           "I can reproduce this on 2.3 too.\n~~~"),
    github("issue_comment", "issue_comment", "notifications",
           f"mara [commented]({ISSUE}#issuecomment-4410001) on [issue #14 Crash on empty config]({ISSUE}):\n\n"
           "~~~ quote\nI can reproduce this on 2.3 too.\n~~~", topic="notifications"),
    github("issue_comment", "issue_comment__deleted", TOPIC_ISSUE,
           f"mara deleted a [comment]({ISSUE}#issuecomment-4410001) on [issue #14]({ISSUE}):\n\n~~~ quote\n"
           "Duplicate of the other report.\n~~~"),
    github("issue_comment", "issue_comment__pull_request_comment", TOPIC_PR,
           f"mara [commented]({PR}#issuecomment-4410002) on [PR #15]({PR}):\n\n~~~ quote\nBenchmarks attached.\n~~~"),
    github("issues", "issues", TOPIC_ISSUE,
           f"mara opened [issue #14]({ISSUE}):\n\n~~~ quote\nStarting with an empty `config.toml` raises a KeyError.\n~~~"),
    github("issues", "issues", "notifications",
           f"mara opened [issue #14 Crash on empty config]({ISSUE}):\n\n~~~ quote\n"
           "Starting with an empty `config.toml` raises a KeyError.\n~~~", topic="notifications"),
    github("issues", "issues__closed", TOPIC_ISSUE, f"mara closed [issue #14]({ISSUE})."),
    github("issues", "issues__assigned", TOPIC_ISSUE, f"mara assigned kim to [issue #14]({ISSUE})."),
    github("issues", "issues__unassigned", TOPIC_ISSUE, f"mara unassigned kim from [issue #14]({ISSUE})."),
    github("issues", "issues__labeled", TOPIC_ISSUE,
           f"[mara](https://github.com/mara) added the bug label to [Issue #14]({ISSUE})."),
    github("issues", "issues__labeled", "notifications",
           f"[mara](https://github.com/mara) added the bug label to [Issue #14 Crash on empty config]({ISSUE}).",
           topic="notifications"),
    github("issues", "issues__unlabeled", TOPIC_ISSUE,
           f"[mara](https://github.com/mara) removed the bug label from [Issue #14]({ISSUE})."),
    github("issues", "issues__milestoned", TOPIC_LONG_ISSUE,
           f"[mara](https://github.com/mara) added milestone [v2.0]({R}/milestone/3) to [issue #21]({R}/issues/21)."),
    github("issues", "issues__demilestoned", TOPIC_LONG_ISSUE,
           f"[mara](https://github.com/mara) removed milestone [v2.0]({R}/milestone/3) from [issue #21]({R}/issues/21)."),
    github("issues", "issues__transferred", TOPIC_ISSUE,
           f"mara transferred [issue #14 Crash on empty config]({ISSUE}) to "
           "[octo-org/gadgets/#3](https://github.com/octo-org/gadgets/issues/3)."),
    github("issues", "issues__opened_via_transfer", "gadgets / issue #3 Crash on empty config",
           "[Issue #3 Crash on empty config](https://github.com/octo-org/gadgets/issues/3) was transferred from "
           f"[octo-org/widgets#14]({ISSUE})."),
    github("membership", "membership", "octo-org organization",
           "mara added [kim](https://github.com/kim) to the Reviewers team."),
    github("membership", "membership__removal", "octo-org organization",
           "mara removed [kim](https://github.com/kim) from the Reviewers team."),
    github("member", "member", TOPIC_REPO, f"mara added [kim](https://github.com/kim) to [widgets]({R})."),
    github("pull_request", "pull_request__opened", TOPIC_PR,
           f"mara opened [PR #15]({PR}) from `mara:fast-parser` to `octo-org:main`:\n\n~~~ quote\n"
           "Caches the token table between calls.\n~~~"),
    github("pull_request", "pull_request__opened", "notifications",
           f"mara opened [PR #15 Speed up the parser]({PR}) from `mara:fast-parser` to `octo-org:main`:\n\n"
           "~~~ quote\nCaches the token table between calls.\n~~~", topic="notifications"),
    github("pull_request", "pull_request__opened_with_assignee", TOPIC_PR,
           f"mara opened [PR #15]({PR}) from `mara:fast-parser` to `octo-org:main` (assigned to kim)."),
    github("pull_request", "pull_request__reopened", TOPIC_PR, f"mara reopened [PR #15]({PR})."),
    github("pull_request", "pull_request__synchronize", TOPIC_PR, f"mara updated [PR #15]({PR})."),
    github("pull_request", "pull_request__edited", TOPIC_PR, f"mara edited [PR #15]({PR})."),
    github("pull_request", "pull_request__edited_with_body_change", TOPIC_PR,
           f"mara edited [PR #15]({PR}):\n\n~~~ quote\nCaches the token table; 30% faster on big files.\n~~~"),
    github("pull_request", "pull_request__closed", TOPIC_PR, f"mara closed without merge [PR #15]({PR})."),
    github("pull_request", "pull_request__closed", "notifications",
           f"mara closed without merge [PR #15 Speed up the parser]({PR}).", topic="notifications"),
    github("pull_request", "pull_request__merged", TOPIC_PR, f"mara merged [PR #15]({PR})."),
    github("pull_request", "pull_request__assigned", TOPIC_PR, f"mara assigned kim to [PR #15]({PR})."),
    github("pull_request", "pull_request__unassigned", TOPIC_PR, f"mara unassigned [PR #15]({PR})."),
    github("pull_request", "pull_request__ready_for_review", TOPIC_PR,
           f"**mara** has marked [PR #15]({PR}) as ready for review."),
    github("pull_request", "pull_request__review_requested", TOPIC_PR,
           f"**mara** requested [lee](https://github.com/lee) for a review on [PR #15]({PR})."),
    github("pull_request", "pull_request__review_requested", "notifications",
           f"**mara** requested [lee](https://github.com/lee) for a review on [PR #15 Speed up the parser]({PR}).",
           topic="notifications"),
    github("pull_request", "pull_request__review_requested_team", TOPIC_PR,
           f"**mara** requested [Reviewers](https://github.com/orgs/octo-org/teams/reviewers) for a review on "
           f"[PR #15]({PR})."),
    github("pull_request", "pull_request__locked", TOPIC_PR,
           f"mara has locked [PR #15]({PR}) as too heated and limited conversation to collaborators."),
    github("pull_request", "pull_request__unlocked", TOPIC_PR, f"mara has unlocked [PR #15]({PR})."),
    github("pull_request", "pull_request__auto_merge_enabled", TOPIC_PR,
           f"mara has enabled auto merge for [PR #15]({PR})."),
    github("pull_request", "pull_request__auto_merge_disabled", TOPIC_PR,
           f"mara has disabled auto merge for [PR #15]({PR})."),
    github("pull_request_review", "pull_request_review", TOPIC_PR,
           f"lee submitted [PR review]({PR}#pullrequestreview-2200001):\n\n~~~ quote\nLooks good to me.\n~~~"),
    github("pull_request_review", "pull_request_review", "notifications",
           f"lee submitted [PR review for #15 Speed up the parser]({PR}#pullrequestreview-2200001):\n\n"
           "~~~ quote\nLooks good to me.\n~~~", topic="notifications"),
    github("pull_request_review", "pull_request_review__empty_body", TOPIC_PR,
           f"lee submitted [PR review]({PR}#pullrequestreview-2200001)."),
    github("pull_request_review_comment", "pull_request_review_comment", TOPIC_PR,
           f"lee created [PR review comment]({PR}#discussion_r3300002):\n\n~~~ quote\n"
           "Could this cache grow without bound?\n~~~"),
    github("pull_request_review_comment", "pull_request_review_comment", "notifications",
           f"lee created [PR review comment on #15 Speed up the parser]({PR}#discussion_r3300002):\n\n~~~ quote\n"
           "Could this cache grow without bound?\n~~~", topic="notifications"),
    github("public", "public", TOPIC_REPO, f"mara made the repository [octo-org/widgets]({R}) public."),
    github("gollum", "gollum", "widgets / wiki pages",
           f"mara:\n* created [Home]({R}/wiki/Home)\n* edited [Setup]({R}/wiki/Setup)"),
    github("watch", "watch", TOPIC_REPO, f"mara starred the repository [octo-org/widgets]({R})."),
    github("repository", "repository", TOPIC_REPO, f"mara created the repository [octo-org/widgets]({R})."),
    github("team_add", "team_add", TOPIC_REPO, f"The repository [octo-org/widgets]({R}) was added to team Reviewers."),
    github("release", "release", TOPIC_REPO,
           f"mara published release [v1.2.0]({R}/releases/tag/v1.2.0) for tag v1.2.0."),
    github("release", "release__with_name", TOPIC_REPO,
           f"mara published release [Spring cleaning]({R}/releases/tag/v1.2.0) for tag v1.2.0."),
    github("page_build", "page_build", TOPIC_REPO, "GitHub Pages build, triggered by mara, has finished building."),
    github("page_build", "page_build__errored", TOPIC_REPO,
           "GitHub Pages build, triggered by mara, has failed: \n~~~ quote\nThe tag `site.url` is unknown.\n~~~."),
    github("status", "status", TOPIC_REPO, f"[a7e19c0b5d2]({R}/commit/{SHAS[1]}23) changed its status to success."),
    github("status", "status__with_target_url", TOPIC_REPO,
           f"[a7e19c0b5d2]({R}/commit/{SHAS[1]}23) changed its status to "
           "[failure](https://ci.example.org/builds/4411)."),
    github("check_run", "check_run__completed", "widgets / checks",
           f"Check [lint]({R}/runs/7700001) completed (success). ([5b8d2e1f9c4]({R}/commit/{SHAS[2]}61))"),
    github("team", "team__edited_description", "team Reviewers",
           "**mara** changed the team description to:\n\n~~~ quote\nPeople who review.\n~~~"),
    github("team", "team__edited_name", "team Code reviewers", "Team `Reviewers` was renamed to `Code reviewers`."),
    github("team", "team__edited_privacy", "team Reviewers", "Team visibility changed to `secret`"),
    github("team", "team__edited_other", "team Reviewers", "Team has changes to `notification_setting/repository` data."),
    github("discussion", "discussion", TOPIC_DISCUSSION,
           f"mara created [discussion #7]({R}/discussions/7) in Ideas:\n\n~~~ quote\n### Roadmap ideas\n"
           "What should 3.0 bring?\n~~~"),
    github("discussion_comment", "discussion_comment", TOPIC_DISCUSSION,
           f"kim [commented]({R}/discussions/7#discussioncomment-6600001) on [discussion #7]({R}/discussions/7):\n\n"
           "~~~ quote\nPlugins, please.\n~~~"),
    github("discussion_comment", "discussion_comment", "notifications",
           f"kim [commented]({R}/discussions/7#discussioncomment-6600001) on "
           f"[discussion #7 Roadmap ideas]({R}/discussions/7):\n\n~~~ quote\nPlugins, please.\n~~~", topic="notifications"),
    github("discussion_comment", "discussion_comment__edited", TOPIC_DISCUSSION,
           f"kim edited a [comment]({R}/discussions/7#discussioncomment-6600001) on [discussion #7]({R}/discussions/7):"
           "\n\n~~~ quote\nPlugins, please.\n~~~"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_github_event(org, flask_client, case):
    """Does this GitHub event post Zulip's topic and message?"""
    check_case(org, flask_client, "github", case)


IGNORED = [
    ("push", "push__merge_queue", {}),
    ("push", "push__1_commit", {"branches": "dev,release"}),
    ("push", "push__private_repository", {"ignore_private_repositories": "true"}),
    ("check_run", "check_run__in_progress", {}),
    ("pull_request", "pull_request__labeled", {}),
    ("pull_request_review", "pull_request_review__edited_empty", {}),
    ("issue_comment", "issue_comment__edited_unchanged", {}),
    ("team", "team__created", {}),
    ("repository_vulnerability_alert", "repository_vulnerability_alert", {}),
]


@pytest.mark.parametrize("event,fixture,query", IGNORED, ids=[f"{f}{'-' + '-'.join(q) if q else ''}" for _e, f, q in IGNORED])
def test_github_ignored_event(org, flask_client, event, fixture, query):
    """Is this event, which Zulip knowingly ignores, answered with success and nothing posted?"""
    body = check_ignored(org, flask_client, "github", fixture, {"X-GitHub-Event": event}, **query)
    assert body == {"result": "success", "msg": ""}


@pytest.mark.parametrize("event", ["check_suite", "label", "meta", "milestone", "organization", "project_card"])
def test_github_ignored_event_types(org, flask_client, event):
    """Are the event types Zulip ignores answered with success whatever their payload?"""
    check_ignored(org, flask_client, "github", {}, {"X-GitHub-Event": event})


def test_github_private_repository_posts_by_default(org, flask_client):
    """Without ignore_private_repositories, does a private repository's push still post?"""
    case = github("push", "push__private_repository", TOPIC_BRANCH,
                  f"mara [pushed]({COMPARE}) 1 commit to branch main.\n\n{commit_line(1)}")
    check_case(org, flask_client, "github", case)


SPONSORS = [
    Case("created", "sponsors", "kim subscribed for $5 a month."),
    Case("cancelled", "sponsors", "kim cancelled their $5 a month subscription."),
    Case("edited", "sponsors", "kim changed who can see their sponsorship from public to private."),
    Case("pending_cancellation", "sponsors", "kim's $5 a month subscription will be cancelled on January 05, 2027."),
    Case("pending_tier_change", "sponsors",
         "kim's subscription will change from $10 a month to $5 a month on December 30, 2026."),
    Case("tier_changed", "sponsors", "kim changed their subscription from $10 a month to $5 a month."),
]


@pytest.mark.parametrize("case", SPONSORS, ids=str)
def test_github_sponsors_event(org, flask_client, case):
    """Does this GitHub Sponsors event, at /external/githubsponsors, post Zulip's message in the
    "sponsors" topic?"""
    case.headers = {"X-GitHub-Event": "sponsorship"}
    check_case(org, flask_client, "githubsponsors", case)
