"""App-scoped state: two apps in one process share nothing, and closing an app releases it.

Every cache lives on the Runtime each app makes (db/runtime.py); the tests below take each
cache in turn and show that one app's entries never answer for the other."""

import ast
import io
import os
import time
from pathlib import Path

import pytest

import chat_appliance
from chat_appliance.app import close_app, create_app
from chat_appliance.db.backends import backend_for
from chat_appliance.db.runtime import ExpiringCache, activate, deactivate
from chat_appliance.config import database_url_for
from chat_appliance.models import UserProfile, database
from chat_appliance.web.auth import CREDENTIALS_MARKER
from chat_appliance.web.sessions import SESSION_CACHE_SECONDS, SESSION_COOKIE, token_hash

from ..support.helpers import PASSWORD, Org, app_config, err, get_events, ok, register, send
from ..support.webclient import SessionClient


def open_orgs(tmp_path, database_templates, configs):
    """The example organization once per configuration, each on its own app and database copy."""
    apps = []
    for number, config in enumerate(configs):
        folder = tmp_path / f"org{number}"
        folder.mkdir()
        template = database_templates["org"]
        backend_for(template).clone_database(template, database_url_for(folder))
        apps.append(create_app({**app_config(folder), **config}))
    return [Org(app.test_client()) for app in apps], apps


@pytest.fixture
def two_orgs(tmp_path, database_templates):
    """The example organization twice, each on its own app and database copy."""
    orgs, apps = open_orgs(tmp_path, database_templates, [{}, {}])
    yield orgs, apps
    for app in apps:
        close_app(app)


def runtime_of(app):
    return app.extensions["chat_appliance"].runtime


def test_two_apps_share_no_database_queue_or_listener(two_orgs):
    """Does a message sent through one app land in its database and its queues only, though
    both organizations have the same users and ids?"""
    (first, second), _apps = two_orgs
    first_queue = register(first.client(first.hamlet), event_types=["message"])["queue_id"]
    second_queue = register(second.client(second.hamlet), event_types=["message"])["queue_id"]
    message_id = send(second.client(second.othello), content="only in the second")
    assert [e["message"]["id"] for e in get_events(second.client(second.hamlet), second_queue)] == [message_id]
    assert get_events(first.client(first.hamlet), first_queue) == []
    first_view = first.client(first.hamlet).get(f"messages/{message_id}")
    assert first_view.status_code == 400
    assert ok(second.client(second.hamlet).get(f"messages/{message_id}"))["message"]["content"] == \
        "<p>only in the second</p>"


def test_closing_an_app_releases_its_connections(two_orgs):
    """Does close_app close the SQLite keeper connection and leave the other app working?"""
    (_first, second), (first_app, _second_app) = two_orgs
    database = first_app.extensions["chat_appliance"].runtime.database
    assert database.keeper is not None
    close_app(first_app)
    assert database.keeper is None and database.is_closed()
    ok(second.client(second.hamlet).get("users/me"))


def test_temporary_upload_urls_survive_a_restart(tmp_path, database_templates):
    """Is the key signing temporary upload URLs kept in the instance, so that a URL made before a
    restart still opens the file after it?"""
    template = database_templates["org"]
    backend_for(template).clone_database(template, database_url_for(tmp_path))
    before = create_app(app_config(tmp_path))
    org = Org(before.test_client())
    client = org.client(org.hamlet)
    uploaded = ok(client.flask_client.post("/api/v1/user_uploads", headers=client.headers,
                                           data={"file": (io.BytesIO(b"kept"), "kept.txt")},
                                           content_type="multipart/form-data"))
    temporary = ok(client.get(uploaded["url"].replace("/user_uploads/", "user_uploads/", 1)))["url"]
    close_app(before)
    after = create_app(app_config(tmp_path))
    try:
        response = after.test_client().get(temporary)
        assert response.status_code == 200 and response.data == b"kept"
    finally:
        close_app(after)
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_a_session_cached_by_one_app_opens_nothing_in_another(two_orgs):
    """Is a browser session that one app has cached for its long polls refused by another app,
    whose database has no such session?"""
    (first, second), _apps = two_orgs
    web = SessionClient.signed_in(first.flask_client, "hamlet@zulip.example", PASSWORD)
    queue_id = ok(web.post("register", event_types=["message"]))["queue_id"]
    ok(web.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))
    second.flask_client.set_cookie(SESSION_COOKIE, first.flask_client.get_cookie(SESSION_COOKIE).value)
    intruder = SessionClient(second.flask_client, web.csrf_token)
    assert intruder.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True).status_code == 401


