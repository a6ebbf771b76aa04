"""GitHub: the X-GitHub-Event header names the event, refined by the payload's action (a pull
request opened, closed or assigned is a different message). Topics follow Zulip's: `repo /
branch` for pushes, `repo / PR #n title` and `repo / issue #n title` for pull requests and
issues, the repository's name for the rest."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest

NAME = "GitHub"

IGNORED_EVENTS = frozenset({"check_suite", "label", "meta", "milestone", "organization", "project_card",
                            "repository_vulnerability_alert"})
IGNORED_PULL_REQUEST_ACTIONS = {"approved", "converted_to_draft", "labeled", "review_request_removed", "unlabeled"}
# Documented team actions that Zulip does not post (team_add covers a repository added).
IGNORED_TEAM_ACTIONS = {"added_to_repository", "created", "deleted", "removed_from_repository"}
SPONSORS_EVENTS = {"cancelled", "created", "edited", "pending_cancellation", "pending_tier_change", "tier_changed"}


def sender(p) -> str:
    return p["sender"]["login"]


def sender_url(p) -> str:
    return p["sender"]["html_url"]


def repo_name(p) -> str:
    return p["repository"]["name"]


def repo_full_name(p) -> str:
    return p["repository"]["full_name"]


def branch_of(ref: str) -> str:
    return re.sub(r"^refs/heads/", "", ref)


def tag_of(ref: str) -> str:
    return re.sub(r"^refs/tags/", "", ref)


def title_if(hook: WebhookRequest, title: str) -> str | None:
    """The item's title goes into the message when the URL chose the topic."""
    return title if hook.topic_given else None


def is_pull_request_comment(p) -> bool:
    # A comment on a pull request arrives as issue_comment, its issue carrying "pull_request".
    return "pull_request" in p["issue"]


# --- pull requests ---------------------------------------------------------------------------


def opened_or_updated_pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    action = p["action"]
    if action == "synchronize":
        action = "updated"
    assignee = pr["assignee"]["login"] if pr.get("assignee") else None
    description = pr["body"] if "body" in p.get("changes", {}) or action == "opened" else None
    target = base = None
    if action in ("opened", "merged"):
        target, base = pr["head"]["label"], pr["base"]["label"]
    return git.pull_request_message(user_name=sender(p), action=action, url=pr["html_url"], target_branch=target,
                                    base_branch=base, message=description, assignee=assignee,
                                    number=pr["number"], title=title_if(hook, pr["title"]))


def assigned_or_unassigned_pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    # Zulip names who was assigned to a pull request, not who was unassigned from it.
    assignee = p["assignee"]["login"] if p["action"] == "assigned" else None
    return git.pull_request_message(user_name=sender(p), action=p["action"], url=pr["html_url"],
                                    number=pr["number"], title=title_if(hook, pr["title"]),
                                    assignee_updated=assignee)


def closed_pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    action = "merged" if pr["merged"] else "closed without merge"
    return git.pull_request_message(user_name=sender(p), action=action, url=pr["html_url"], number=pr["number"],
                                    title=title_if(hook, pr["title"]))


def locked_or_unlocked_pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    if p["action"] == "unlocked":
        return f"{sender(p)} has unlocked [PR #{pr['number']}]({pr['html_url']})."
    return (f"{sender(p)} has locked [PR #{pr['number']}]({pr['html_url']}) as {pr.get('active_lock_reason') or None} "
            "and limited conversation to collaborators.")


