"""Word that an account's credentials changed, for the caches above this floor.

A new API key, a deactivation or a new email must end what the HTTP layer remembers of the
account: the long polls' cached Basic credentials, its browser sessions, and, for a server
running beside an admin command, the marker file (web/auth.py). Actions cannot import the HTTP
layer, so they call credentials_changed(user_id) and web/auth.py subscribes when it is imported,
which every process that serves or runs commands does (create_app and the command line's
open_instance set the marker through it).
"""

_subscribers = []


def subscribe(forget):
    """Call forget(user_id) on every credential change (once, however often it subscribes)."""
    if forget not in _subscribers:
        _subscribers.append(forget)


def credentials_changed(user_id):
    """Tell every subscriber that `user_id`'s credentials changed."""
    for forget in list(_subscribers):
        forget(user_id)
