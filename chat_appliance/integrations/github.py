"""GitHub: pushes, pull requests and issues (the X-GitHub-Event header names the event).
Topics follow the repository: `repo / branch` for pushes, `repo / PR #n title` and
`repo / issue #n title` for the others, so each piece of work keeps one topic."""

from chat_appliance.integrations.base import UnsupportedEvent, link, shorten

NAME = "github"
DEFAULT_TOPIC = "GitHub"
# Commits listed in one push message; the rest are counted.
MAX_COMMITS = 20
# Actions on pull requests and issues worth a message.
PR_ACTIONS = {"opened", "closed", "reopened", "edited", "ready_for_review", "review_requested", "synchronize",
              "assigned", "unassigned", "labeled", "unlabeled"}
ISSUE_ACTIONS = {"opened", "closed", "reopened", "edited", "assigned", "unassigned", "labeled", "unlabeled",
                 "deleted", "transferred", "pinned", "unpinned"}


def user_link(user):
    return link(user.get("login", "someone"), user.get("html_url"))


def format_push(payload):
    repo = payload["repository"]["name"]
    ref = payload.get("ref", "")
    branch = ref.split("/", 2)[2] if ref.startswith("refs/") and ref.count("/") >= 2 else ref
    pusher = payload.get("sender") or {"login": (payload.get("pusher") or {}).get("name", "someone")}
    commits = payload.get("commits") or []
    topic = f"{repo} / {branch}"
    if payload.get("deleted"):
        return topic, f"{user_link(pusher)} deleted branch {branch}."
    if payload.get("created") and not commits:
        return topic, f"{user_link(pusher)} created branch {branch}."
    verb = "force-pushed" if payload.get("forced") else "pushed"
    count = len(commits)
    noun = "commit" if count == 1 else "commits"
    lines = [f"{user_link(pusher)} {link(verb, payload.get('compare'))} {count} {noun} to branch {branch}."]
    if commits:
        lines.append("")
    for commit in commits[:MAX_COMMITS]:
        sha = commit.get("id", "")[:7]
        lines.append(f"* {shorten(commit.get('message'))} ({link(sha, commit.get('url'))})")
    if count > MAX_COMMITS:
        lines.append(f"[and {count - MAX_COMMITS} more commit(s)]")
    return topic, "\n".join(lines)


def format_pull_request(payload):
    action = payload.get("action")
    if action not in PR_ACTIONS:
        raise UnsupportedEvent(NAME, f"pull_request:{action}")
    pr = payload["pull_request"]
    repo = payload["repository"]["name"]
    if action == "closed" and pr.get("merged"):
        action = "merged"
    number = pr.get("number", payload.get("number"))
    title = shorten(pr.get("title"), 60)
    topic = f"{repo} / PR #{number} {title}"
    head = (pr.get("head") or {}).get("ref")
    base = (pr.get("base") or {}).get("ref")
    actor = payload.get("sender") or pr.get("user") or {}
    text = f"{user_link(actor)} {action.replace('_', ' ')} {link(f'PR #{number}', pr.get('html_url'))}"
    if action == "opened" and head and base:
        text += f" from `{head}` to `{base}`"
    text += "."
    if action == "opened" and pr.get("body"):
        text += f"\n\n~~~ quote\n{pr['body'].strip()}\n~~~"
    return topic, text


def format_issue(payload):
    action = payload.get("action")
    if action not in ISSUE_ACTIONS:
        raise UnsupportedEvent(NAME, f"issues:{action}")
    issue = payload["issue"]
    repo = payload["repository"]["name"]
    number = issue.get("number")
    topic = f"{repo} / issue #{number} {shorten(issue.get('title'), 60)}"
    actor = payload.get("sender") or issue.get("user") or {}
    text = f"{user_link(actor)} {action} {link(f'issue #{number}', issue.get('html_url'))}."
    if action == "opened" and issue.get("body"):
        text += f"\n\n~~~ quote\n{issue['body'].strip()}\n~~~"
    return topic, text


FORMATTERS = {"push": format_push, "pull_request": format_pull_request, "issues": format_issue}


def format_message(payload, headers):
    """Dispatch on X-GitHub-Event; `ping` (sent when a hook is set up) is acknowledged without a message."""
    event = headers.get("X-GitHub-Event", "")
    if event == "ping":
        return None, None
    formatter = FORMATTERS.get(event)
    if formatter is None:
        raise UnsupportedEvent(NAME, event or "unknown")
    try:
        return formatter(payload)
    except (KeyError, TypeError, AttributeError):
        raise UnsupportedEvent(NAME, f"malformed {event}") from None