def pull_request_auto_merge(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    state = "disabled" if p["action"] == "auto_merge_disabled" else "enabled"
    return f"{sender(p)} has {state} auto merge for [PR #{pr['number']}]({pr['html_url']})."


def pull_request_ready_for_review(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    return f"**{sender(p)}** has marked [PR #{pr['number']}]({pr['html_url']}) as ready for review."


def pull_request_review(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    return git.pull_request_message(user_name=sender(p), action="submitted", url=p["review"]["html_url"],
                                    type="PR review", title=title_if(hook, f"for #{pr['number']} {pr['title']}"),
                                    message=p["review"]["body"])


def pull_request_review_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    message = p["comment"]["body"] if p["action"] == "created" else None
    return git.pull_request_message(user_name=sender(p), action=p["action"], url=p["comment"]["html_url"],
                                    message=message, type="PR review comment",
                                    title=title_if(hook, f"on #{pr['number']} {pr['title']}"))


def pull_request_review_requested(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    if "requested_reviewer" in p:
        reviewer = p["requested_reviewer"]
        reviewers = f"[{reviewer['login']}]({reviewer['html_url']})"
    else:
        team = p["requested_team"]
        reviewers = f"[{team['name']}]({team['html_url']})"
    item = f"PR #{pr['number']} {pr['title']}" if hook.topic_given else f"PR #{pr['number']}"
    return f"**{sender(p)}** requested {reviewers} for a review on [{item}]({pr['html_url']})."


# --- issues and comments ---------------------------------------------------------------------


def issue(hook: WebhookRequest) -> str:
    p = hook.payload
    action = p["action"]
    item = p["issue"]
    return git.issue_message(user_name=sender(p), action=action, url=item["html_url"], number=item["number"],
                             message=None if action in ("assigned", "unassigned") else item["body"],
                             title=title_if(hook, item["title"]),
                             assignee_updated=p["assignee"]["login"] if "assignee" in p else None)


def issue_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    item = p["issue"]
    return git.pull_request_message(user_name=sender(p), action=comment_action(p), url=item["html_url"],
                                    number=item["number"], message=p["comment"]["body"],
                                    title=title_if(hook, item["title"]),
                                    type="PR" if is_pull_request_comment(p) else "issue")


def comment_action(p) -> str:
    """"[commented](url) on" or "edited a [comment](url) on"."""
    action = "[commented]" if p["action"] == "created" else f"{p['action']} a [comment]"
    return f"{action}({p['comment']['html_url']}) on"


def issue_labeled_or_unlabeled(hook: WebhookRequest) -> str:
    p = hook.payload
    item = p["issue"]
    return git.issue_labeled_message(sender(p), "added" if p["action"] == "labeled" else "removed",
                                     item["html_url"], item["number"], p["label"]["name"], sender_url(p),
                                     title_if(hook, item["title"]))


def issue_milestoned_or_demilestoned(hook: WebhookRequest) -> str:
    p = hook.payload
    item = p["issue"]
    return git.issue_milestoned_message(sender(p), "added" if p["action"] == "milestoned" else "removed",
                                        item["html_url"], item["number"], p["milestone"]["title"],
                                        p["milestone"]["html_url"], sender_url(p), title_if(hook, item["title"]))


def issue_transferred(hook: WebhookRequest) -> str:
    p = hook.payload
    item, changes = p["issue"], p["changes"]
    return (f"{sender(p)} transferred [issue #{item['number']} {item['title']}]({item['html_url']}) to "
            f"[{changes['new_repository']['full_name']}/#{changes['new_issue']['number']}]"
            f"({changes['new_issue']['html_url']}).")


def issue_opened_via_transfer(hook: WebhookRequest) -> str:
    p = hook.payload
    item, changes = p["issue"], p["changes"]
    return (f"[Issue #{item['number']} {item['title']}]({item['html_url']}) was transferred from "
            f"[{changes['old_repository']['full_name']}#{changes['old_issue']['number']}]"
            f"({changes['old_issue']['html_url']}).")


def commit_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    comment = p["comment"]
    url = comment["html_url"]
    return git.commit_comment_message(sender(p), f"[commented]({url})", url.split("#", 1)[0], comment["commit_id"],
                                      comment["body"])


def discussion(hook: WebhookRequest) -> str:
    p = hook.payload
    d = p["discussion"]
    return (f"{sender(p)} created [discussion #{d['number']}]({d['html_url']}) in {d['category']['name']}:\n\n"
            f"~~~ quote\n### {d['title']}\n{d['body']}\n~~~")


def discussion_comment(hook: WebhookRequest) -> str:
    p = hook.payload
    d = p["discussion"]
    return git.pull_request_message(user_name=sender(p), action=comment_action(p), url=d["html_url"],
                                    number=d["number"], message=p["comment"]["body"],
                                    title=title_if(hook, d["title"]), type="discussion")


# --- pushes, branches, tags, releases --------------------------------------------------------


def push_commits(hook: WebhookRequest) -> str:
    p = hook.payload
    commits = [{"name": c["author"].get("username") or c["author"]["name"], "sha": c["id"], "url": c["url"],
                "message": c["message"]} for c in p["commits"]]
    return git.push_commits_message(sender(p), p["compare"], branch_of(p["ref"]), commits, deleted=p["deleted"],
                                    force_push=p["forced"])


def push_tags(hook: WebhookRequest) -> str:
    p = hook.payload
    return git.push_tag_message(sender(p), tag_of(p["ref"]), action="pushed" if p["created"] else "removed")


def create_or_delete(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        return f"{sender(p)} {action} {p['ref_type']} {p['ref']}.".rstrip()
    return body


def release(hook: WebhookRequest) -> str:
    p = hook.payload
    r = p["release"]
    # Not every release has a name: the tag stands for it then.
    return git.release_message(sender(p), p["action"], r["tag_name"], r["name"] or r["tag_name"], r["html_url"])


# --- repository, organization, deployments ---------------------------------------------------


def membership(hook: WebhookRequest) -> str:
    p = hook.payload
    action, member = p["action"], p["member"]
    preposition = "from" if action == "removed" else "to"
    return (f"{sender(p)} {action} [{member['login']}]({member['html_url']}) {preposition} the "
            f"{p['team']['name']} team.")


def member(hook: WebhookRequest) -> str:
    p = hook.payload
    return (f"{sender(p)} {p['action']} [{p['member']['login']}]({p['member']['html_url']}) to "
            f"[{repo_name(p)}]({p['repository']['html_url']}).")


def fork(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)} forked [{p['forkee']['name']}]({p['forkee']['html_url']})."


def deployment(hook: WebhookRequest) -> str:
    return f"{sender(hook.payload)} created new deployment."


def deployment_status(hook: WebhookRequest) -> str:
    return f"Deployment changed status to {hook.payload['deployment_status']['state']}."


def public(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)} made the repository [{repo_full_name(p)}]({p['repository']['html_url']}) public."


def wiki_pages(hook: WebhookRequest) -> str:
    p = hook.payload
    pages = "".join(f"* {page['action']} [{page['title']}]({page['html_url']})\n" for page in p["pages"])
    return f"{sender(p)}:\n{pages.rstrip()}"


def watch(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)} starred the repository [{repo_full_name(p)}]({p['repository']['html_url']})."


def star(hook: WebhookRequest) -> str:
    p = hook.payload
    action = "starred" if p["action"] == "created" else "unstarred"
    return (f"[{sender(p)}]({sender_url(p)}) {action} the repository "
            f"[{repo_full_name(p)}]({p['repository']['html_url']}).")


def repository(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)} {p['action']} the repository [{repo_full_name(p)}]({p['repository']['html_url']})."


def team_add(hook: WebhookRequest) -> str:
    p = hook.payload
    return (f"The repository [{repo_full_name(p)}]({p['repository']['html_url']}) was added to team "
            f"{p['team']['name']}.")


def team(hook: WebhookRequest) -> str:
    p = hook.payload
    changes = p["changes"]
    if "description" in changes:
        return f"**{sender(p)}** changed the team description to:\n\n~~~ quote\n{p['team']['description']}\n~~~"
    if "name" in changes:
        return f"Team `{changes['name']['from']}` was renamed to `{p['team']['name']}`."
    if "privacy" in changes:
        return f"Team visibility changed to `{p['team']['privacy']}`"
    # Something else changed: say what, so people know to look on GitHub.
    return f"Team has changes to `{'/'.join(sorted(changes))}` data."


def page_build(hook: WebhookRequest) -> str:
    p = hook.payload
    build = p["build"]
    status = build["status"]
    actions = {"null": "has yet to be built", "building": "is being built", "errored": "has failed: {}",
               "built": "has finished building"}
    action = actions.get(status, f"is {status}")
    if build["error"]["message"]:
        action = action.format(git.quote(build["error"]["message"]))
    return f"GitHub Pages build, triggered by {build['pusher']['login']}, {action}."


def status(hook: WebhookRequest) -> str:
    p = hook.payload
    state = f"[{p['state']}]({p['target_url']})" if p["target_url"] else p["state"]
    return f"[{git.short_sha(p['sha'])}]({p['commit']['html_url']}) changed its status to {state}."


def check_run(hook: WebhookRequest) -> str:
    p = hook.payload
    run = p["check_run"]
    commit_url = f"{p['repository']['html_url']}/commit/{run['head_sha']}"
    return (f"Check [{run['name']}]({run['html_url']}) {run['status']} ({run['conclusion']}). "
            f"([{git.short_sha(run['head_sha'])}]({commit_url}))")


def ping(hook: WebhookRequest) -> str:
    return git.setup_message(NAME, sender(hook.payload))


# --- GitHub Sponsors -------------------------------------------------------------------------


def tier(p) -> str:
    return p["sponsorship"]["tier"]["name"]


def prior_tier(p) -> str:
    return p["changes"]["tier"]["from"]["name"]


def effective_date(p) -> str:
    day = datetime.strptime(p["effective_date"][:10], "%Y-%m-%d").replace(tzinfo=timezone.utc)
    return day.strftime("%B %d, %Y")


def sponsorship_cancelled(hook: WebhookRequest) -> str:
    return f"{sender(hook.payload)} cancelled their {tier(hook.payload)} subscription."


def sponsorship_created(hook: WebhookRequest) -> str:
    return f"{sender(hook.payload)} subscribed for {tier(hook.payload)}."


def sponsorship_edited(hook: WebhookRequest) -> str:
    p = hook.payload
    return (f"{sender(p)} changed who can see their sponsorship from {p['changes']['privacy_level']['from']} to "
            f"{p['sponsorship']['privacy_level']}.")


def sponsorship_pending_cancellation(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)}'s {tier(p)} subscription will be cancelled on {effective_date(p)}."


