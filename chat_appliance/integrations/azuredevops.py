"""Azure DevOps: Azure Repos service hooks for pushes and pull requests (created, merged,
updated), worded as the other git hosts' messages are (git_messages)."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest
from chat_appliance.integrations.git_messages import (
    TOPIC_WITH_BRANCH,
    TOPIC_WITH_PR_OR_ISSUE,
    pull_request_message,
    push_commits_message,
)


def branch_name(ref: str) -> str:
    return ref.replace("refs/heads/", "")


def push_branch(resource) -> str:
    return branch_name(resource["refUpdates"][0]["name"])


def format_push(hook: WebhookRequest) -> tuple[str, str]:
    resource = hook.payload["resource"]
    repo_url = resource["repository"]["remoteUrl"]
    update = resource["refUpdates"][0]
    compare_url = (f"{repo_url}/branchCompare?baseVersion=GC{update['oldObjectId']}"
                   f"&targetVersion=GC{update['newObjectId']}&_a=files")
    commits = [{"name": commit["author"]["name"], "sha": commit["commitId"],
                "url": f"{repo_url}/commit/{commit['commitId']}", "message": commit["comment"]}
               for commit in resource.get("commits", [])]
    branch = push_branch(resource)
    body = push_commits_message(resource["pushedBy"]["displayName"], compare_url, branch, commits)
    return TOPIC_WITH_BRANCH.format(repo=resource["repository"]["name"], branch=branch), body


def pull_request_topic(resource) -> str:
    return TOPIC_WITH_PR_OR_ISSUE.format(repo=resource["repository"]["name"], type="PR",
                                         id=resource["pullRequestId"], title=resource["title"])


def pull_request_common(resource) -> dict:
    return {"user_name": resource["createdBy"]["displayName"], "url": resource["_links"]["web"]["href"],
            "number": resource["pullRequestId"], "title": resource["title"]}


def format_pull_request_created(hook: WebhookRequest) -> tuple[str, str]:
    resource = hook.payload["resource"]
    body = pull_request_message(action="created", target_branch=branch_name(resource["sourceRefName"]),
                                base_branch=branch_name(resource["targetRefName"]),
                                message=resource.get("description") or None, **pull_request_common(resource))
    return pull_request_topic(resource), body


def format_pull_request_merged(hook: WebhookRequest) -> tuple[str, str]:
    resource = hook.payload["resource"]
    body = pull_request_message(action="merged", target_branch=branch_name(resource["sourceRefName"]),
                                base_branch=branch_name(resource["targetRefName"]), **pull_request_common(resource))
    return pull_request_topic(resource), body


def format_pull_request_updated(hook: WebhookRequest) -> tuple[str, str]:
    resource = hook.payload["resource"]
    body = pull_request_message(action="updated", message=hook.payload["detailedMessage"]["markdown"],
                                **pull_request_common(resource))
    return pull_request_topic(resource), body


FORMATTERS = {
    "git.push": format_push,
    "git.pullrequest.created": format_pull_request_created,
    "git.pullrequest.merged": format_pull_request_merged,
    "git.pullrequest.updated": format_pull_request_updated,
}


def find_event(hook: WebhookRequest) -> str | None:
    """The service hook's eventType; None for a push to a branch not in branches=, and for a
    "merged" hook that tells only a merge attempt (Azure sends one when a merge conflict is
    found or cleared), which Zulip does not post."""
    p = hook.payload
    event = p["eventType"]
    if event == "git.push" and not hook.branch_wanted(push_branch(p["resource"])):
        return None
    if event == "git.pullrequest.merged" and (p["resource"]["status"] != "completed"
                                              or p["resource"]["mergeStatus"] != "succeeded"):
        return None
    if event not in FORMATTERS:
        raise UnsupportedEvent(event)
    return event


INTEGRATION = Integration(
    name="azuredevops",
    display_name="AzureDevOps",
    description="Azure DevOps (Azure Repos): pushes, and pull requests created, updated and merged.",
    find_event=find_event,
    formatters=FORMATTERS,
    options={"branches": "A comma-separated list of branches: pushes to other branches post nothing."},
    doc_url="https://learn.microsoft.com/en-us/azure/devops/service-hooks/events",
)
