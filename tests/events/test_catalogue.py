"""The event catalogue (lib/event_catalogue.py): the one place events are built, each constructor's
output as a client receives it valid against Zulip's event schemas, and its Markdown listing."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import ValidationError

from chat_appliance.events.queues import QueueManager
from chat_appliance.lib import event_catalogue as ec

from ..support.helpers import register, send
from ..support.openapi import validate_response

PACKAGE = Path(ec.__file__).resolve().parents[1]
ROOT = PACKAGE.parent

# Calls that hand an event to the bus (or to a wrapper that does), or straight to a queue.
PUBLISHERS = {"publish", "notify_group", "push"}


def _is_dict_call(node):
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict"


def event_literals(source, filename="<source>"):
    """(line, what) of every event dictionary built inline in this source: a dict (literal or
    dict(...) call) handed to a publisher, or a dict whose "type" names a catalogue event type
    (with an "op" or a ** spread when the type has ops: {"type": "stream", "stream_id": ...} is
    a message's recipient, not an event)."""
    rows = ec.catalogue()
    event_types = {row[0] for row in rows}
    with_ops = {row[0] for row in rows if row[1] is not None}
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in PUBLISHERS and any(isinstance(arg, (ast.Dict, ast.DictComp)) or _is_dict_call(arg)
                                          for arg in node.args):
                found.append((node.lineno, f"{name}() of an inline dict"))
            if _is_dict_call(node):
                keys = {k.arg: k.value for k in node.keywords}
                kind = keys.get("type")
                if isinstance(kind, ast.Constant) and kind.value in event_types and (
                        kind.value not in with_ops or "op" in keys or None in keys):
                    found.append((node.lineno, f"dict(type={kind.value!r}, ...)"))
        elif isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else k for k in node.keys]
            if "type" not in keys:
                continue
            kind = node.values[keys.index("type")]
            if isinstance(kind, ast.Constant) and kind.value in event_types and (
                    kind.value not in with_ops or "op" in keys or None in keys):
                found.append((node.lineno, f"{{'type': {kind.value!r}, ...}}"))
    return found


def test_finder_sees_inline_events():
    """Does the source walk catch the inline event forms it forbids, and pass a message recipient
    dict and a constructor call?"""
    source = '''
publish({"type": "realm_user", "op": "update", "person": {}}, ids)
event = {"type": "alert_words", "alert_words": []}
notify_group(realm_id, {"op": "remove", "group_id": 1})
publish({"type": "user_group", **event}, ids)
other = dict(type="stream", op="delete")
details = {"type": "stream", "stream_id": 1, "topic": "t"}
publish(event_catalogue.alert_words([]), ids)
'''
    assert sorted(line for line, _what in event_literals(source)) == [2, 2, 3, 4, 5, 5, 6]


def test_no_event_is_built_outside_the_catalogue():
    """Does every module of the package build its events with the catalogue's constructors, never
    an event dict of its own?"""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(ec.__file__).resolve():
            continue
        source = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in event_literals(source, str(path))]
    assert offenders == []


def test_catalogue_lists_every_constructor_with_its_doc():
    """Does catalogue() name every public constructor of the module, each with a one-line doc, and
    are the (type, op) pairs' constructors unique per row?"""
    rows = ec.catalogue()
    names = {name for _type, _op, name, _doc in rows}
    assert names == {c.__name__ for c in ec.constructors()}
    assert all(doc for *_rest, doc in rows)
    assert len(set((t, op, name) for t, op, name, _doc in rows)) == len(rows)
    public = {name for name, value in vars(ec).items() if callable(value) and getattr(value, "__module__", "") == ec.__name__
              and not name.startswith("_") and name not in ("catalogue", "constructors")}
    assert public == names


def test_markdown_listing():
    """Does scripts/event_catalogue.py print the catalogue as a Markdown table, one row per
    (type, op, constructor)?"""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "event_catalogue.py")], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    lines = [line for line in out.splitlines() if line.startswith("| `")]
    assert len(lines) == len(ec.catalogue())
    assert "| `stream` | `update` | `stream_update` |" in out
    assert "| `alert_words` | | `alert_words` |" in out


