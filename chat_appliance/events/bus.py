"""The seam between actions and event queues.

Actions call `publish(event, user_ids)` after their transaction committed; the queue
manager registers itself as a listener. With no listener (the CLI, unit tests of actions)
publishing does nothing.
"""

import logging

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
    """Deliver an event to the queues of these users. Call only after commit."""
    user_ids = list(user_ids)
    for listener in list(_listeners):
        try:
            listener(event, user_ids)
        except Exception:  # a broken listener must not undo a committed change
            log.exception("event listener failed for %s", event.get("type"))
