"""The sentences every git host's integration shares (GitHub, GitLab, Bitbucket, Gitea): pushes,
pull requests and issues, tags, releases and comments, worded as Zulip words them so that a
message reads the same whichever host sent it."""

from __future__ import annotations

import string
from collections import Counter
from typing import Any

TOPIC_WITH_BRANCH = "{repo} / {branch}"
TOPIC_WITH_PR_OR_ISSUE = "{repo} / {type} #{id} {title}"
TOPIC_WITH_RELEASE = "{repo} / {tag} {title}"

# Commits listed in one push message; the rest are counted.
COMMITS_LIMIT = 20
# Committers named in a push by others; the rest are "others".
COMMITTERS_LIMIT = 3

QUOTE = "\n~~~ quote\n{}\n~~~"


def short_sha(sha: str) -> str:
    return sha[:11]


def quote(text: str) -> str:
    """A quoted block, preceded by a newline (the callers add the colon)."""
    return QUOTE.format(text)


def commit_lines(commits: list[dict[str, Any]], is_truncated: bool = False) -> str:
    """One "* message (sha link)" line per commit (first line of its message), the rest counted."""
    lines = "".join(f"* {c['message'].partition(chr(10))[0]} ([{short_sha(c['sha'])}]({c.get('url')}))\n"
                    for c in commits[:COMMITS_LIMIT])
    if len(commits) > COMMITS_LIMIT:
        lines += f"[and {len(commits) - COMMITS_LIMIT} more commit(s)]"
    elif is_truncated:
        lines += "[and more commit(s)]"
    return lines.rstrip()


