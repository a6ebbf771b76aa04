"""The seam between actions and event queues.

Actions call `publish(event, user_ids)` wherever the change is made, inside its transaction
or after it: delivery waits for the commit (db.on_commit). The event comes from one of the
constructors of lib/event_catalogue.py, the list of every event the server sends. The queue manager registers itself
as a listener. With no listener (the CLI, unit tests of actions) publishing does nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import logging

from chat_appliance.db import runtime
from chat_appliance.db.connection import on_commit

if TYPE_CHECKING:
    from chat_appliance.db.runtime import Runtime
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger(__name__)


def _listeners(active=None):
    """The listener list of a runtime (default: the current one); empty when none is open."""
    active = active or runtime.current()
    return active.listeners if active is not None else []


def add_listener(listener: Any, active: Runtime | None = None) -> Any:
    """Register a callable(event: dict, user_ids: iterable[int]) on the current runtime (or
    `active`); returns it for removal."""
    _listeners(active).append(listener)
    return listener


def listeners(active: Runtime | None = None) -> Any:
    """The registered listeners, in order."""
    return tuple(_listeners(active))


def remove_listener(listener: Any, active: Runtime | None = None) -> None:
    """Unregister a listener added with add_listener."""
    registered = _listeners(active)
    if listener in registered:
        registered.remove(listener)


def publish(event: JSONDict, user_ids: Any) -> None:
    """Deliver an event to the queues of these users: at once outside a transaction; inside
    one, after it commits, and not at all if it rolls back (as Zulip's send_event_on_commit).
    The audience and the listeners (the current runtime's) are fixed now."""
    user_ids = list(user_ids)
    active = runtime.current()
    if active is not None and active.shard is not None:
        # One of several shards: every shard's queues receive it through PostgreSQL's NOTIFY,
        # sent inside the transaction (so at its commit, in commit order: events/shards.py).
        active.shard.publish(event, user_ids)
    targets = list(_listeners(active))
    on_commit(lambda: _deliver(targets, event, user_ids))


def publish_internal(event: JSONDict, user_ids: Any) -> None:
    """Tell this process's background services something clients never see (as Zulip queues
    work for its workers): delivered after the transaction commits, only to listeners that set
    `accepts_internal`, never to event queues or other shards."""
    user_ids = list(user_ids)
    targets = [listener for listener in _listeners() if getattr(listener, "accepts_internal", False)]
    if targets:
        on_commit(lambda: _deliver(targets, event, user_ids))


def _deliver(targets, event, user_ids):
    """Hand a committed event to every listener."""
    for listener in targets:
        try:
            listener(event, user_ids)
        except Exception:  # a broken listener must not undo a committed change
            log.exception("event listener failed for %s", event.get("type"))