# --- each constructor's output, as a queue delivers it, against Zulip's schema -------------------------

# Every capability a current client declares: the events as Zulip sends them today.
CAPABILITIES = {"notification_settings_null": True, "bulk_message_deletion": True, "user_avatar_url_field_optional": True,
                "stream_typing_notifications": True, "user_settings_object": True, "linkifier_url_template": True,
                "user_list_incomplete": True, "include_deactivated_groups": True, "archived_channels": True,
                "empty_topic_name": True}


class Gap:
    """An event we send that Zulip's description (feature level 420) has no schema for, with the
    reason; the test asserts it still fails validation, so a newer description that covers it
    shows the entry can go."""

    def __init__(self, build, reason):
        self.build, self.reason = build, reason


TS = 1_700_000_000


class World:
    """Realistic arguments: objects as /register gives them for Hamlet, and a real message."""

    def __init__(self, org, events):
        self.org = org
        self.state = register(org.client(org.hamlet))
        self.message_id = send(org.client(org.hamlet), content="hello **castle**")
        bus_event, _ids = events.one("message")
        self.message, self.raw_content = bus_event["message"], bus_event["raw_content"]
        self.hamlet, self.othello, self.denmark = org.hamlet, org.othello, org.denmark

    def person(self, user):
        return {"user_id": user.id, "email": user.email}

    def user(self, user):
        return next(u for u in self.state["realm_users"] if u["user_id"] == user.id)

    def subscription(self):
        return next(s for s in self.state["subscriptions"] if s["stream_id"] == self.denmark.id)

    def stream(self):
        return next(s for s in self.state["streams"] if s["stream_id"] == self.denmark.id)

    def group(self):
        return self.state["realm_user_groups"][0]


