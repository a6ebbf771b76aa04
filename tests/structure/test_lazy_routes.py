"""The app adds its api/ routes from api/routes.py and imports a view module only when a request
is routed to it (start-up time and idle memory). These check that the list is the blueprints'
own, that lazily loaded views are the very functions eager registration would mount, and that a
fresh process serves a request without importing the other view modules."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from flask import Blueprint

from chat_appliance.api import BLUEPRINTS, ROOT_BLUEPRINTS
from chat_appliance.app import OnFirstUse, blueprint_mounts
from chat_appliance.web.fast_routing import blueprint_views, load_blueprint, routing_app

REPO_ROOT = Path(__file__).resolve().parents[2]


def rule_facts(app):
    return sorted((rule.rule, rule.endpoint, tuple(sorted(rule.methods)), rule.defaults,
                   rule.provide_automatic_options, rule.strict_slashes)
                  for rule in app.url_map.iter_rules() if rule.endpoint != "static")


def eager_app():
    """Flask's own way: every blueprint imported and registered."""
    app = routing_app("chat_appliance.app", static_folder=None)
    for module, attribute, options in blueprint_mounts():
        app.register_blueprint(load_blueprint(module, attribute), **options)
    return app


def test_routes_file_is_up_to_date():
    result = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "make_routes.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_lazy_routes_are_the_eager_ones_with_the_same_views(app):
    eager = eager_app()
    lazy_rules = [facts for facts in rule_facts(app) if facts[1].partition(".")[0] in app.view_functions.owners]
    assert lazy_rules == rule_facts(eager)
    for endpoint, view in eager.view_functions.items():
        if endpoint != "static":
            assert app.view_functions[endpoint] is view, endpoint
    app.view_functions.load_all()
    assert {endpoint for endpoint in app.view_functions if endpoint in eager.view_functions} == set(eager.view_functions)


def test_unknown_endpoint_is_still_a_key_error(app):
    with pytest.raises(KeyError):
        app.view_functions["no_such_blueprint.view"]


def test_a_blueprint_with_hooks_is_refused():
    """Flask merges a blueprint's hooks into the app only when it registers it, which lazy
    mounting never does: such a blueprint must fail the route list, not lose its hooks."""
    blueprint = Blueprint("hooked", __name__)

    @blueprint.get("/x")
    def view():
        return "x"

    assert blueprint_views(blueprint)[0][0] == "view"

    @blueprint.before_request
    def hook():
        return None

    with pytest.raises(ValueError, match="before_request_funcs"):
        blueprint_views(blueprint)


def test_every_api_module_is_listed():
    listed = {module for module, _ in BLUEPRINTS + ROOT_BLUEPRINTS}
    on_disk = {path.stem for path in (REPO_ROOT / "chat_appliance" / "api").glob("*.py")}
    assert on_disk - {"__init__", "routes"} == listed


def test_a_request_imports_only_its_own_view_module(tmp_path):
    """A fresh process: creating the app imports no view module but api.server (the version
    constants), nor the web client's pages, nor the listeners' actions, the mailer, the push
    protocol and the shards' machinery; GET /users/me then imports api.users, and not the
    others."""
    script = textwrap.dedent(f"""
        import base64, sys
        from chat_appliance.app import create_app
        from chat_appliance.actions.realm import do_create_realm
        from chat_appliance.models import database
        app = create_app({{"INSTANCE_PATH": {str(tmp_path)!r}, "LOG_REQUESTS": False,
                          "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"}})
        def views():
            return sorted(m for m in sys.modules if m.startswith("chat_appliance.api.") and m != "chat_appliance.api.routes"
                          or m.startswith("chat_appliance.webclient."))
        print(views())
        listeners = ("chat_appliance.workers.push_notifications", "chat_appliance.workers.missed_messages",
                     "chat_appliance.workers.service_dispatch", "chat_appliance.workers.link_previews", "smtplib",
                     "chat_appliance.clients.push_service", "chat_appliance.events.shards",
                     "chat_appliance.web.shared_rate_limit", "chat_appliance.clients.send_email")
        assert not [name for name in listeners if name in sys.modules], [name for name in listeners if name in sys.modules]
        with database.connection_context():
            realm, user = do_create_realm("Lazy", "127.0.0.1", "http://127.0.0.1", "lazy@example.com", "Lazy",
                                          "pw-lazy-1234", password_method="pbkdf2:sha256:1000")
        token = base64.b64encode(f"{{user.email}}:{{user.api_key}}".encode()).decode()
        response = app.test_client().get("/api/v1/users/me", headers={{"Authorization": "Basic " + token}})
        assert response.status_code == 200, response.data
        print(views())
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    before, after = result.stdout.strip().splitlines()[-2:]
    assert before == "['chat_appliance.api.server']"
    assert after == "['chat_appliance.api.server', 'chat_appliance.api.users']"


def test_creating_the_app_loads_no_rendering_nor_message_serializers(tmp_path):
    """A fresh process that only creates the app (a server between its start and its first
    request): the bus listeners that empty the render and message caches are registered without
    loading those caches' modules, nor the narrow matcher of the event queues; the upload store
    is made without the upload actions and thumbnails."""
    script = textwrap.dedent(f"""
        import sys
        from chat_appliance.app import create_app
        app = create_app({{"INSTANCE_PATH": {str(tmp_path)!r}, "LOG_REQUESTS": False}})
        print(sorted(m for m in ("chat_appliance.lib.messages", "chat_appliance.lib.rendering",
                                 "chat_appliance.lib.narrow", "chat_appliance.markdown.context",
                                 "chat_appliance.actions.uploads", "chat_appliance.lib.thumbnails")
                     if m in sys.modules))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_on_first_use_builds_once_and_forwards(monkeypatch):
    built = []

    class Listener:
        def __init__(self):
            self.seen = []
            self.closed = False

        def __call__(self, event, user_ids):
            self.seen.append(event["type"])

        def close(self):
            self.closed = True

    def build():
        built.append(1)
        return Listener()

    never = OnFirstUse(build)
    never.close()  # never built: nothing to close, and nothing built for it
    assert built == []
    listener = OnFirstUse(build)
    listener({"type": "message"}, [1])
    listener({"type": "typing"}, [1])
    assert built == [1] and listener.seen == ["message", "typing"]
    monkeypatch.setattr(listener, "seen", ["patched"])
    assert listener.built().seen == ["patched"]
    monkeypatch.undo()
    assert listener.seen == ["message", "typing"]
    listener.close()
    assert listener.closed and built == [1]
