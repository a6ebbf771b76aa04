"""What a view needs from its app: the state create_app keeps on `app.extensions`.

Only the HTTP layer reads it; views hand what an action needs (the limits, a path, a setting)
to the action as arguments."""

from flask import current_app

EXTENSION = "chat_appliance"


def app_state():
    """The AppState of the app serving this request."""
    return current_app.extensions[EXTENSION]


def queue_manager():
    """The app's event queues (events.queues.QueueManager)."""
    return app_state().queues


def limits():
    """The configured limits (config.Limits): the ones /register reports and the server enforces."""
    return app_state().limits


def avatars_root():
    """Uploaded avatars live beside the instance's other uploads (the API and the web client's
    avatar URLs both read them)."""
    return app_state().uploads.root / "avatars"


def password_method():
    """PASSWORD_HASH_METHOD: how new passwords are hashed."""
    return app_state().password_method


def mailer():
    """The app's outgoing mail (clients.send_email.Mailer, built on first use: app.AppState)."""
    return app_state().mailer.built()


def instance_key():
    """The instance's secret key (config.instance_secret): signs what must outlive a restart."""
    return app_state().secret


def auth_settings():
    """Which ways to sign in are on (lib.auth_backends.AuthSettings)."""
    return app_state().auth
