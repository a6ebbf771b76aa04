"""GitLab's integration: each hook GitLab sends (tests/data/webhooks/gitlab/, written from GitLab's
documented payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture

H = "https://gitlab.example.org/plover/tern"
SH = ["9d4c1b7e2a6f3d8c0b5e1a9f7d3c6b2e8a4f0d", "e2b7a9c4d1f6083b5e7a2c9d4f1b6e8a3c0d5f",
      "4a8e2c6b0d9f1e7a3c5b8d2f6e0a4c9b1d7f3e"]
FULL = ["9d4c1b7e2a6f3d8c0b5e1a9f7d3c6b2e8a4f0d17", "e2b7a9c4d1f6083b5e7a2c9d4f1b6e8a3c0d5f72",
        "4a8e2c6b0d9f1e7a3c5b8d2f6e0a4c9b1d7f3e25"]
COMPARE = f"{H}/-/compare/{FULL[0]}...{FULL[2]}"
PROJECT_LINK = f"[[tern]({H})]"
ISSUE = f"{H}/-/issues/12"
MR = f"{H}/-/merge_requests/7"
TOPIC_ISSUE = "tern / issue #12 Tracks jump at midnight"
TOPIC_MR = "tern / MR #7 Smooth tracks with a Kalman filter"


def commit_line(i, message="Fix drift in the GPS smoother"):
    sha = f"{SH[i % 3]}{i:02d}"
    return f"* {message} ([{sha[:11]}]({H}/-/commit/{sha}))"


def gitlab(event, fixture, expected_topic, content, **query):
    return Case(fixture, expected_topic, content, headers={"X-Gitlab-Event": event}, query=query)


PUSHED_TWO = (f"Ida Lind [pushed]({COMPARE}) 2 commits to branch main.\n\n{commit_line(1)}\n"
              f"{commit_line(2, 'Add a test for the smoother')}")

CASES = [
    gitlab("Push Hook", "push_hook", "tern / main", PUSHED_TWO),
    gitlab("Push Hook", "push_hook", "tern / main", PUSHED_TWO, branches="main,dev"),
    gitlab("Push Hook", "push_hook", "Specific topic", f"{PROJECT_LINK} {PUSHED_TWO}", topic="Specific topic"),
    gitlab("Push Hook", "push_hook__push_local_branch_without_commits", "tern / survey-2027",
           f"Ida Lind [pushed]({H}/-/compare/{'0' * 40}...{FULL[2]}) the branch survey-2027."),
    gitlab("Push Hook", "push_hook__push_multiple_committers", "tern / main",
           f"Ida Lind [pushed]({COMPARE}) 2 commits to branch main. Commits by Ida Lind (1) and Otto Berg (1).\n\n"
           f"{commit_line(1)}\n{commit_line(2)}"),
    gitlab("Push Hook", "push_hook__push_multiple_committers_with_others", "tern / main",
           f"Ida Lind [pushed]({COMPARE}) 7 commits to branch main. Commits by Otto Berg (3), Ruth Vogel (2), "
           "Ida Lind (1) and others (1).\n\n" + "\n".join(commit_line(i) for i in range(7))),
    gitlab("Push Hook", "push_hook__push_commits_more_than_limit", "tern / main",
           f"Ida Lind [pushed]({COMPARE}) 50 commits to branch main.\n\n" + "\n".join(commit_line(i) for i in range(20))
           + "\n[and 30 more commit(s)]"),
    gitlab("Push Hook", "push_hook__remove_branch", "tern / survey-2027", "Ida Lind deleted branch survey-2027."),
    gitlab("Tag Push Hook", "tag_push_hook__add_tag", "tern", "Ida Lind pushed tag v0.9.0."),
    gitlab("Tag Push Hook", "tag_push_hook__remove_tag", "tern", "Ida Lind removed tag v0.9.0."),
    gitlab("Test Hook", "test_hook", "tern", "Webhook for **tern** has been configured successfully! :tada:"),
    gitlab("Issue Hook", "issue_hook__issue_created_without_assignee", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE}):\n\n~~~ quote\nPositions reset to 0,0 at 00:00 UTC.\n~~~"),
    gitlab("Issue Hook", "issue_hook__issue_created_without_assignee", "notifications",
           f"{PROJECT_LINK} Ida Lind created [issue #12 Tracks jump at midnight]({ISSUE}):\n\n~~~ quote\n"
           "Positions reset to 0,0 at 00:00 UTC.\n~~~", topic="notifications"),
    gitlab("Issue Hook", "issue_hook__issue_created_with_assignee", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE}) (assigned to Otto Berg):\n\n~~~ quote\n"
           "Positions reset to 0,0 at 00:00 UTC.\n~~~"),
    gitlab("Issue Hook", "issue_hook__issue_created_with_three_assignees", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE}) (assigned to Otto Berg, Ruth Vogel and Ida Lind):\n\n~~~ quote\n"
           "Positions reset to 0,0 at 00:00 UTC.\n~~~"),
    gitlab("Issue Hook", "issue_hook__issue_created_with_hidden_comment", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE}):\n\n~~~ quote\n\nPositions reset to 0,0 at 00:00 UTC.\n~~~"),
    gitlab("Issue Hook", "issue_hook__issue_created_with_null_description", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE})."),
    gitlab("Issue Hook", "issue_hook__confidential_issue_created", TOPIC_ISSUE,
           f"Ida Lind created [issue #12]({ISSUE}):\n\n~~~ quote\nPositions reset to 0,0 at 00:00 UTC.\n~~~"),
    gitlab("Issue Hook", "issue_hook__issue_updated", "tern / issue #12 Tracks jump at midnight UTC",
           f"Ida Lind updated [issue #12]({ISSUE})."),
    gitlab("Issue Hook", "issue_hook__issue_updated", "notifications",
           f"{PROJECT_LINK} Ida Lind updated [issue #12 Tracks jump at midnight UTC]({ISSUE}).", topic="notifications"),
    gitlab("Issue Hook", "issue_hook__issue_closed", TOPIC_ISSUE, f"Ida Lind closed [issue #12]({ISSUE})."),
    gitlab("Issue Hook", "issue_hook__issue_reopened", TOPIC_ISSUE, f"Ida Lind reopened [issue #12]({ISSUE})."),
    gitlab("Confidential Issue Hook", "confidential_issue_hook__issue_closed", TOPIC_ISSUE,
           f"Ida Lind closed [issue #12]({ISSUE})."),
    gitlab("Note Hook", "note_hook__commit_note", "tern",
           f"Ruth Vogel [commented]({H}/-/commit/{FULL[1]}#note_7700001) on [e2b7a9c4d1f]({H}/-/commit/{FULL[1]}):\n"
           "~~~ quote\nNice, this was overdue.\n~~~"),
    gitlab("Note Hook", "note_hook__merge_request_note", TOPIC_MR,
           f"Ruth Vogel [commented]({MR}#note_7700001) on [MR #7]({MR}):\n\n~~~ quote\n"
           "Could we keep the old filter behind a flag?\n~~~"),
    gitlab("Note Hook", "note_hook__merge_request_note", "tern / MR #7",
           f"Ruth Vogel [commented]({MR}#note_7700001) on [MR #7]({MR}):\n\n~~~ quote\n"
           "Could we keep the old filter behind a flag?\n~~~", use_merge_request_title="false"),
    gitlab("Note Hook", "note_hook__merge_request_note", "notifications",
           f"{PROJECT_LINK} Ruth Vogel [commented]({MR}#note_7700001) on [MR #7 Smooth tracks with a Kalman filter]({MR}):"
           "\n\n~~~ quote\nCould we keep the old filter behind a flag?\n~~~", topic="notifications"),
    gitlab("Note Hook", "note_hook__issue_note", TOPIC_ISSUE,
           f"Ruth Vogel [commented]({ISSUE}#note_7700001) on [issue #12]({ISSUE}):\n\n~~~ quote\n"
           "Seen on three devices so far.\n~~~"),
    gitlab("Confidential Note Hook", "note_hook__confidential_issue_note", "tern / issue #13 Token in logs",
           f"Ruth Vogel [commented]({H}/-/issues/13#note_7700001) on [issue #13]({H}/-/issues/13):\n\n~~~ quote\n"
           "Patched on staging.\n~~~"),
    gitlab("Note Hook", "note_hook__snippet_note", "tern / snippet #31 Projection helper",
           f"Ruth Vogel [commented]({H}/-/snippets/31#note_7700001) on [snippet #31]({H}/-/snippets/31):\n\n"
           "~~~ quote\nHandy, thanks!\n~~~"),
    gitlab("Note Hook", "note_hook__snippet_note_old", "tern / snippet #31 Projection helper",
           f"Ruth Vogel [commented]({H}/-/snippets/31#note_7700001) on [snippet #31]({H}/-/snippets/31):\n\n"
           "~~~ quote\nHandy, thanks!\n~~~"),
    gitlab("Note Hook", "note_hook__design_note", "tern / design map-v2.png",
           f"Ruth Vogel [commented]({H}/-/issues/12/designs/map-v2.png#note_7700009) on design "
           f"[map-v2.png]({H}/-/issues/12/designs/map-v2.png):\n\n~~~ quote\nThe legend overlaps the map.\n~~~"),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_created", TOPIC_MR,
           f"Ida Lind created [MR #7]({MR}) from `kalman` to `main` (assigned to Otto Berg):\n\n~~~ quote\n"
           "Replaces the moving average.\n~~~"),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_created", "tern / MR #7",
           f"Ida Lind created [MR #7]({MR}) from `kalman` to `main` (assigned to Otto Berg):\n\n~~~ quote\n"
           "Replaces the moving average.\n~~~", use_merge_request_title="false"),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_created_without_description", TOPIC_MR,
           f"Ida Lind created [MR #7]({MR}) from `kalman` to `main`."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_updated", TOPIC_MR,
           f"Ida Lind updated [MR #7]({MR}) (assigned to Otto Berg):\n\n~~~ quote\n"
           "Replaces the moving average; tuned on 2026 data.\n~~~"),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_added_commit", TOPIC_MR,
           f"Ida Lind added commit(s) to [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_merged", TOPIC_MR,
           f"Ida Lind merged [MR #7]({MR}) from `kalman` to `main`."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_merged", "notifications",
           f"{PROJECT_LINK} Ida Lind merged [MR #7 Smooth tracks with a Kalman filter]({MR}) from `kalman` to `main`.",
           topic="notifications"),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_closed", TOPIC_MR, f"Ida Lind closed [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_reopened", TOPIC_MR,
           f"Ida Lind reopened [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_approved", TOPIC_MR,
           f"Ida Lind approved [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_unapproved", TOPIC_MR,
           f"Ida Lind unapproved [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_approval", TOPIC_MR,
           f"Ida Lind added their approval for [MR #7]({MR})."),
    gitlab("Merge Request Hook", "merge_request_hook__merge_request_unapproval", TOPIC_MR,
           f"Ida Lind removed their approval for [MR #7]({MR})."),
    gitlab("Wiki Page Hook", "wiki_page_hook__wiki_page_created", "tern",
           f'Ida Lind created [wiki page "Field protocol"]({H}/-/wikis/field-protocol).'),
    gitlab("Wiki Page Hook", "wiki_page_hook__wiki_page_updated", "tern",
           f'Ida Lind updated [wiki page "Field protocol"]({H}/-/wikis/field-protocol).'),
    gitlab("Job Hook", "job_hook__build_created", "tern / kalman", "Build unit-tests from test stage was created."),
    gitlab("Job Hook", "job_hook__build_started", "tern / kalman", "Build unit-tests from test stage started."),
    gitlab("Job Hook", "job_hook__build_failed", "tern / kalman",
           "Build unit-tests from test stage changed status to failed."),
    gitlab("Build Hook", "build_hook__build_succeeded", "tern / kalman",
           "Build unit-tests from test stage changed status to success."),
    gitlab("Pipeline Hook", "pipeline_hook__pipeline_pending", "tern / kalman",
           f"[Pipeline (2201)]({H}/-/pipelines/2201) was created with build(s):\n"
           f"* [compile]({H}/-/jobs/3300) - success\n"
           f"  * built artifact: *dist.zip* [[Browse]({H}/-/jobs/3300/artifacts/browse)|"
           f"[Download]({H}/-/jobs/3300/artifacts/download)]\n"
           f"* [unit-tests]({H}/-/jobs/3301) - pending."),
    gitlab("Pipeline Hook", "pipeline_hook__pipeline_started", "tern / kalman",
           f"[Pipeline (2201)]({H}/-/pipelines/2201) started with build(s):\n"
           f"* [compile]({H}/-/jobs/3300) - success\n"
           f"  * built artifact: *dist.zip* [[Browse]({H}/-/jobs/3300/artifacts/browse)|"
           f"[Download]({H}/-/jobs/3300/artifacts/download)]\n"
           f"* [unit-tests]({H}/-/jobs/3301) - pending."),
    gitlab("Pipeline Hook", "pipeline_hook__pipeline_succeeded", "tern / kalman",
           f"[Pipeline (2201)]({H}/-/pipelines/2201) changed status to success with build(s):\n"
           f"* [compile]({H}/-/jobs/3300) - success\n"
           f"  * built artifact: *dist.zip* [[Browse]({H}/-/jobs/3300/artifacts/browse)|"
           f"[Download]({H}/-/jobs/3300/artifacts/download)]\n"
           f"* [unit-tests]({H}/-/jobs/3301) - pending."),
    gitlab("Release Hook", "release_hook__create", "tern",
           f"Release [Tern 1.0]({H}/-/releases/v1.0.0) for tag v1.0.0 was created.\n~~~ quote\n"
           "Kalman smoothing, faster exports.\n~~~"),
    gitlab("Release Hook", "release_hook__update", "tern",
           f"Release [Tern 1.0]({H}/-/releases/v1.0.0) for tag v1.0.0 was updated.\n~~~ quote\n"
           "Kalman smoothing, faster exports.\n~~~"),
    gitlab("Release Hook", "release_hook__delete", "tern", "Release Tern 1.0 for tag v1.0.0 was deleted."),
    gitlab("Feature Flag Hook", "feature_flag_hook__activated", "tern",
           f"ida activated the feature flag [new-map-tiles]({H}/-/feature_flags)."),
    gitlab("Feature Flag Hook", "feature_flag_hook__deactivated", "tern",
           f"ida deactivated the feature flag [new-map-tiles]({H}/-/feature_flags)."),
    gitlab("Resource Access Token Hook", "resource_access_token_hook__project", "tern",
           f"The access token [deploy-bot]({H}/-/settings/access_tokens) will expire on Jan 09, 2027."),
    gitlab("Resource Access Token Hook", "resource_access_token_hook__group", "Plover",
           "The access token [deploy-bot](https://gitlab.com/groups/plover/-/settings/access_tokens) will expire on "
           "Jan 09, 2027."),
    gitlab("Deployment Hook", "deployment_hook__running", "tern / production",
           f"[Ida Lind](https://gitlab.example.org/ida) started a new [deployment]({H}/-/jobs/3310):\n"
           f"> [4a8e2c6]({H}/-/commit/{FULL[2]}) Release 1.0"),
    gitlab("Deployment Hook", "deployment_hook__success", "tern / production",
           f"The [deployment]({H}/-/jobs/3310) was successful."),
    gitlab("Deployment Hook", "deployment_hook__failed", "tern / production", "The deployment failed."),
    gitlab("Deployment Hook", "deployment_hook__canceled", "tern / production",
           f"The [deployment]({H}/-/jobs/3310) was canceled."),
    gitlab("System Hook", "system_hook__merge_request_created", TOPIC_MR,
           f"Ida Lind created [MR #7]({MR}) from `kalman` to `main` (assigned to Otto Berg):\n\n~~~ quote\n"
           "Replaces the moving average.\n~~~"),
    gitlab("System Hook", "system_hook__push", "tern / main",
           f"Ida Lind [pushed]({COMPARE}) 1 commit to branch main.\n\n{commit_line(1)}"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.fixture}{'-' + '-'.join(c.query) if c.query else ''}" for c in CASES])
def test_gitlab_event(org, flask_client, case):
    """Does this GitLab hook post Zulip's topic and message?"""
    check_case(org, flask_client, "gitlab", case)


def test_gitlab_push_to_unlisted_branch_posts_nothing(org, flask_client):
    """Does branches= leave out pushes to other branches, answering success?"""
    check_ignored(org, flask_client, "gitlab", "push_hook", {"X-Gitlab-Event": "Push Hook"}, branches="dev,release")


def test_gitlab_unsupported_hook(org, flask_client):
    """Is a hook Zulip does not handle (emoji reactions) answered with Zulip's success note?"""
    body = check_ignored(org, flask_client, "gitlab", "emoji_hook", {"X-Gitlab-Event": "Emoji Hook"})
    assert body["msg"] == "The 'Emoji Hook' event isn't currently supported by the GitLab webhook; ignoring"


def test_gitlab_without_event_header(org, flask_client):
    """Is a request without X-GitLab-Event refused with Zulip's 400?"""
    bot_id, key = incoming_bot(org)
    response = post_fixture(flask_client, "gitlab", key, "push_hook", stream="Denmark")
    assert response.status_code == 400
    assert response.get_json()["msg"] == "Missing the HTTP event header 'X-GitLab-Event'"
    assert messages_from(bot_id) == []
