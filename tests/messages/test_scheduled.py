"""Scheduled messages and reminders: create, list, edit, delete, delivery when due (with a chosen
clock), failures, and the scheduler thread."""

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from chat_appliance.actions.scheduled_messages import deliver_due_messages
from chat_appliance.models import database
from chat_appliance.server.scheduler import Scheduler

from ..support.helpers import err, ok, polled, queues

FUTURE = int(time.time()) + 3600
REPO_ROOT = Path(__file__).resolve().parents[2]


def schedule(client, to, *, content="later", topic="plans", type="stream", at=FUTURE, **params):
    return ok(client.post("scheduled_messages", type=type, to=to, content=content, topic=topic,
                          scheduled_delivery_timestamp=at, **params))["scheduled_message_id"]


def scheduled(client):
    return ok(client.get("scheduled_messages"))["scheduled_messages"]


def deliver(app, at):
    with app.app_context(), database.connection_context():
        return deliver_due_messages(at, app.extensions["chat_appliance"].limits)


def newest(client, narrow):
    return ok(client.get("messages", anchor="newest", num_before=1, num_after=0, apply_markdown=False,
                         narrow=narrow))["messages"]


def test_schedule_list_and_deliver_channel_message(app, org, events):
    """Is a scheduled channel message listed, unsent before its time, sent as its sender at its time,
    and then gone from the list with add and remove events to the sender only?"""
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id, content="**see** you")
    [entry] = scheduled(hamlet)
    assert entry == {"scheduled_message_id": sm_id, "type": "stream", "to": org.denmark.id, "topic": "plans",
                     "content": "**see** you", "rendered_content": "<p><strong>see</strong> you</p>",
                     "scheduled_delivery_timestamp": FUTURE, "failed": False}
    assert deliver(app, FUTURE - 1) == []
    assert deliver(app, FUTURE) == [sm_id]
    [message] = newest(org.client(org.othello), [{"operator": "channel", "operand": org.denmark.id}])
    assert (message["sender_id"], message["content"], message["subject"]) == (org.hamlet.id, "**see** you", "plans")
    assert scheduled(hamlet) == []
    assert deliver(app, FUTURE + 10) == []
    add, ids = events.one("scheduled_messages", op="add")
    assert ids == {org.hamlet.id} and add["scheduled_messages"][0]["scheduled_message_id"] == sm_id
    assert events.one("scheduled_messages", op="remove")[0]["scheduled_message_id"] == sm_id


def test_schedule_direct_message(app, org):
    """Is a scheduled direct message stored with its recipients' ids and delivered to them?"""
    hamlet = org.client(org.hamlet)
    schedule(hamlet, [org.othello.id, org.cordelia.id], type="direct", topic=None, content="psst")
    assert scheduled(hamlet)[0]["to"] == sorted([org.othello.id, org.cordelia.id])
    assert "topic" not in scheduled(hamlet)[0]
    deliver(app, FUTURE)
    [message] = newest(org.client(org.cordelia), [{"operator": "dm", "operand": [org.hamlet.id, org.othello.id]}])
    assert message["content"] == "psst"


