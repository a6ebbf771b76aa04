"""Background workers: the services that listen to committed events on the bus and work off the
request path, each on threads of its own (workers/base.py gives them one shape). Actions publish
events and never import a worker; a worker calls actions for the changes it makes (a bot's
reply, a preview added to a message) and clients/ for the other servers it talks to.

Not to be confused with server/thread_pool.py, the threads that run requests for the event loop.

The app registers every entry of WORKERS, in this order, and starts each worker with the first
event it listens to; `serve` also starts, shortly after it starts, those whose entry says
`resumes_at_start` (their pending work is in the database) and calls their `resume()`.
"""

from chat_appliance.workers.base import Worker, WorkerContext, WorkerEntry

WORKERS = (
    # Outgoing webhook and embedded bots, called about messages that mention them or are sent
    # to them.
    WorkerEntry("service_bots", "chat_appliance.workers.service_dispatch:ServiceDispatcher", frozenset({"message"})),
    # Website previews (INLINE_URL_EMBED_PREVIEW, off by default).
    WorkerEntry("link_previews", "chat_appliance.workers.link_previews:LinkPreviewer", frozenset({"message"})),
    # Emails about direct messages and mentions that reached someone away.
    WorkerEntry("missed_messages", "chat_appliance.workers.missed_messages:MissedMessageNotifier",
                frozenset({"message"})),
    # Mobile notifications, and their removal once the message is read or deleted; the token
    # registrations of end-to-end encrypted push, forwarded to the service off the request path.
    WorkerEntry("push_notifications", "chat_appliance.workers.push_notifications:PushNotifier",
                frozenset({"message", "update_message_flags", "remove_push_notifications",
                           "push_device_registration"})),
    # Thumbnails of uploaded images, made a few at a time after the upload commits; images left
    # pending by a previous process are found again when `serve` starts (resumes_at_start).
    WorkerEntry("thumbnails", "chat_appliance.workers.thumbnails:ThumbnailWorker", frozenset({"thumbnail"}),
                resumes_at_start=True),
)

__all__ = ["WORKERS", "Worker", "WorkerContext", "WorkerEntry"]
