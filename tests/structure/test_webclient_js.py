"""The web client's shape, checked on its sources: small modules, one place where events are
told apart by type, and a dispatcher that knows every event type the server sends."""

import re
from pathlib import Path

from chat_appliance.lib.event_catalogue import catalogue

JS = Path(__file__).resolve().parents[2] / "chat_appliance" / "webclient" / "static" / "js"
DISPATCHER = JS / "dispatch.js"
MAX_LINES = 400

# A switch or comparison on an event's type: `event.type`, `ev.type`, `evt.type`. (A message's
# or a compose target's `.type` is something else and is not matched.)
EVENT_TYPE = re.compile(r"\b(?:event|ev|evt)\.type\b")


def modules():
    return sorted(JS.rglob("*.js"))


def test_no_module_is_over_the_line_limit():
    """Is every script module of the client at most 400 lines long?"""
    long = {str(path.relative_to(JS)): n for path in modules() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_one_module_tells_events_apart_by_type():
    """Does exactly one module (the dispatcher) look at an event's type, every other module
    subscribing to the typed changes it emits?"""
    looking = {str(path.relative_to(JS)) for path in modules() if EVENT_TYPE.search(path.read_text())}
    assert looking == {"dispatch.js"}


def test_main_is_boot_and_layout_only():
    """Does main.js only boot and lay the page out, handing events to the dispatcher rather than
    subscribing to changes or drawing views itself?"""
    text = (JS / "main.js").read_text()
    assert "pollLoop(dispatch," in text
    assert "model.on(" not in text
    assert len(text.splitlines()) < 200


def dispatcher_lists():
    """The event types dispatch.js applies (STORES' keys) and those it ignores (IGNORED)."""
    text = DISPATCHER.read_text()
    stores = re.search(r"const STORES = \{(.*?)\n\};", text, re.S).group(1)
    ignored = re.search(r"const IGNORED = new Set\(\[(.*?)\]\);", text, re.S).group(1)
    handled = set(re.findall(r"^\s*(\w+):", stores, re.M))
    return handled, set(re.findall(r'"(\w+)"', ignored))


def test_dispatcher_covers_the_event_catalogue():
    """Is every event type of the server's catalogue either applied by the dispatcher or listed
    as ignored, and does the dispatcher name no type the server does not send?"""
    handled, ignored = dispatcher_lists()
    types = {row[0] for row in catalogue()}
    assert handled and not (handled & ignored)
    assert sorted(types - handled - ignored) == []
    assert sorted((handled | ignored) - types) == []


def test_dispatcher_applies_what_the_client_shows():
    """Are the event types the client shows live (messages, their edits and flags, channels,
    people, statuses, drafts, settings) applied, not ignored?"""
    handled, _ = dispatcher_lists()
    needed = {"message", "update_message", "delete_message", "update_message_flags", "reaction", "submessage",
              "typing", "stream", "subscription", "realm_user", "user_status", "presence", "user_topic", "drafts",
              "realm", "user_settings", "user_group", "realm_bot", "realm_emoji", "custom_profile_fields"}
    assert sorted(needed - handled) == []
