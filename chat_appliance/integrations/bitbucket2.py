"""Bitbucket Cloud: the event is read from the payload (a push, a fork, a comment on a commit, a
commit status, an issue); pull request events and repository updates are told apart by the
X-Event-Key header ("pullrequest:approved", "repo:updated"). One push can touch several branches
and tags: each change is its own message, in its own topic."""

from __future__ import annotations

import re
import string

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import Integration, MissingEventHeader, UnsupportedEvent, WebhookRequest

PULL_REQUEST_ACTIONS = {"approved", "unapproved", "created", "updated", "rejected", "fulfilled", "comment_created",
                        "comment_updated", "comment_deleted"}


def user_info(user) -> str:
    """Since GDPR Bitbucket sends no username: the display name, else the nickname."""
    if "display_name" in user:
        return user["display_name"]
    if "nickname" in user:
        return user["nickname"]
    return "Unknown user"


def actor(p) -> str:
    return user_info(p["actor"])


def repo_name(p) -> str:
    return p["repository"]["name"]


def html(item) -> str:
    return item["links"]["html"]["href"]


def title_if(hook: WebhookRequest, title: str) -> str | None:
    return title if hook.topic_given else None


# --- pushes ----------------------------------------------------------------------------------


def changed_ref(change):
    return change["new"] or change["old"]


def push_change(p, change) -> tuple[str, str]:
    """The topic and message of one change of a push."""
    ref = changed_ref(change)
    if ref["type"] == "tag":
        if change.get("new"):
            tag, action = change["new"], "pushed"
        else:
            tag, action = change["old"], "removed"
        return repo_name(p), git.push_tag_message(actor(p), tag["name"], tag_url=html(tag), action=action)
    topic = git.TOPIC_WITH_BRANCH.format(repo=repo_name(p), branch=ref["name"])
    if change["new"] is None:  # the branch was deleted
        return topic, git.remove_branch_message(actor(p), change["old"]["name"])
    if change["forced"]:
        return topic, git.force_push_message(actor(p), html(change), change["new"]["name"],
                                             change["new"]["target"]["hash"])
    commits = [{"name": commit_author(c), "sha": c["hash"], "url": html(c), "message": c["message"]}
               for c in change["commits"]]
    return topic, git.push_commits_message(actor(p), html(change), change["new"]["name"], commits,
                                           is_truncated=change["truncated"])


def commit_author(commit) -> str:
    if "user" in commit["author"]:
        return user_info(commit["author"]["user"])
    return commit["author"]["raw"].split()[0]


def push(hook: WebhookRequest) -> list[tuple[str, str]]:
    p = hook.payload
    return [push_change(p, change) for change in p["push"]["changes"]]


# --- the rest --------------------------------------------------------------------------------