def sponsorship_pending_tier_change(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)}'s subscription will change from {prior_tier(p)} to {tier(p)} on {effective_date(p)}."


def sponsorship_tier_changed(hook: WebhookRequest) -> str:
    p = hook.payload
    return f"{sender(p)} changed their subscription from {prior_tier(p)} to {tier(p)}."


# --- events and topics -----------------------------------------------------------------------


BODIES = {
    "commit_comment": commit_comment,
    "closed_pull_request": closed_pull_request,
    "create": create_or_delete("created"),
    "check_run": check_run,
    "delete": create_or_delete("deleted"),
    "deployment": deployment,
    "deployment_status": deployment_status,
    "discussion": discussion,
    "discussion_comment": discussion_comment,
    "fork": fork,
    "gollum": wiki_pages,
    "issue_comment": issue_comment,
    "issue_labeled_or_unlabeled": issue_labeled_or_unlabeled,
    "issue_milestoned_or_demilestoned": issue_milestoned_or_demilestoned,
    "issues_opened_via_transfer": issue_opened_via_transfer,
    "issues_transferred": issue_transferred,
    "issues": issue,
    "member": member,
    "membership": membership,
    "opened_pull_request": opened_or_updated_pull_request,
    "updated_pull_request": opened_or_updated_pull_request,
    "assigned_or_unassigned_pull_request": assigned_or_unassigned_pull_request,
    "page_build": page_build,
    "ping": ping,
    "public": public,
    "pull_request_ready_for_review": pull_request_ready_for_review,
    "pull_request_review": pull_request_review,
    "pull_request_review_comment": pull_request_review_comment,
    "pull_request_review_requested": pull_request_review_requested,
    "pull_request_auto_merge": pull_request_auto_merge,
    "locked_or_unlocked_pull_request": locked_or_unlocked_pull_request,
    "push_commits": push_commits,
    "push_tags": push_tags,
    "release": release,
    "repository": repository,
    "star": star,
    "status": status,
    "team": team,
    "team_add": team_add,
    "watch": watch,
    "cancelled": sponsorship_cancelled,
    "created": sponsorship_created,
    "edited": sponsorship_edited,
    "pending_cancellation": sponsorship_pending_cancellation,
    "pending_tier_change": sponsorship_pending_tier_change,
    "tier_changed": sponsorship_tier_changed,
}