def test_credentials_cached_by_one_app_do_not_open_another(two_orgs):
    """After one organization regenerates Hamlet's API key, is his old key (still good in the
    other, which cached it for its long polls) refused there, and is each app's login-email map
    its own?"""
    (first, second), (first_app, second_app) = two_orgs
    old_client = second.client(second.hamlet)
    new_key = ok(old_client.post("users/me/api_key/regenerate"))["api_key"]
    first_queue = register(first.client(first.hamlet), event_types=["message"])["queue_id"]
    assert get_events(first.client(first.hamlet), first_queue) == []
    second.hamlet.api_key = new_key
    second_queue = register(second.client(second.hamlet), event_types=["message"])["queue_id"]
    err(old_client.get("events", queue_id=second_queue, last_event_id=-1, dont_block=True), 401,
        "INVALID_API_KEY", "Invalid API key")
    ok(first.client(first.othello).get("users/me"))
    assert "othello@zulip.example" in runtime_of(first_app).login_ids
    assert "othello@zulip.example" not in runtime_of(second_app).login_ids


def test_each_app_watches_its_own_credentials_marker(two_orgs):
    """When an admin command changes a key in one instance and touches that instance's marker
    file, does that instance's app drop its cached credentials, though another app was opened
    after it?"""
    (first, _second), (first_app, _second_app) = two_orgs
    client = first.client(first.hamlet)
    queue_id = register(client, event_types=["message"])["queue_id"]
    assert get_events(client, queue_id) == []  # Hamlet's key is now cached for long polls
    token = activate(runtime_of(first_app))
    try:
        with database.connection_context():
            UserProfile.update(api_key="k" * 32).where(UserProfile.id == first.hamlet.id).execute()
    finally:
        deactivate(token)
    marker = Path(first_app.config["INSTANCE_PATH"]) / CREDENTIALS_MARKER
    marker.touch()
    later = marker.stat().st_mtime_ns + 1_000_000_000
    os.utime(marker, ns=(later, later))
    err(client.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True), 401, "INVALID_API_KEY")


def test_an_expired_session_leaves_the_cache(app, org):
    """Once its time in the cache is over, does a session's entry leave the app's session cache
    at the next use of the cache by anyone, instead of staying in memory for ever?"""
    sessions = runtime_of(app).sessions
    hamlet_client, othello_client = app.test_client(), app.test_client()
    hamlet = SessionClient.signed_in(hamlet_client, "hamlet@zulip.example", PASSWORD)
    queue_id = ok(hamlet.post("register", event_types=["message"]))["queue_id"]
    ok(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))
    hamlet_digest = token_hash(hamlet_client.get_cookie(SESSION_COOKIE).value)
    assert len(sessions) == 1 and hamlet_digest in sessions
    sessions.clock = lambda: time.monotonic() + SESSION_CACHE_SECONDS + 1
    othello = SessionClient.signed_in(othello_client, "othello@zulip.example", PASSWORD)
    other_queue = ok(othello.post("register", event_types=["message"]))["queue_id"]
    ok(othello.get("events", queue_id=other_queue, last_event_id=-1, dont_block=True))
    assert len(sessions) == 1 and hamlet_digest not in sessions
    # Hamlet's next poll reads his session again (still valid in the database).
    ok(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))
    assert hamlet_digest in sessions


def test_expiring_caches_are_bounded():
    """Does an expiring cache (sessions, credentials, login emails) hold no more than its size,
    dropping the oldest entry first, and never keep an entry without a lifetime?"""
    now = [0.0]
    cache = ExpiringCache(3, clock=lambda: now[0])
    for key in range(5):
        cache.put(key, f"value {key}", 60)
    assert len(cache) == 3 and [cache.get(key) for key in range(5)] == [None, None, "value 2", "value 3", "value 4"]
    cache.put("ended", "session past its end", 0)
    assert "ended" not in cache and len(cache) == 3
    now[0] = 61
    assert cache.get(4) is None and len(cache) == 0


def test_each_app_renders_with_its_own_configuration(tmp_path, database_templates):
    """With image previews off in one app and on in another, does each render a message with an
    image link by its own configuration, in its own render context?"""
    (plain, previewing), apps = open_orgs(tmp_path, database_templates, [{"INLINE_IMAGE_PREVIEW": False}, {}])
    try:
        contents = []
        for org in (plain, previewing):
            client = org.client(org.hamlet)
            message_id = send(client, content="look https://img.example/cat.png")
            contents.append(ok(client.get(f"messages/{message_id}"))["message"]["content"])
        assert "message_inline_image" not in contents[0] and 'class="message_inline_image"' in contents[1]
        assert plain.realm.id in runtime_of(apps[0]).render_contexts
        assert runtime_of(apps[0]).render_contexts is not runtime_of(apps[1]).render_contexts
    finally:
        for app in apps:
            close_app(app)