def fork(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{actor(p)} forked the repository into [{p['fork']['full_name']}]({html(p['fork'])})."


def commit_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    comment = p["comment"]
    return git.commit_comment_message(actor(p), f"[commented]({html(comment)})", html(comment["commit"]),
                                      comment["commit"]["hash"], comment["content"]["raw"])


def commit_status(hook: WebhookRequest) -> str:
    p = hook.payload
    status = p["commit_status"]
    commit_id = status["links"]["commit"]["href"].split("/")[-1]
    commit_info = f"[{git.short_sha(commit_id)}]({html(p['repository'])}/commits/{commit_id})"
    return f"[System {status['key']}]({status['url']}) changed status of {commit_info} to {status['state']}."


def issue_action(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        item = p["issue"]
        assignee = message = None
        if action == "created":
            if item["assignee"]:
                assignee = user_info(item["assignee"])
            message = item["content"]["raw"]
        return git.issue_message(user_name=actor(p), action=action, url=html(item), number=item["id"],
                                 message=message, assignee=assignee, title=title_if(hook, item["title"]))
    return body


def issue_commented(hook: WebhookRequest) -> str:
    return issue_action(f"[commented]({html(hook.payload['comment'])}) on")(hook)


def pull_request_action(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        pr = p["pullrequest"]
        source = target = None
        if action == "merged":
            source, target = pr["source"]["branch"]["name"], pr["destination"]["branch"]["name"]
        return git.pull_request_message(user_name=actor(p), action=action, url=html(pr), number=pr["id"],
                                        target_branch=source, base_branch=target, title=title_if(hook, pr["title"]))
    return body


def pull_request_created_or_updated(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        pr = p["pullrequest"]
        # Bitbucket has reviewers, not assignees: the first reviewer stands for them.
        assignee = user_info(pr["reviewers"][0]) if pr["reviewers"] else None
        created = action == "created"
        return git.pull_request_message(
            user_name=actor(p), action=action, url=html(pr), number=pr["id"],
            target_branch=pr["source"]["branch"]["name"] if created else None,
            base_branch=pr["destination"]["branch"]["name"] if created else None,
            message=pr["description"], assignee=assignee, title=title_if(hook, pr["title"]))
    return body


def pull_request_comment(action: str | None):
    """A comment created (action None), updated or deleted on a pull request."""
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        pr = p["pullrequest"]
        link = html(p["comment"])
        what = f"[commented]({link})" if action is None else f"{action} a [comment]({link})"
        return git.pull_request_message(user_name=actor(p), action=f"{what} on", url=html(pr), number=pr["id"],
                                        message=p["comment"]["content"]["raw"], title=title_if(hook, pr["title"]))
    return body


REPO_CHANGES = ["website", "name", "links", "language", "full_name", "description"]


def repo_updated(hook: WebhookRequest) -> str:
    p = hook.payload
    body = ""
    for change in REPO_CHANGES:
        values = p["changes"].get(change) or {}
        new, old = values.get("new"), values.get("old")
        label = "full name" if change == "full_name" else change
        if new and old:
            line = (f"{actor(p)} changed the {label} of the **{repo_name(p)}** repo from **{old}** to **{new}**")
        elif new:
            line = f"{actor(p)} changed the {label} of the **{repo_name(p)}** repo to **{new}**"
        else:
            continue
        # The new value may end with punctuation of its own.
        body += (line if str(new)[-1] in string.punctuation else f"{line}.") + "\n"
    return body


BODIES = {
    "fork": fork,
    "commit_comment": commit_comment,
    "change_commit_status": commit_status,
    "issue_updated": issue_action("updated"),
    "issue_created": issue_action("created"),
    "issue_commented": issue_commented,
    "pull_request_created": pull_request_created_or_updated("created"),
    "pull_request_updated": pull_request_created_or_updated("updated"),
    "pull_request_approved": pull_request_action("approved"),
    "pull_request_unapproved": pull_request_action("unapproved"),
    "pull_request_fulfilled": pull_request_action("merged"),
    "pull_request_rejected": pull_request_action("rejected"),
    "pull_request_comment_created": pull_request_comment(None),
    "pull_request_comment_updated": pull_request_comment("updated"),
    "pull_request_comment_deleted": pull_request_comment("deleted"),
    "repo:updated": repo_updated,
}


def topic_for(p, event: str) -> str:
    if event.startswith("pull_request"):
        pr = p["pullrequest"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="PR", id=pr["id"], title=pr["title"])
    if event.startswith("issue"):
        item = p["issue"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="issue", id=item["id"], title=item["title"])
    return repo_name(p)


def formatter(event: str):
    def format_event(hook: WebhookRequest) -> tuple[str, str]:
        return topic_for(hook.payload, event), BODIES[event](hook)
    return format_event


def event_key(hook: WebhookRequest) -> str:
    key = hook.header("X-Event-Key")
    if key is None:
        raise MissingEventHeader("X-Event-Key")
    return key


def find_event(hook: WebhookRequest) -> str | None:
    p = hook.payload
    if "push" in p:
        changes = p["push"]["changes"]
        if not changes:  # nothing was pushed
            return None
        last = changed_ref(changes[-1])
        if last["type"] != "tag" and not hook.branch_wanted(last["name"]):
            return None
        return "push"
    if "fork" in p:
        return "fork"
    if "comment" in p and "commit" in p:
        return "commit_comment"
    if "commit_status" in p:
        return "change_commit_status"
    if "issue" in p:
        if "changes" in p:
            return "issue_updated"
        return "issue_commented" if "comment" in p else "issue_created"
    key = event_key(hook)
    if "pullrequest" in p:
        match = re.match(r"pullrequest:(?P<action>.*)$", key)
        if match and match.group("action") in PULL_REQUEST_ACTIONS:
            return f"pull_request_{match.group('action')}"
    elif key == "repo:updated":
        return key
    raise UnsupportedEvent(key)


INTEGRATION = Integration(
    name="bitbucket2",
    display_name="Bitbucket2",
    description="Pushes, pull requests, issues, comments, forks and build statuses from Bitbucket Cloud.",
    find_event=find_event,
    formatters={"push": push, **{event: formatter(event) for event in BODIES}},
    options={"branches": "Comma-separated branch names: pushes to other branches post nothing."},
    unquote_url_parameters=True,
)
