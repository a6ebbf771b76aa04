"""TeamCity: builds reported by the tcWebHooks plugin in its "Legacy Webhook (JSON)" format, in
the build's topic ("<project> :: <build>", with the branch when TeamCity names one).

Zulip sends a personal build's result to its author as a direct message; an incoming webhook
here posts only where its URL says, so a personal build posts nothing (as in Zulip when the
author is not found). A payload in another of the plugin's formats (Slack's, say) has no
"build" and posts nothing either."""

from __future__ import annotations

from chat_appliance.integrations.base import AnomalousPayload, Integration, WebhookRequest


def status_text(build) -> str:
    result, delta, status = build["buildResult"], build["buildResultDelta"], build["buildStatus"]
    if result == "success":
        return "has been fixed! :thumbs_up:" if delta == "fixed" else "was successful! :thumbs_up:"
    if result == "failure":
        if delta == "broken":
            return f"is broken with status {status}! :thumbs_down:"
        return f"is still broken with status {status}! :thumbs_down:"
    if result == "running":
        return "has started."
    raise AnomalousPayload()


def is_personal(build) -> bool:
    return any(prop["name"] == "env.BUILD_IS_PERSONAL" and prop["value"] == "true"
               for prop in build.get("teamcityProperties") or [])


def format_build(hook: WebhookRequest) -> tuple[str, str] | None:
    build = hook.payload["build"]
    if is_personal(build):
        return None
    name, log = build["buildFullName"], build["buildStatusUrl"]
    body = (f"{name} build {build['buildNumber']} {status_text(build)} See "
            f"[changes]({log}&tab=buildChangesDiv) and [build log]({log}).")
    topic = f"{name} ({build['branchDisplayName']})" if "branchDisplayName" in build else name
    return topic, body


def find_event(hook: WebhookRequest) -> str | None:
    return "build" if isinstance(hook.payload, dict) and "build" in hook.payload else None


INTEGRATION = Integration(
    name="teamcity",
    display_name="TeamCity",
    description="TeamCity builds (tcWebHooks, Legacy Webhook JSON): started, successful, fixed, broken.",
    find_event=find_event,
    formatters={"build": format_build},
    doc_url="https://github.com/tcplugins/tcWebHooks",
)
