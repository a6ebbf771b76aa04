"""GitHub Sponsors: GitHub's integration under its own URL, as Zulip has it, for an account's
sponsorship events (created, cancelled, tier changes) in the "sponsors" topic."""

from chat_appliance.integrations.github import integration

INTEGRATION = integration("githubsponsors", "Sponsorships of a GitHub Sponsors account.")
