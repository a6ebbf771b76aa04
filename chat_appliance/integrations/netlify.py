"""Netlify: deploys building, created, failed, locked and unlocked, in the branch's topic. The
X-Netlify-Event header names the event."""

from __future__ import annotations

from chat_appliance.integrations.base import Integration, WebhookRequest

EVENTS = ["deploy_failed", "deploy_locked", "deploy_unlocked", "deploy_building", "deploy_created"]


def format_deploy(hook: WebhookRequest) -> tuple[str, str]:
    p = hook.payload
    event = hook.event
    if event == "deploy_failed":
        outcome = p["error_message"]
    elif event == "deploy_locked":
        outcome = "is now locked."
    elif event == "deploy_unlocked":
        outcome = "is now unlocked."
    else:
        outcome = f"is now {p['state']}."
    return p["branch"], f"The build [{p['name']}]({p['url']}) on branch {p['branch']} {outcome}"


INTEGRATION = Integration(
    name="netlify",
    display_name="Netlify",
    description="Netlify deploys: building, created, failed, locked and unlocked.",
    event_header="X-Netlify-Event",
    formatters={event: format_deploy for event in EVENTS},
)