def topic_for(p, event: str) -> str:
    if "pull_request" in event:
        pr = p["pull_request"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="PR", id=pr["number"], title=pr["title"])
    if event.startswith("issue"):
        item = p["issue"]
        kind = "PR" if is_pull_request_comment(p) else "issue"
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type=kind, id=item["number"], title=item["title"])
    if event.startswith("deployment"):
        return f"{repo_name(p)} / Deployment on {p['deployment']['environment']}"
    if event == "membership":
        return f"{p['organization']['login']} organization"
    if event == "team":
        return f"team {p['team']['name']}"
    if event == "push_commits":
        return git.TOPIC_WITH_BRANCH.format(repo=repo_name(p), branch=branch_of(p["ref"]))
    if event == "gollum":
        return git.TOPIC_WITH_BRANCH.format(repo=repo_name(p), branch="wiki pages")
    if event == "ping" and not p.get("repository"):
        return p["organization"]["login"]
    if event == "check_run":
        return f"{repo_name(p)} / checks"
    if event.startswith("discussion"):
        d = p["discussion"]
        return f"{repo_name(p)} discussion #{d['number']}: {d['title']}"
    if event in SPONSORS_EVENTS:
        return "sponsors"
    return repo_name(p)


def formatter(event: str):
    """The body of `event` with its topic."""
    def format_event(hook: WebhookRequest) -> tuple[str, str]:
        return topic_for(hook.payload, event), BODIES[event](hook)
    return format_event