def test_schedule_bad_input_changes_nothing(org):
    """Are a past time, an unknown channel, a channel the sender may not post in, an unknown user, an
    empty message and a missing topic refused with nothing scheduled?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content="x", topic="t",
                    scheduled_delivery_timestamp=int(time.time()) - 5), 400, "BAD_REQUEST",
        "Scheduled delivery time must be in the future.")
    err(hamlet.post("scheduled_messages", type="stream", to=99999, content="x", topic="t",
                    scheduled_delivery_timestamp=FUTURE), 400, "STREAM_DOES_NOT_EXIST")
    err(org.client(org.othello).post("scheduled_messages", type="stream", to=org.secret.id, content="x", topic="t",
                                     scheduled_delivery_timestamp=FUTURE), 400, "STREAM_DOES_NOT_EXIST")
    err(hamlet.post("scheduled_messages", type="direct", to=[99999], content="x",
                    scheduled_delivery_timestamp=FUTURE), 400, "BAD_REQUEST", "Invalid user ID 99999")
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content=" ", topic="t",
                    scheduled_delivery_timestamp=FUTURE), 400, "BAD_REQUEST")
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content="x",
                    scheduled_delivery_timestamp=FUTURE), 400, "BAD_REQUEST")
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content="x", topic="t",
                    scheduled_delivery_timestamp="soon"), 400, "BAD_REQUEST")
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content="x", topic="t"), 400,
        "REQUEST_VARIABLE_MISSING")
    assert scheduled(hamlet) == []


def test_edit_scheduled_message(app, org, events):
    """Does PATCH change content, time, and type with recipients, with an update event, and refuse a
    type change without `to` and others' or unknown ids?"""
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id)
    ok(hamlet.patch(f"scheduled_messages/{sm_id}", content="edited", scheduled_delivery_timestamp=FUTURE + 60))
    [entry] = scheduled(hamlet)
    assert (entry["content"], entry["scheduled_delivery_timestamp"]) == ("edited", FUTURE + 60)
    err(hamlet.patch(f"scheduled_messages/{sm_id}", type="direct"), 400, "BAD_REQUEST",
        "Recipient required when updating type of scheduled message.")
    ok(hamlet.patch(f"scheduled_messages/{sm_id}", type="direct", to=[org.othello.id]))
    entry = scheduled(hamlet)[0]
    assert (entry["type"], entry["to"], "topic" in entry) == ("private", [org.othello.id], False)
    err(org.client(org.othello).patch(f"scheduled_messages/{sm_id}", content="mine"), 404, "BAD_REQUEST",
        "Scheduled message does not exist")
    err(hamlet.patch("scheduled_messages/99999", content="x"), 404, "BAD_REQUEST",
        "Scheduled message does not exist")
    assert scheduled(hamlet)[0]["content"] == "edited"
    assert len(events.of("scheduled_messages", op="update")) == 2


def test_delete_scheduled_message(app, org, events):
    """Does DELETE cancel it (never sent), with a remove event, and a second DELETE give 404?"""
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id)
    err(org.client(org.othello).delete(f"scheduled_messages/{sm_id}"), 404, "BAD_REQUEST")
    ok(hamlet.delete(f"scheduled_messages/{sm_id}"))
    assert scheduled(hamlet) == [] and deliver(app, FUTURE) == []
    err(hamlet.delete(f"scheduled_messages/{sm_id}"), 404, "BAD_REQUEST", "Scheduled message does not exist")
    assert events.one("scheduled_messages", op="remove")[0]["scheduled_message_id"] == sm_id


def test_failed_delivery_kept_and_rescheduled(app, org):
    """When the channel is archived before the time, is the message kept as failed, the sender told,
    and does editing with a new time (required) send it once the channel is back?"""
    hamlet, admin = org.client(org.hamlet), org.client(org.admin)
    sm_id = schedule(hamlet, org.denmark.id, content="into the void")
    ok(admin.delete(f"streams/{org.denmark.id}"))
    assert deliver(app, FUTURE) == []
    [entry] = scheduled(hamlet)
    assert entry["failed"] is True
    [note] = newest(hamlet, [{"operator": "is", "operand": "dm"}])
    assert note["sender_email"].startswith("notification-bot@") and "could not be sent" in note["content"]
    err(hamlet.patch(f"scheduled_messages/{sm_id}", content="again"), 400, "BAD_REQUEST",
        "Scheduled delivery time must be in the future.")
    ok(admin.patch(f"streams/{org.denmark.id}", is_archived=False))
    ok(hamlet.patch(f"scheduled_messages/{sm_id}", scheduled_delivery_timestamp=FUTURE + 100))
    assert scheduled(hamlet)[0]["failed"] is False
    assert deliver(app, FUTURE + 100) == [sm_id]


def test_register_lists_scheduled_messages_and_reminders(org):
    """Does /register carry scheduled_messages, reminders and max_reminder_note_length?"""
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id)
    msg = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="remember me"))["id"]
    reminder_id = ok(hamlet.post("reminders", message_id=msg, scheduled_delivery_timestamp=FUTURE))["reminder_id"]
    # This copy of the OpenAPI types /register's reminders as scheduled messages, unlike GET /reminders
    # and the reminders events, which use the Reminder object these are: validated as such below.
    state = ok(hamlet.post("register", fetch_event_types=["scheduled_messages", "reminders", "realm"]),
               undocumented=("server_report_message_types", "reminders"))
    assert state["reminders"] == ok(hamlet.get("reminders"))["reminders"]
    assert [s["scheduled_message_id"] for s in state["scheduled_messages"]] == [sm_id]
    assert [r["reminder_id"] for r in state["reminders"]] == [reminder_id]
    assert state["max_reminder_note_length"] == 1000


