"""CircleCI: jobs and workflows completed, for projects on GitHub, Bitbucket and GitLab, in the
project's topic, with the commit that triggered them."""

from __future__ import annotations

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import InvalidPayload, Integration, WebhookRequest

OUTCOMES = {"success": "has succeeded", "failed": "has failed", "canceled": "was canceled",
            "unauthorized": "was unauthorized", "error": "had an error"}


def commit_details(pipeline) -> str:
    if "vcs" in pipeline:  # GitHub and Bitbucket
        vcs = pipeline["vcs"]
        revision = vcs["revision"]
        separator = "commit" if vcs["provider_name"] == "github" else "commits"
        link = f"{vcs['target_repository_url']}/{separator}/{revision}"
        branch, subject = vcs["branch"], vcs["commit"]["subject"]
        if not subject:  # triggered by hand: no commit of its own
            if not branch:
                return f"Triggered on the latest tag on [{git.short_sha(revision)}]({link})."
            return f"Triggered on `{branch}`'s HEAD on [{git.short_sha(revision)}]({link})."
        details, author = f"{git.short_sha(revision)}: {subject}", vcs["commit"]["author"]["name"]
    else:  # GitLab
        gitlab = pipeline["trigger_parameters"]["gitlab"]
        sha = gitlab["checkout_sha"]
        details, author = f"{git.short_sha(sha)}: {gitlab['commit_title']}", gitlab["commit_author_name"]
        link, branch = f"{gitlab['web_url']}/-/commit/{sha}", gitlab["branch"]
    return f"Triggered on [`{details}`]({link}) on branch `{branch}` by {author}."


def completed(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    pipeline = p["pipeline"]
    if "trigger_parameters" in pipeline and pipeline["trigger"]["type"] != "gitlab":
        raise InvalidPayload("Projects using this version control system provider aren't supported")
    details = commit_details(pipeline)
    if p["type"] == "job-completed":
        job = p["job"]
        head = f"Job `{job['name']}` within Pipeline #{pipeline['number']} {OUTCOMES.get(job['status'])}."
    else:
        workflow = p["workflow"]
        head = (f"Workflow [`{workflow['name']}`]({workflow['url']}) within Pipeline #{pipeline['number']} "
                f"{OUTCOMES.get(workflow['status'])}.")
    return p["project"]["name"], f"{head}\n\n{details}"


def ping(hook: WebhookRequest) -> tuple[str, str]:
    return "Test event", f"Webhook '{hook.payload['webhook']['name']}' test event successful."


INTEGRATION = Integration(
    name="circleci",
    display_name="CircleCI",
    description="CircleCI jobs and workflows completed, for projects on GitHub, Bitbucket and GitLab.",
    find_event=lambda hook: hook.payload["type"],
    formatters={"ping": ping, "job-completed": completed, "workflow-completed": completed},
)
