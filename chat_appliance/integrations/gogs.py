"""Gogs: the X-Gogs-Event header names the event (push, create, pull_request, issues,
issue_comment, release). Gitea, a fork of Gogs, sends the same events (integrations/gitea.py)
and differs only in its pull requests."""

from __future__ import annotations

from collections.abc import Callable

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest


def title_if(hook: WebhookRequest, title: str) -> str | None:
    return title if hook.topic_given else None


def issue_url(p, number: int) -> str:
    return f"{p['repository']['html_url']}/issues/{number}"


def branch_of(p) -> str:
    return p["ref"].replace("refs/heads/", "")


def push(hook: WebhookRequest) -> str:
    p = hook.payload
    commits = [{"name": c["author"]["username"] or c["author"]["name"].split()[0], "sha": c["id"], "url": c["url"],
                "message": c["message"]} for c in p["commits"]]
    return git.push_commits_message(p["sender"]["username"], p["compare_url"], branch_of(p), commits)


def create(hook: WebhookRequest) -> str:
    p = hook.payload
    branch = p["ref"]
    return git.create_branch_message(p["sender"]["username"], f"{p['repository']['html_url']}/src/{branch}", branch)


def pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    if pr["merged"]:
        user_name, action = pr["merged_by"]["username"], "merged"
    else:
        user_name, action = pr["user"]["username"], p["action"]
    source = target = None
    if action != "edited":
        source, target = pr["head_branch"], pr["base_branch"]
    assignee = pr["assignee"]["login"] if p["action"] and pr["assignee"] else None
    return git.pull_request_message(user_name=user_name, action=action, url=pr["html_url"], number=pr["number"],
                                    target_branch=source, base_branch=target, title=title_if(hook, pr["title"]),
                                    assignee_updated=assignee)


def issues(hook: WebhookRequest) -> str:
    p = hook.payload
    item = p["issue"]
    assignee = item["assignee"]["login"] if item["assignee"] else None
    action = p["action"]
    return git.issue_message(user_name=p["sender"]["login"], action=action, url=issue_url(p, item["number"]),
                             number=item["number"], message=item["body"], assignee=assignee,
                             title=title_if(hook, item["title"]),
                             assignee_updated=assignee if action == "assigned" else None)


def issue_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    item, comment = p["issue"], p["comment"]
    action = "[commented]" if p["action"] == "created" else f"{p['action']} a [comment]"
    return git.issue_message(user_name=p["sender"]["login"], action=f"{action}({comment['html_url']}) on",
                             url=issue_url(p, item["number"]), number=item["number"], message=comment["body"],
                             title=title_if(hook, item["title"]))


def release(hook: WebhookRequest) -> str:
    p = hook.payload
    r = p["release"]
    # Zulip links the repository here, not the release.
    return git.release_message(r["author"]["username"], p["action"], r["tag_name"], r["name"],
                               p["repository"]["html_url"])


def topic_for(p, event: str) -> str:
    repo = p["repository"]["name"]
    if event == "push":
        return git.TOPIC_WITH_BRANCH.format(repo=repo, branch=branch_of(p))
    if event == "create":
        return git.TOPIC_WITH_BRANCH.format(repo=repo, branch=p["ref"])
    if event == "pull_request":
        # Zulip's topic carries the pull request's id, not its number.
        pr = p["pull_request"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo, type="PR", id=pr["id"], title=pr["title"])
    if event in ("issues", "issue_comment"):
        item = p["issue"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo, type="issue", id=item["number"], title=item["title"])
    return git.TOPIC_WITH_RELEASE.format(repo=repo, tag=p["release"]["tag_name"], title=p["release"]["name"])


def integration(name: str, display_name: str, header: str,
                pull_request_body: Callable[[WebhookRequest], str]) -> Integration:
    """The Gogs family's integration: `pull_request_body` is where Gogs and Gitea differ."""
    bodies = {"push": push, "create": create, "pull_request": pull_request_body, "issues": issues,
              "issue_comment": issue_comment, "release": release}

    def formatter(event: str):
        def format_event(hook: WebhookRequest) -> tuple[str, str]:
            return topic_for(hook.payload, event), bodies[event](hook)
        return format_event

    def find_event(hook: WebhookRequest) -> str | None:
        event = hook.header(header) or ""
        if event == "push" and not hook.branch_wanted(branch_of(hook.payload)):
            return None
        if event not in bodies:
            raise UnsupportedEvent(event)
        return event

    return Integration(
        name=name,
        display_name=display_name,
        description=f"Pushes, new branches, pull requests, issues, comments and releases from {display_name}.",
        event_header=header,
        find_event=find_event,
        formatters={event: formatter(event) for event in bodies},
        options={"branches": "Comma-separated branch names: pushes to other branches post nothing."},
    )


INTEGRATION = integration("gogs", "Gogs", "X-Gogs-Event", pull_request)