def pull_request_event(p) -> str | None:
    action = p["action"]
    named = {"opened": "opened_pull_request", "reopened": "opened_pull_request",
             "synchronize": "updated_pull_request", "edited": "updated_pull_request",
             "assigned": "assigned_or_unassigned_pull_request", "unassigned": "assigned_or_unassigned_pull_request",
             "closed": "closed_pull_request", "review_requested": "pull_request_review_requested",
             "ready_for_review": "pull_request_ready_for_review", "locked": "locked_or_unlocked_pull_request",
             "unlocked": "locked_or_unlocked_pull_request", "auto_merge_enabled": "pull_request_auto_merge",
             "auto_merge_disabled": "pull_request_auto_merge"}
    if action in named:
        return named[action]
    if action in IGNORED_PULL_REQUEST_ACTIONS:
        return None
    raise UnsupportedEvent(f"pull_request:{action}")


def issues_event(p) -> str:
    action = p["action"]
    if action in ("labeled", "unlabeled"):
        return "issue_labeled_or_unlabeled"
    if action in ("milestoned", "demilestoned"):
        return "issue_milestoned_or_demilestoned"
    if action == "transferred":
        return "issues_transferred"
    if action == "opened" and p.get("changes", {}).get("old_issue"):
        return "issues_opened_via_transfer"
    return "issues"


def is_unchanged_comment_edit(header: str, p) -> bool:
    """GitHub sends "edited" for a comment whose text did not change (a task list ticked):
    nothing to say. Discussion comments are not filtered, as in Zulip."""
    return ("comment" in header and "discussion" not in header and p.get("action") == "edited"
            and p["changes"]["body"]["from"] == p["comment"]["body"])


def find_event(hook: WebhookRequest) -> str | None:
    """Zulip's event name for this request (a key of BODIES), or None to post nothing."""
    p = hook.payload
    header = hook.header("X-GitHub-Event") or ""
    if header in IGNORED_EVENTS:
        return None
    repo = p.get("repository")
    if isinstance(repo, dict) and repo.get("private") and hook.flag("ignore_private_repositories", False):
        return None
    if is_unchanged_comment_edit(header, p):
        return None
    if header == "pull_request":
        return pull_request_event(p)
    if header == "pull_request_review":
        # GitHub follows a submitted pull-request verdict with an empty "edited" one: one message is enough.
        return None if p["action"] == "edited" and not p.get("changes") else "pull_request_review"
    if header == "push":
        ref = p["ref"]
        if ref.startswith("refs/heads/gh-readonly-queue/"):  # the merge queue's own branches
            return None
        if not ref.startswith("refs/heads/"):
            return "push_tags"
        return "push_commits" if hook.branch_wanted(branch_of(ref)) else None
    if header == "check_run":
        return "check_run" if p["check_run"]["status"] == "completed" else None
    if header == "team":
        action = p["action"]
        if action == "edited":
            return "team"
        if action in IGNORED_TEAM_ACTIONS:
            return None
        raise UnsupportedEvent(f"unsupported team action {action}")
    if header == "issues":
        return issues_event(p)
    if header == "sponsorship":  # GitHub Sponsors names the change in the action
        return p["action"]
    if header in BODIES:
        return header
    raise UnsupportedEvent(f"{header}:{p.get('action', '???')}")


def integration(name: str, description: str) -> Integration:
    return Integration(
        name=name,
        display_name=NAME,
        description=description,
        event_header="X-GitHub-Event",
        find_event=find_event,
        formatters={event: formatter(event) for event in BODIES},
        ignored_events=IGNORED_EVENTS,
        options={
            "branches": "Comma-separated branch names: pushes to other branches post nothing.",
            "ignore_private_repositories": "true: events of private repositories post nothing.",
        },
    )


INTEGRATION = integration("github", "Pushes, pull requests, issues, reviews, releases, checks and more from GitHub.")

