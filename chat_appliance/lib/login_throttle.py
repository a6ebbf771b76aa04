"""The web client's hook for the per-account login throttle. It does nothing yet: main has no
login throttle (POST /fetch_api_key has none either). When the hardening branch lands, the web
sign-in calls its lib.auth.authenticate_by_password instead and this module goes."""


def record_login_attempt(username):
    """Does nothing until the throttle exists (see the module docstring)."""
