"""Gitea: Gogs' events under the X-Gitea-Event header (integrations/gogs.py); its pull requests
name their sender and carry head and base objects."""

from __future__ import annotations

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import WebhookRequest
from chat_appliance.integrations.gogs import integration, title_if


def pull_request(hook: WebhookRequest) -> str:
    p = hook.payload
    pr = p["pull_request"]
    if pr["merged"]:
        user_name, action = pr["merged_by"]["username"], "merged"
    else:
        user_name, action = p["sender"]["username"], p["action"]
    source = target = None
    if action != "edited":
        source = pr["head"]["ref"] if "head" in pr else None
        target = pr["base"]["ref"] if "base" in pr else None
    assignee = pr["assignee"]["login"] if pr["assignee"] else None
    return git.pull_request_message(user_name=user_name, action=action, url=pr["html_url"], number=pr["number"],
                                    target_branch=source, base_branch=target, title=title_if(hook, pr["title"]),
                                    assignee=assignee, assignee_updated=assignee if action == "assigned" else None)


INTEGRATION = integration("gitea", "Gitea", "X-Gitea-Event", pull_request)