def test_reminder_created_listed_delivered(app, org, events):
    """Is a reminder about a readable message listed, sent by Notification Bot to the requester only
    at its time with the quote and note, then unlisted?"""
    hamlet = org.client(org.hamlet)
    msg = ok(org.client(org.othello).post("messages", type="stream", to="Denmark", topic="t",
                                          content="the plan"))["id"]
    reminder_id = ok(hamlet.post("reminders", message_id=msg, scheduled_delivery_timestamp=FUTURE,
                                 note="check this"))["reminder_id"]
    [entry] = ok(hamlet.get("reminders"))["reminders"]
    assert (entry["reminder_id"], entry["type"], entry["to"], entry["reminder_target_message_id"]) == (
        reminder_id, "private", [org.hamlet.id], msg)
    assert "the plan" in entry["content"] and "check this" in entry["content"]
    assert events.one("reminders", op="add")[1] == {org.hamlet.id}
    assert deliver(app, FUTURE) == [reminder_id]
    [note] = newest(hamlet, [{"operator": "is", "operand": "dm"}])
    assert note["sender_email"].startswith("notification-bot@") and "the plan" in note["content"]
    assert ok(hamlet.get("reminders"))["reminders"] == []
    assert events.one("reminders", op="remove")[0]["reminder_id"] == reminder_id


def test_reminder_errors_and_delete(org):
    """Are reminders about unreadable messages, in the past, or with an over-long note refused, and does
    DELETE cancel one (404 after)?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    secret = ok(hamlet.post("messages", type="stream", to="secret", topic="t", content="hidden"))["id"]
    err(othello.post("reminders", message_id=secret, scheduled_delivery_timestamp=FUTURE), 400, "BAD_REQUEST",
        "Invalid message(s)")
    err(hamlet.post("reminders", message_id=secret, scheduled_delivery_timestamp=1), 400, "BAD_REQUEST",
        "Scheduled delivery time must be in the future.")
    err(hamlet.post("reminders", message_id=secret, scheduled_delivery_timestamp=FUTURE, note="x" * 1001), 400,
        "BAD_REQUEST")
    reminder_id = ok(hamlet.post("reminders", message_id=secret, scheduled_delivery_timestamp=FUTURE))["reminder_id"]
    err(othello.delete(f"reminders/{reminder_id}"), 404, "BAD_REQUEST", "Reminder does not exist")
    ok(hamlet.delete(f"reminders/{reminder_id}"))
    err(hamlet.delete(f"reminders/{reminder_id}"), 404, "BAD_REQUEST", "Reminder does not exist")
    assert ok(hamlet.get("reminders"))["reminders"] == []


def test_scheduler_thread_delivers_when_clock_reaches_time(app, org):
    """Does the scheduler thread send nothing early, then send as soon as its clock passes the time?"""
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id, content="tick")
    clock = [FUTURE - 100]
    scheduler = Scheduler(app, clock=lambda: clock[0], max_wait=0.05).start()
    try:
        time.sleep(0.3)
        assert [s["scheduled_message_id"] for s in scheduled(hamlet)] == [sm_id]
        clock[0] = FUTURE
        scheduler.wake()
        deadline = time.monotonic() + 10
        while scheduled(hamlet) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert scheduled(hamlet) == []
    finally:
        scheduler.stop()
    [message] = newest(hamlet, [{"operator": "channel", "operand": org.denmark.id}])
    assert message["content"] == "tick"


def test_a_wake_up_landing_as_the_wait_ends_is_not_lost(app, org):
    """When a schedule change wakes the scheduler just as its wait runs out (between the wait's
    end and the next read of the schedule), is the message delivered at once rather than after
    another max_wait?"""
    hamlet = org.client(org.hamlet)
    schedule(hamlet, org.denmark.id, content="just in time")
    clock = [FUTURE - 100]
    scheduler = Scheduler(app, clock=lambda: clock[0], max_wait=30)

    class WakeAsTheWaitEnds(threading.Event):
        first = True

        def wait(self, timeout=None):
            if not self.first:
                return super().wait(timeout)
            self.first = False
            clock[0] = FUTURE  # the message fell due, and its change is announced...
            scheduler.wake()
            return False  # ...as this wait timed out

    scheduler._wake = WakeAsTheWaitEnds()
    scheduler.start()
    try:
        deadline = time.monotonic() + 10
        while scheduled(hamlet) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert scheduled(hamlet) == []
    finally:
        scheduler.stop()


def test_events_reach_queues_in_zulip_shapes(app, org):
    """Do scheduled_messages and reminders events reach the owner's queue, valid against Zulip's event
    schemas, and nobody else's?"""

    qs = queues(org, org.hamlet, org.othello, event_types=["scheduled_messages", "reminders"])
    hamlet = org.client(org.hamlet)
    sm_id = schedule(hamlet, org.denmark.id)
    ok(hamlet.patch(f"scheduled_messages/{sm_id}", content="changed"))
    msg = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="x"))["id"]
    reminder_id = ok(hamlet.post("reminders", message_id=msg, scheduled_delivery_timestamp=FUTURE))["reminder_id"]
    ok(hamlet.delete(f"reminders/{reminder_id}"))
    deliver(app, FUTURE)
    kinds = [(e["type"], e["op"]) for e in polled(qs, org.hamlet)]
    assert kinds == [("scheduled_messages", "add"), ("scheduled_messages", "update"), ("reminders", "add"),
                     ("reminders", "remove"), ("scheduled_messages", "remove")]
    assert polled(qs, org.othello) == []


