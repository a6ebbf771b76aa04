"""GoCD: a pipeline stage building, then passed or failed with its jobs by result, in the topic
"<pipeline> / <stage>". Other notification types (agents) post nothing."""

from __future__ import annotations

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import Integration, WebhookRequest


def commit_details(pipeline) -> str:
    cause = pipeline["build-cause"][0]
    git_config = cause["material"]["git-configuration"]
    sha = git.short_sha(cause["modifications"][0]["revision"])
    return f"[`{sha}`]({git_config['url']}/commit/{sha}) on branch `{git_config['branch']}`"


def format_stage(hook: WebhookRequest) -> tuple[str, str]:
    pipeline = hook.payload["data"]["pipeline"]
    stage = pipeline["stage"]
    topic = f"{pipeline['name']} / {stage['name']}"
    status = stage["state"].lower()
    head = f"{pipeline['name']} / {stage['name']}\n- **Commit**: {commit_details(pipeline)}\n" \
           f"- **Started**: <time:{stage['create-time']}>\n"
    if status == "building":
        return topic, f"**Pipeline {status}**: {head}"
    emoji = ":green_circle:" if stage["result"] == "Passed" else ":red_circle:"
    jobs: dict[str, list[str]] = {}
    for job in stage["jobs"]:
        jobs.setdefault(job["result"], []).append(f"`{job['name']}`")
    lines = "".join(f"- **{result}**: {', '.join(names)}\n" for result, names in jobs.items())
    return topic, f"{emoji} **Build {status}**: {head}- **Finished**: <time:{stage['last-transition-time']}>\n{lines}"


def find_event(hook: WebhookRequest) -> str | None:
    """Stage notifications only; GoCD's other types post nothing, as in Zulip."""
    return "stage" if hook.payload["type"] == "stage" else None


INTEGRATION = Integration(
    name="gocd",
    display_name="Gocd",
    description="GoCD pipeline stages: building, passed and failed, with their jobs.",
    find_event=find_event,
    formatters={"stage": format_stage},
)
