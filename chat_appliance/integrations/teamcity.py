"""TeamCity (the tcWebHooks plugin's "Legacy Webhook (JSON)" format): builds started, fixed,
successful, broken and still broken, in the build's topic (with its branch). A personal build's
result goes to whoever started it, as a direct message, when they can be found among the
organization's members; other payload formats post nothing."""

from __future__ import annotations

from chat_appliance.integrations.base import DirectMessage, Integration, WebhookRequest, always


def property_value(properties, name: str) -> str | None:
    for prop in properties:
        if prop["name"] == name:
            return prop["value"]
    return None


def status_of(build) -> str:
    result, delta = build["buildResult"], build["buildResultDelta"]
    if result == "success":
        return "has been fixed! :thumbs_up:" if delta == "fixed" else "was successful! :thumbs_up:"
    if result == "failure":
        if delta == "broken":
            return f"is broken with status {build['buildStatus']}! :thumbs_down:"
        return f"is still broken with status {build['buildStatus']}! :thumbs_down:"
    return "has started."


def format_build(hook: WebhookRequest):
    p = hook.payload
    if "build" not in p:  # another plugin format (Slack's, for one): nothing Zulip can read
        return None
    build = p["build"]
    name, url = build["buildFullName"], build["buildStatusUrl"]
    body = (f"{name} build {build['buildNumber']} {status_of(build)} See [changes]({url}&tab=buildChangesDiv) "
            f"and [build log]({url}).")
    topic = f"{name} ({build['branchDisplayName']})" if "branchDisplayName" in build else name
    properties = build["teamcityProperties"]
    if property_value(properties, "env.BUILD_IS_PERSONAL") == "true":
        # triggeredBy is the TeamCity user's full name; the property is their user name.
        user_id = hook.guess_user(build["triggeredBy"].split(";")[0])
        if user_id is None:
            short_name = property_value(properties, "teamcity.build.triggeredBy.username")
            user_id = hook.guess_user(short_name) if short_name is not None else None
        if user_id is None:
            return None  # nobody here to tell
        return [DirectMessage(user_id, f"Your personal build for {body}")]
    return topic, body


INTEGRATION = Integration(
    name="teamcity",
    display_name="TeamCity",
    description="TeamCity builds (tcWebHooks' legacy JSON format); personal builds to whoever ran them.",
    find_event=always("build"),
    formatters={"build": format_build},
)
