"""The one shape of a background worker, and how the app starts one.

A worker listens to the app's committed events on the bus and does its slow part (a call to
another server, a timer) on threads of its own, so that the request that published the event
never waits for it. Each one:

- is started by its class's `start(context)`, with only what the app gives every worker
  (WorkerContext); it starts its threads itself, with its first job;
- is called as a bus listener, `worker(event, user_ids)`, for the event types its entry in
  workers/__init__.py lists (`listens_to`), and only those;
- stops its threads in `close()`, which `close_app` calls;
- if its entry says `resumes_at_start` (work waiting in the database from before a restart),
  has `resume()`, which `serve` calls shortly after it starts (app.resume_workers).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

if TYPE_CHECKING:
    from chat_appliance.clients.send_email import Mailer


@dataclass(frozen=True)
class WorkerContext:
    """What the app gives every worker it starts."""

    config: Mapping[str, Any]  # the app's configuration, read at each job (tests and `dev` adjust it)
    is_online: Callable[[int], bool]  # whether the person has an event queue taking messages (app.py)
    mailer: Callable[[], Mailer]  # the app's outgoing mail, built when a worker first asks for it
    version: str  # the Zulip version and feature level this server reports
    feature_level: int
    uploads_root: Path  # the instance's uploads folder (lib/uploads.UploadStore.root)


class Worker(Protocol):
    """A bus listener that owns threads."""

    @classmethod
    def start(cls, context: WorkerContext) -> Worker: ...

    def __call__(self, event: Any, user_ids: Any) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerEntry:
    """One worker as the app registers it, without loading its module: `name` (its key in
    AppState.workers), `factory` ("module:Class", imported when the first event it listens to
    arrives: most servers start without sending a message), the event types it listens to, and
    whether `serve` starts it soon after its own start to resume work left in the database."""

    name: str
    factory: str
    listens_to: frozenset[str]
    resumes_at_start: bool = False

    def start(self, context: WorkerContext) -> Worker:
        module, _, attribute = self.factory.partition(":")
        worker_class: Any = getattr(import_module(module), attribute)
        return worker_class.start(context)

    def listener(self, worker: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        """The bus listener handing `worker` the events it listens to."""
        listens_to = self.listens_to

        def listen(event: Any, user_ids: Any) -> None:
            if event.get("type") in listens_to:
                worker(event, user_ids)

        # Workers also hear what actions tell only them (bus.publish_internal).
        listen.accepts_internal = True  # type: ignore[attr-defined]
        return listen