def _cases():
    """{constructor name: [build(world) -> event, ...]}: one or more realistic events each."""
    draft = {"id": 1, "type": "stream", "to": [7], "topic": "castle", "content": "to be", "timestamp": TS}
    snippet = {"id": 1, "title": "Greeting", "content": "Good morrow", "date_created": TS}
    scheduled = {"scheduled_message_id": 1, "type": "stream", "to": 7, "content": "later",
                 "rendered_content": "<p>later</p>", "scheduled_delivery_timestamp": TS + 3600, "failed": False,
                 "topic": "castle"}
    reminder = {"reminder_id": 2, "type": "private", "to": [5], "content": "Remember", "rendered_content": "<p>Remember</p>",
                "scheduled_delivery_timestamp": TS + 60, "failed": False, "reminder_target_message_id": 9}
    folder = {"id": 1, "name": "Frontend", "description": "UI work", "rendered_description": "<p>UI work</p>",
              "date_created": TS, "creator_id": 5, "order": 0, "is_archived": False}
    field = {"id": 1, "type": 1, "order": 1, "name": "Phone", "hint": "Your phone", "field_data": "",
             "display_in_profile_summary": False, "required": False, "editable_by_user": True}
    export = {"id": 1, "acting_user_id": 2, "export_time": TS, "deleted_timestamp": None, "failed_timestamp": None,
              "export_url": "https://zulip.example/user_avatars/exports/1/x.tar.gz", "pending": False, "export_type": 1}
    emoji = {"1": {"id": "1", "name": "parrot", "source_url": "/user_avatars/1/emoji/images/1.png", "still_url": None,
                   "deactivated": False, "author_id": 5}}
    return {
        "heartbeat": [lambda w: ec.heartbeat(0)],
        "message": [lambda w: ec.message(w.message, w.raw_content, {w.hamlet.id: ["read"]}, None, None, False,
                                         w.denmark.id, w.org.realm.id)],
        "message_for_queue": [
            lambda w: ec.message_for_queue(dict(w.message, content_type="text/html"), ["read"]),
            Gap(lambda w: ec.message_for_queue(dict(w.message, content_type="text/html"), ["read"], "1.0"),
                "local_message_id, the echo of POST /messages' local_id to the sender's queue, is in the "
                "chat API (and in Zulip's server) but not in the description's message event")],
        "update_message": [lambda w: ec.update_message(
            w.hamlet.id, TS, w.message_id, [w.message_id],
            {"stream_id": w.denmark.id, "stream_name": "Denmark", "orig_content": "hello",
             "orig_rendered_content": "<p>hello</p>", "content": "hello!", "rendered_content": "<p>hello!</p>",
             "is_me_message": False, "propagate_mode": "change_one", "orig_subject": "castle", "subject": "moat",
             "topic_links": []},
            {w.hamlet.id: ["read"]})],
        "update_message_rendering": [lambda w: ec.update_message_rendering(
            TS, w.message_id, "https://example.com", '<p><a href="https://example.com">https://example.com</a></p>',
            False, {w.hamlet.id: []})],
        "delete_message": [lambda w: ec.delete_message([w.message_id], w.denmark.id, "castle"),
                           lambda w: ec.delete_message([w.message_id])],
        "update_message_flags": [
            lambda w: ec.update_message_flags("add", "starred", [w.message_id]),
            lambda w: ec.update_message_flags("remove", "read", [w.message_id], {str(w.message_id): {
                "type": "stream", "stream_id": w.denmark.id, "topic": "castle", "mentioned": False}})],
        "reaction": [lambda w, op=op: ec.reaction(op, w.message_id, "octopus", "1f419", "unicode_emoji", w.hamlet.id,
                                           {"user_id": w.hamlet.id, "email": w.hamlet.email,
                                            "full_name": w.hamlet.full_name}) for op in ("add", "remove")],
        "submessage": [lambda w: ec.submessage("widget", '{"type":"vote","key":"canned,1","vote":1}', w.message_id,
                                               w.hamlet.id, 1)],
        "typing_direct": [lambda w, op=op: ec.typing_direct(op, w.person(w.hamlet), [w.person(w.hamlet), w.person(w.othello)])
                          for op in ("start", "stop")],
        "typing_stream": [lambda w, op=op: ec.typing_stream(op, w.person(w.hamlet), w.denmark.id, "castle")
                          for op in ("start", "stop")],
        "typing_edit_message": [
            lambda w: ec.typing_edit_message("start", w.hamlet.id, w.message_id,
                                             {"type": "channel", "channel_id": w.denmark.id, "topic": "castle"}),
            lambda w: ec.typing_edit_message("stop", w.hamlet.id, w.message_id,
                                             {"type": "direct", "user_ids": [w.hamlet.id, w.othello.id]})],
        "stream_create": [lambda w: ec.stream_create([w.stream()])],
        "stream_update": [
            lambda w: ec.stream_update(w.denmark.id, "Denmark", "description", "Rotten",
                                       rendered_description="<p>Rotten</p>"),
            lambda w: ec.stream_update(w.denmark.id, "Denmark", "invite_only", True,
                                       history_public_to_subscribers=False),
            lambda w: ec.stream_update(w.denmark.id, "Denmark", "is_archived", True)],
        "stream_update_first_message_id": [lambda w: ec.stream_update_first_message_id(w.denmark.id, "Denmark",
                                                                                       w.message_id)],
        "stream_delete": [lambda w: ec.stream_delete(w.denmark.id)],
        "subscription_add": [lambda w: ec.subscription_add([w.subscription()])],
        "subscription_remove": [lambda w: ec.subscription_remove(w.denmark.id, "Denmark")],
        "subscription_update": [lambda w: ec.subscription_update(w.denmark.id, "color", "#76ce90"),
                                lambda w: ec.subscription_update(w.denmark.id, "in_home_view", False)],
        "subscription_peer_add": [lambda w: ec.subscription_peer_add(w.denmark.id, [w.othello.id])],
        "subscription_peer_remove": [lambda w: ec.subscription_peer_remove(w.denmark.id, [w.othello.id])],
        "default_streams": [lambda w: ec.default_streams([w.denmark.id])],
        "channel_folder_add": [lambda w: ec.channel_folder_add(folder)],
        "channel_folder_update": [lambda w: ec.channel_folder_update(1, {"name": "Backend"})],
        "channel_folder_reorder": [lambda w: ec.channel_folder_reorder([2, 1])],
        "realm_user_add": [lambda w: ec.realm_user_add(w.user(w.othello))],
        "realm_user_update": [lambda w: ec.realm_user_update(w.othello.id, full_name="Othello"),
                              lambda w: ec.realm_user_update(w.othello.id, avatar_source="G", avatar_url="/avatar/7",
                                                             avatar_url_medium="/avatar/7", avatar_version=2),
                              Gap(lambda w: ec.realm_user_update(w.othello.id, avatar_version=2, avatar_url=None),
                                  "deactivation with delete_profile clears the avatar with avatar_version and a "
                                  "null avatar_url only; the description's avatar update also wants "
                                  "avatar_source and avatar_url_medium"),
                              lambda w: ec.realm_user_update(w.othello.id, role=200),
                              lambda w: ec.realm_user_update(w.othello.id, is_active=False)],
        "realm_bot_add": [lambda w: ec.realm_bot_add(w.state["realm_bots"][0])],
        "realm_bot_update": [lambda w: ec.realm_bot_update(w.state["realm_bots"][0]["user_id"], owner_id=w.hamlet.id)],
        "realm_bot_delete": [lambda w: ec.realm_bot_delete(w.state["realm_bots"][0]["user_id"])],
        "user_group_add": [lambda w: ec.user_group_add(w.group())],
        "user_group_update": [lambda w: ec.user_group_update(w.group()["id"], {"description": "Actors"})],
        "user_group_add_members": [lambda w: ec.user_group_add_members(w.group()["id"], [w.othello.id])],
        "user_group_remove_members": [lambda w: ec.user_group_remove_members(w.group()["id"], [w.othello.id])],
        "user_group_add_subgroups": [lambda w: ec.user_group_add_subgroups(w.group()["id"], [w.group()["id"] + 1])],
        "user_group_remove_subgroups": [lambda w: ec.user_group_remove_subgroups(w.group()["id"], [w.group()["id"] + 1])],
        "user_group_remove": [lambda w: ec.user_group_remove(w.group()["id"])],
        "presence": [lambda w: ec.presence(w.hamlet.id, w.hamlet.email, TS + 0.5, {"website": {
            "client": "website", "status": "active", "timestamp": TS, "pushable": False}})],
        "user_status": [lambda w: ec.user_status(w.hamlet.id, away=False, status_text="At the castle",
                                                 emoji=("castle", "1f3f0", "unicode_emoji")),
                        lambda w: ec.user_status(w.hamlet.id, status_text="")],
        "muted_users": [lambda w: ec.muted_users([{"id": w.othello.id, "timestamp": TS}])],
        "invites_changed": [lambda w: ec.invites_changed()],
        "user_settings_update": [lambda w: ec.user_settings_update("enter_sends", True)],
        "user_topic": [lambda w: ec.user_topic(w.denmark.id, "castle", 1, TS)],
        "alert_words": [lambda w: ec.alert_words(["castle", "ghost"])],
        "drafts_add": [lambda w: ec.drafts_add([draft])],
        "drafts_update": [lambda w: ec.drafts_update(draft)],
        "drafts_remove": [lambda w: ec.drafts_remove(1)],
        "saved_snippets_add": [lambda w: ec.saved_snippets_add(snippet)],
        "saved_snippets_update": [lambda w: ec.saved_snippets_update(snippet)],
        "saved_snippets_remove": [lambda w: ec.saved_snippets_remove(1)],
        "scheduled_messages_add": [lambda w: ec.scheduled_messages_add([scheduled])],
        "scheduled_messages_update": [lambda w: ec.scheduled_messages_update(scheduled)],
        "scheduled_messages_remove": [lambda w: ec.scheduled_messages_remove(1)],
        "reminders_add": [lambda w: ec.reminders_add([reminder])],
        "reminders_remove": [lambda w: ec.reminders_remove(2)],
        "navigation_view_add": [lambda w: ec.navigation_view_add({"fragment": "narrow/is/alerted", "is_pinned": True,
                                                                  "name": "Alerts"})],
        "navigation_view_update": [lambda w: ec.navigation_view_update("narrow/is/alerted", {"is_pinned": False})],
        "navigation_view_remove": [lambda w: ec.navigation_view_remove("narrow/is/alerted")],
        "device_add": [Gap(lambda w: ec.device_add(1), DEVICE_GAP)],
        "device_update": [Gap(lambda w: ec.device_update(1, push_key_id=7, pending_push_token_id="+wKIhyAx/Eg=",
                                                          push_token_last_updated_timestamp=TS,
                                                          push_registration_error_code=None), DEVICE_GAP),
                          Gap(lambda w: ec.device_update(1, push_token_id="+wKIhyAx/Eg=",
                                                          pending_push_token_id=None), DEVICE_GAP)],
        "device_remove": [Gap(lambda w: ec.device_remove(1), DEVICE_GAP)],
        "realm_update": [lambda w: ec.realm_update("default_code_block_language", "python")],
        "realm_update_dict": [lambda w: ec.realm_update_dict("default", {"allow_message_editing": True}),
                              lambda w: ec.realm_update_dict("icon", {"icon_url": "/user_avatars/1/realm/icon.png?version=2",
                                                                      "icon_source": "U"})],
        "realm_user_settings_defaults_update": [lambda w: ec.realm_user_settings_defaults_update("enter_sends", True)],
        "realm_emoji_update": [lambda w: ec.realm_emoji_update(emoji)],
        "realm_linkifiers": [lambda w: ec.realm_linkifiers([{"id": 1, "pattern": "#(?P<id>[0-9]+)",
                                                             "url_template": "https://tracker.example/{id}"}])],
        "realm_playgrounds": [lambda w: ec.realm_playgrounds([{"id": 1, "name": "Python", "pygments_language": "python",
                                                               "url_template": "https://python.example/?code={code}"}])],
        "custom_profile_fields": [lambda w: ec.custom_profile_fields([field])],
        "realm_export": [lambda w: ec.realm_export([export])],
        "realm_export_consent": [lambda w: ec.realm_export_consent(w.hamlet.id, True)],
    }