def test_far_future_and_huge_timestamps(app, org):
    """Is a time beyond any database integer refused as bad input, and a far-future one kept?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("scheduled_messages", type="stream", to=org.denmark.id, content="x", topic="t",
                    scheduled_delivery_timestamp=2**64), 400, "BAD_REQUEST")
    sm_id = schedule(hamlet, org.denmark.id, at=2**40)
    assert scheduled(hamlet)[0]["scheduled_delivery_timestamp"] == 2**40
    assert deliver(app, FUTURE) == [] and scheduled(hamlet)[0]["scheduled_message_id"] == sm_id


def test_reminder_about_a_long_message_is_delivered(app, org):
    """Is a reminder about a message of the greatest length still sent, quoting its start?"""
    hamlet = org.client(org.hamlet)
    msg = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="y" * 10000))["id"]
    reminder_id = ok(hamlet.post("reminders", message_id=msg, scheduled_delivery_timestamp=FUTURE,
                                 note="n" * 1000))["reminder_id"]
    assert deliver(app, FUTURE) == [reminder_id]
    [note] = newest(hamlet, [{"operator": "is", "operand": "dm"}])
    assert "y" * 2000 + "…" in note["content"] and "y" * 2001 not in note["content"]


def test_scheduler_with_nothing_due_does_not_load_the_send_path(tmp_path):
    """A fresh process whose scheduler finds nothing due (the usual case at start-up): it says when
    to look again and leaves the send path (actions/scheduled_messages.py and what it imports)
    unloaded; once a message is due, the same scheduler sends it."""
    script = textwrap.dedent(f"""
        import sys, time
        from chat_appliance.app import create_app
        from chat_appliance.models import database
        from chat_appliance.server.scheduler import Scheduler
        app = create_app({{"INSTANCE_PATH": {str(tmp_path)!r}, "LOG_REQUESTS": False}})
        scheduler = Scheduler(app, clock=time.time)
        assert scheduler.run_once() is None
        assert "chat_appliance.actions.scheduled_messages" not in sys.modules
        assert "chat_appliance.actions.messages" not in sys.modules
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "ok"


def test_scheduler_run_once_sends_what_is_due_and_names_the_next(app, org):
    """run_once with a message due and another later: the first is sent, and the later one's
    time is returned as the next wake-up."""
    hamlet = org.client(org.hamlet)
    due = schedule(hamlet, org.denmark.id, content="due now", at=FUTURE)
    later = schedule(hamlet, org.denmark.id, content="due later", at=FUTURE + 600)
    scheduler = Scheduler(app, clock=lambda: FUTURE + 1)
    assert scheduler.run_once() == FUTURE + 600
    assert [s["scheduled_message_id"] for s in scheduled(hamlet)] == [later]
    assert due != later
    [message] = newest(hamlet, [{"operator": "channel", "operand": org.denmark.id}])
    assert message["content"] == "due now"