def test_each_app_caches_its_own_message_objects(two_orgs):
    """When the same message id holds different messages in two organizations, does each app's
    fetch (answered from its message cache the second time) give its own?"""
    (first, second), _apps = two_orgs
    ids = [send(org.client(org.hamlet), content=text) for org, text in ((first, "first"), (second, "second"))]
    assert ids[0] == ids[1]
    for _round in range(2):
        for org, text in ((first, "first"), (second, "second")):
            fetched = ok(org.client(org.othello).get("messages", anchor="newest", num_before=1, num_after=0))
            assert [m["content"] for m in fetched["messages"]] == [f"<p>{text}</p>"]


# Module-level values that memoize a pure function of the code (never of an app's data or
# configuration), so that no app can see another through them: allowed, with the reason.
PURE_MEMOS = {
    ("markdown/inline.py", "_emoji_span_html"): "HTML of an emoji code (emoji data are constants)",
    ("markdown/inline.py", "_emoji_run_re"): "the emoji pattern, compiled from constant data",
    ("markdown/emoji.py", "code_for_unicode"): "emoji code of a text",
    ("markdown/blocks.py", "_lexer_class"): "Pygments lexer class of a language name",
    ("markdown/blocks.py", "_lexer"): "one lexer per lexer class",
    ("markdown/blocks.py", "highlight_code"): "highlighted HTML of a code block and its language",
    ("markdown/blocks.py", "_formatters"): "a thread's HtmlFormatter (fixed options)",
    ("markdown/engine.py", "_local"): "a thread's Markdown parser, reset before each render",
    ("markdown/budget.py", "_once"): "a thread's one-time CPU seconds within its current render, reset by start()",
    ("markdown/urls.py", "_template_parts"): "a linkifier URL template split into its parts",
    ("markdown/urls.py", "sanitize_url"): "the safe form of a link target, or None (a function of the text)",
    ("webclient/views.py", "page_template"): "the packaged page",
    ("webclient/views.py", "scripts_version"): "a hash of the packaged scripts",
    ("webclient/views.py", "emoji_table_json"): "the emoji table (constants)",
    ("webclient/views.py", "static_entry"): "a packaged static file's bytes, keyed by its path, mtime and size",
    ("webclient/views.py", "emoji_api_json"): "the emoji data served at server_emoji_data_url (constants)",
    ("models/base.py", "_RAW_SELECT_SQL"): "SQL text by model, condition and parameter style",
    ("models/base.py", "_ROW_BUILDERS"): "row-to-instance function by model class",
    ("models/base.py", "_INSERT_SQL"): "SQL text by model and parameter style",
    ("models/base.py", "_QUERY_ROWS_SQL"): "SQL text by statement and parameter style",
    ("lib/passwords.py", "_dummy_hashes"): "a throwaway hash per hash method (timing only)",
    ("lib/messages.py", "_FLAG_NAMES"): "flag names by bitfield",
    ("lib/narrow.py", "_highlighter"): "the compiled highlight pattern of a set of search terms",
    ("lib/serializers.py", "gravatar_url"): "the Gravatar URL of an email and avatar version",
    ("db/connection.py", "_transaction_local"): "a thread's open transaction, not a cache",
    ("db/runtime.py", "_latest"): "which runtime is in use outside requests",
    ("integrations/__init__.py", "registry"): "the integration modules found on disk, the same for every app",
    ("ops/transfer/slack_text.py", "_slack_emoji_codes"): "iamcal's emoji table, read once from its package",
}
MUTABLE_CALLS = {"dict", "set", "list", "OrderedDict", "defaultdict", "local", "deque", "WeakValueDictionary",
                 "WeakKeyDictionary"}
CACHE_DECORATORS = {"lru_cache", "cache", "cached_property"}


def module_level_state(tree):
    """Names bound at module level to an empty mutable container, and functions memoized there."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            empty = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not getattr(
                value, "keys" if isinstance(value, ast.Dict) else "elts")
            call = (isinstance(value, ast.Call) and not value.args and not value.keywords
                    and getattr(value.func, "attr", getattr(value.func, "id", None)) in MUTABLE_CALLS)
            if empty or call or node.targets[0].id == "_latest":
                yield node.targets[0].id
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if getattr(target, "attr", getattr(target, "id", None)) in CACHE_DECORATORS:
                    yield node.name


def test_no_module_keeps_a_cache_of_its_own():
    """Is every module-level container or memoized function of the package one of the known
    memos of pure functions, so that app state can live only on the app's Runtime?"""
    root = Path(chat_appliance.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        found.update((path.relative_to(root).as_posix(), name) for name in module_level_state(tree))
    assert found - set(PURE_MEMOS) == set()
