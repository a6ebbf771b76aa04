"""Word that an account's credentials changed, for the caches of the app in use.

A new API key, a deactivation or a new email must end what the server remembers of the account:
the long polls' cached Basic credentials, its browser sessions, and, for a server running beside
an admin command, the marker file (web/auth.py reads it). Those caches live on the app's Runtime
(db/runtime.py), so actions reach them here without importing the HTTP layer.
"""

from __future__ import annotations

from chat_appliance.db import runtime


def credentials_changed(user_id: int) -> None:
    """Forget `user_id`'s cached credentials and sessions in the runtime in use, if any."""
    active = runtime.current()
    if active is not None:  # no database open: nothing can have changed
        active.forget_user(user_id)