def committers(commits: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(name, count) by count then name; past three names, the rest as "others"."""
    counted = sorted(Counter(c["name"] for c in commits).items(), key=lambda item: (-item[1], item[0]))
    if len(counted) > COMMITTERS_LIMIT:
        others = sum(count for _name, count in counted[COMMITTERS_LIMIT:])
        counted = counted[:COMMITTERS_LIMIT] + [("others", others)]
    return counted


def push_commits_message(user_name: str, compare_url: str | None, branch: str, commits: list[dict[str, Any]],
                         *, is_truncated: bool = False, deleted: bool = False, force_push: bool = False,
                         repository_name: str | None = None, repository_url: str | None = None) -> str:
    """A push to a branch. `commits` are dicts of name, sha, url and message. With a repository
    name and URL, the branch is said to be "of [repo](url)" (for topics that do not name it)."""
    if not commits and deleted:
        return f"{user_name} [deleted]({compare_url}) the branch {branch}."
    push_type = "force pushed" if force_push else "pushed"
    if not commits:
        if compare_url:
            return f"{user_name} [{push_type}]({compare_url}) the branch {branch}."
        return f"{user_name} {push_type} the branch {branch}."
    noun = "commits" if len(commits) > 1 else "commit"
    pushed = (f"[{push_type}]({compare_url}) {len(commits)} {noun}" if compare_url
              else f"{push_type} {len(commits)} {noun}")
    text = f"{user_name} {pushed} to branch {branch}"
    text += f" of [{repository_name}]({repository_url})." if repository_name and repository_url else "."
    by = committers(commits)
    if not (len(by) == 1 and by[0][0] == user_name):
        details = "{} ({})".format(*by[0])
        for name, count in by[1:-1]:
            details += f", {name} ({count})"
        if len(by) > 1:
            details += " and {} ({})".format(*by[-1])
        text += f" Commits by {details}."
    return f"{text}\n\n{commit_lines(commits, is_truncated)}".rstrip()


def force_push_message(user_name: str, url: str, branch: str, head: str) -> str:
    return f"{user_name} [force pushed]({url}) to branch {branch}. Head is now {head}."


def create_branch_message(user_name: str, url: str | None, branch: str) -> str:
    if url is None:
        return f"{user_name} created {branch} branch."
    return f"{user_name} created [{branch}]({url}) branch."


def remove_branch_message(user_name: str, branch: str) -> str:
    return f"{user_name} deleted branch {branch}."


def assignee_string(assignees: list[dict[str, Any]]) -> str:
    """"a", "a and b", "a, b and c" of the assignees' usernames."""
    names = [a["username"] for a in assignees]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# Actions that read better as a phrase.
ACTION_PHRASES = {"approval": "added their approval for", "unapproval": "removed their approval for"}


def pull_request_message(*, user_name: str, action: str, url: str, number: int | None = None,
                         target_branch: str | None = None, base_branch: str | None = None,
                         message: str | None = None, assignee: str | None = None,
                         assignees: list[dict[str, Any]] | None = None, assignee_updated: str | None = None,
                         reviewer: str | None = None, type: str = "PR", title: str | None = None) -> str:
    """"user action [PR #n](url)", with the branches, the assignee and the quoted description;
    the title joins the link when the URL chose the topic (the topic no longer says which).
    `assignee_updated`: who was assigned ("assigned X to [PR #n]") or unassigned ("from")."""
    number_part = f" #{number}" if number is not None else ""
    title_part = f" {title}" if title is not None else ""
    whom = ""
    if assignee_updated is not None and action in ("assigned", "unassigned"):
        whom = f" {assignee_updated} {'to' if action == 'assigned' else 'from'}"
    text = f"{user_name} {ACTION_PHRASES.get(action, action)}{whom} [{type}{number_part}{title_part}]({url})"
    if target_branch and base_branch:
        text += f" from `{target_branch}` to `{base_branch}`"
    if assignees:
        text += f" (assigned to {assignee_string(assignees)})"
    elif assignee:
        text += f" (assigned to {assignee})"
    elif reviewer:
        text += f" (assigned reviewers: {reviewer})"
    punctuation = ":" if message else "."
    # A title may already end with punctuation of its own.
    if (assignees or assignee or (target_branch and base_branch) or title is None
            or title[-1] not in string.punctuation):
        text += punctuation
    if message:
        text += "\n" + quote(message)
    return text.rstrip()


def issue_message(*, user_name: str, action: str, url: str, number: int | None = None, message: str | None = None,
                  assignee: str | None = None, assignees: list[dict[str, Any]] | None = None,
                  assignee_updated: str | None = None, title: str | None = None) -> str:
    return pull_request_message(user_name=user_name, action=action, url=url, number=number, message=message,
                                assignee=assignee, assignees=assignees, assignee_updated=assignee_updated,
                                type="issue", title=title)


def issue_labeled_message(user_name: str, action: str, url: str, number: int, label: str, user_url: str,
                          title: str | None = None) -> str:
    """`action` is "added" or "removed"."""
    preposition = "to" if action == "added" else "from"
    item = f"Issue #{number} {title}" if title is not None else f"Issue #{number}"
    return f"[{user_name}]({user_url}) {action} the {label} label {preposition} [{item}]({url})."


def issue_milestoned_message(user_name: str, action: str, url: str, number: int, milestone: str,
                             milestone_url: str, user_url: str, title: str | None = None) -> str:
    """`action` is "added" or "removed"."""
    preposition = "to" if action == "added" else "from"
    item = f"issue #{number} {title}" if title is not None else f"issue #{number}"
    return (f"[{user_name}]({user_url}) {action} milestone [{milestone}]({milestone_url}) {preposition} "
            f"[{item}]({url}).")


def push_tag_message(user_name: str, tag: str, tag_url: str | None = None, action: str = "pushed") -> str:
    tag_part = f"[{tag}]({tag_url})" if tag_url else tag
    text = f"{user_name} {action} tag {tag_part}"
    return text if tag[-1] in string.punctuation else f"{text}."


def commit_comment_message(user_name: str, action: str, commit_url: str, sha: str,
                           message: str | None = None) -> str:
    text = f"{user_name} {action} on [{short_sha(sha)}]({commit_url})"
    text += ":" if message else "."
    if message:
        text += quote(message)
    return text


def release_message(user_name: str, action: str, tag: str, release_name: str, url: str) -> str:
    return f"{user_name} {action} release [{release_name}]({url}) for tag {tag}."


def release_message_without_user(action: str, tag: str, release_name: str, url: str | None) -> str:
    if url:
        return f"Release [{release_name}]({url}) for tag {tag} was {action}."
    return f"Release {release_name} for tag {tag} was {action}."


def setup_message(integration: str, user_name: str | None = None) -> str:
    """What a service's test delivery ("ping") posts."""
    text = f"{integration} webhook has been successfully configured"
    if user_name:
        text += f" by {user_name}"
    return f"{text}."
