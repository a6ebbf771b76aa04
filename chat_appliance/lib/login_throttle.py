"""Placeholder until the hardening branch's per-account login throttle lands on main."""


def record_login_attempt(username):
    """Count a sign-in attempt toward the account's throttle (no-op until the throttle exists)."""
