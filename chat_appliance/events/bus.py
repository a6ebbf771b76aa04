"""The seam between actions and event queues.

Actions call `publish(event, user_ids)` wherever the change is made, inside its transaction
or after it: delivery waits for the commit (db.on_commit). The queue manager registers itself
as a listener. With no listener (the CLI, unit tests of actions) publishing does nothing.
"""

import logging

from ..db import on_commit

log = logging.getLogger(__name__)

_listeners = []


def add_listener(listener):
    """Register a callable(event: dict, user_ids: iterable[int]); returns it for removal."""
    _listeners.append(listener)
    return listener


def listeners():
    """The registered listeners, in order."""
    return tuple(_listeners)


def remove_listener(listener):
    """Unregister a listener added with add_listener."""
    if listener in _listeners:
        _listeners.remove(listener)


def publish(event, user_ids):
    """Deliver an event to the queues of these users: at once outside a transaction; inside
    one, after it commits, and not at all if it rolls back (as Zulip's send_event_on_commit).
    The audience is fixed now, as the transaction sees it."""
    user_ids = list(user_ids)
    on_commit(lambda: _deliver(event, user_ids))


def _deliver(event, user_ids):
    """Hand a committed event to every listener."""
    for listener in list(_listeners):
        try:
            listener(event, user_ids)
        except Exception:  # a broken listener must not undo a committed change
            log.exception("event listener failed for %s", event.get("type"))