# Device events came with the end-to-end encrypted push registration (POST
# /mobile_push/register), after the feature level the description has.
DEVICE_GAP = "device events postdate the description's feature level (420)"

CASES = _cases()


def delivered(event, user_id):
    """The events a current client's queue hands out for one constructed event: published
    events through the queue manager's fan-out (which shapes message, update_message and
    delete_message per queue), a per-queue message event pushed as the fan-out pushes it."""
    manager = QueueManager()
    queue = manager.register(user_id=user_id, realm_id=1, apply_markdown=True, client_gravatar=False,
                             client_capabilities=CAPABILITIES)
    if event["type"] == "heartbeat":
        queue.heartbeat()
    elif event["type"] == "message" and "raw_content" not in event:
        queue.push(event)
    else:
        manager.deliver(event, [user_id])
    return queue.id, queue.get(-1, dont_block=True)


def test_every_constructor_has_a_case():
    """Is every catalogue constructor exercised below, and is every gap explained?"""
    assert set(CASES) == {c.__name__ for c in ec.constructors()}
    assert all(case.reason for cases in CASES.values() for case in cases if isinstance(case, Gap))


@pytest.mark.parametrize("name", sorted(CASES))
def test_constructor_output_matches_zulip_schema(org, events, name):
    """Does each constructor, built with realistic arguments and delivered to a current client's
    queue, give events that validate against Zulip's GET /events schema?"""
    world = World(org, events)
    for case in CASES[name]:
        build = case.build if isinstance(case, Gap) else case
        event = build(world)
        queue_id, delivered_events = delivered(event, org.hamlet.id)
        assert delivered_events and {e["type"] for e in delivered_events} == {event["type"]}, delivered_events
        body = {"result": "success", "msg": "", "queue_id": queue_id, "events": delivered_events}
        if isinstance(case, Gap):
            with pytest.raises(ValidationError):
                validate_response("GET", "/api/v1/events", 200, body)
        else:
            assert validate_response("GET", "/api/v1/events", 200, body)
