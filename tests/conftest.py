"""Fixtures: a fresh database per test, an example organization, clients that encode like
the zulip library (form bodies, JSON for every non-string value, HTTP Basic)."""

import os
import sys
from pathlib import Path

# Compiled modules are kept for the whole run, in .cache/pycache of the checkout, even where
# PYTHONDONTWRITEBYTECODE asks for none (as on this project's CI machines): the suite starts
# dozens of processes (xdist workers, `serve`, the command line), and each of them compiled the
# package, and each worker rewrote every test module's asserts, from source again (seconds of CPU
# per worker).
# Set here, before the package is imported, and in the environment that those processes inherit.
PYCACHE = Path(__file__).resolve().parents[1] / ".cache" / "pycache"
if sys.dont_write_bytecode or "PYTHONPYCACHEPREFIX" not in os.environ:
    sys.dont_write_bytecode = False
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import pytest  # noqa: E402 (after the bytecode settings)

from chat_appliance.app import close_app, create_app, open_app
from chat_appliance.config import database_url_for
from chat_appliance.db.backends import backend_for
from chat_appliance.events import bus
from chat_appliance.models import database

from .support import pg
from .support.helpers import INIT_ARGS, ApiClient, EventRecorder, Org, app_config, run

# The fixtures that put a Flask app (and its test client) under a test: such a test is `api`.
APP_FIXTURES = {"app", "flask_client", "org", "anon", "events", "push_configured", "mail"}
# Folders whose tests run real processes (a `serve`, unmodified clients); browser/ runs Chromium too.
E2E_FOLDERS = {"e2e", "browser"}
# Modules elsewhere whose tests run the command line or a real server.
E2E_MODULES = {"tests.ops.test_cli", "tests.ops.test_export_import_commands", "tests.ops.test_backup",
               "tests.ops.test_migrate_database", "tests.bots.test_bot_author_example", "tests.ops.test_upgrade",
               "tests.ops.test_import_slack"}


# Modules that take the longest (minutes on a busy machine), started first so that under
# pytest-xdist (--dist loadfile) no worker is left with one of them at the end.
SLOW_MODULES = ("tests.browser.test_webclient", "tests.browser.test_webclient_admin",
                "tests.browser.test_webclient_habits", "tests.e2e.test_shards",
                "tests.e2e.test_tls", "tests.browser.test_webclient_features")


def pytest_xdist_auto_num_workers(config):
    """Workers for `-n auto` (setup.cfg): on SQLite twice the cores, at most four more than them.
    A worker spends much of its time waiting on the processes its tests drive (`serve`, Chromium,
    the command line), so one per core left a two-core machine a third idle; more than twice made
    the CPU-bound rest of the suite no faster. On PostgreSQL one per core: the database server's
    own processes take a share of the CPU, and with twice the workers the browser tests, which
    wait on timings, failed now and then."""
    cores = os.cpu_count() or 1
    if pg.ENABLED:
        return cores
    return min(2 * cores, cores + 4)


def module_of(item):
    """(dotted module name, its folder under tests/) of a collected test."""
    name = item.module.__name__ if item.module else ""
    parts = name.split(".")
    return name, parts[1] if len(parts) > 2 and parts[0] == "tests" else ""


def module_rank(item):
    """0 for the slowest modules, 1 for other end-to-end ones, 2 for the rest."""
    module, folder = module_of(item)
    if module in SLOW_MODULES:
        return 0
    return 1 if folder in E2E_FOLDERS or module in E2E_MODULES else 2


def pytest_collection_modifyitems(config, items):
    """Mark every test with its kind (setup.cfg lists them): `browser` for the tests in tests/browser/
    (the web client in Chromium; `e2e` too), `e2e` for tests that run real processes (tests/e2e/,
    the command line, a `serve`), `api` for tests through the Flask test client, `unit` for the
    rest. Then order the modules slowest first (the order within a module stays)."""
    items.sort(key=module_rank)
    for item in items:
        module, folder = module_of(item)
        uses = set(getattr(item, "fixturenames", ()))
        if folder == "browser":
            item.add_marker(pytest.mark.browser)
        if folder in E2E_FOLDERS or module in E2E_MODULES or uses & {"instance", "chat_server"}:
            item.add_marker(pytest.mark.e2e)
        elif uses & APP_FIXTURES:
            item.add_marker(pytest.mark.api)
        else:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(scope="session")
def database_templates(tmp_path_factory):
    """Databases built once per session and copied for each test: {"empty": URL after the
    migrations, "org": URL with the example organization added}. Building the organization
    (migrations, nine accounts, rendered welcome messages) per test cost most of the suite's time."""
    root = tmp_path_factory.mktemp("templates")
    empty_path, org_path = root / "empty", root / "org"
    empty_path.mkdir()
    org_path.mkdir()
    postgres = {}
    if pg.ENABLED:
        # One working database, reset to a saved state before each test (tests/support/pg.py). The SQLite
        # templates are made too, for the few tests that copy one into a folder of their own.
        url = postgres["pg"] = pg.work_database()
        close_app(create_app({**app_config(empty_path), "DATABASE_URL": url}))
        pg.save_snapshot("empty")
        application = create_app({**app_config(org_path), "DATABASE_URL": url})
        Org.populate(application.extensions["chat_appliance"].limits)
        close_app(application)
        pg.save_snapshot("org")
    close_app(create_app(app_config(empty_path)))
    urls = {"empty": database_url_for(empty_path), "org": database_url_for(org_path)}
    backend_for(urls["empty"]).clone_database(urls["empty"], urls["org"])
    application = create_app(app_config(org_path))
    Org.populate(application.extensions["chat_appliance"].limits)
    close_app(application)
    return {**urls, **postgres}


@pytest.fixture(scope="session", autouse=True)
def _postgres_session():
    """On PostgreSQL, drop every database the session made, at its end."""
    yield
    if pg.ENABLED:
        pg.drop_all()


@pytest.fixture(autouse=True)
def database_url(request, monkeypatch):
    """The database of this test: None on SQLite (the app copies its template into tmp_path);
    on PostgreSQL the session's working database reset to the saved state (with the example
    organization when the test uses `org`), also given to commands run in the test through
    $CHAT_APPLIANCE_DATABASE_URL."""
    if not pg.ENABLED:
        yield None
        return
    url = request.getfixturevalue("database_templates")["pg"]
    pg.restore_snapshot("org" if "org" in request.fixturenames else "empty")
    monkeypatch.setenv("CHAT_APPLIANCE_DATABASE_URL", url)
    yield url


@pytest.fixture(scope="session")
def app_shell(database_templates, tmp_path_factory):
    """One Flask app for the session, closed between tests and opened on each test's database:
    building the URL map (werkzeug compiles every rule) cost more than the rest of a test's setup."""
    folder = tmp_path_factory.mktemp("shell")
    if pg.ENABLED:
        application = create_app({**app_config(folder), "DATABASE_URL": database_templates["pg"]})
    else:
        backend_for(database_templates["empty"]).clone_database(database_templates["empty"],
                                                                database_url_for(folder))
        application = create_app(app_config(folder))
    close_app(application)
    return application


@pytest.fixture
def app(request, tmp_path, database_templates, app_shell, database_url):
    """The Flask app on a fresh database: a copy of the session's template, with the example
    organization when the test uses the `org` fixture (on PostgreSQL: `database_url`, reset).
    `@pytest.mark.config(KEY=value)` sets configuration keys, as config.json would."""
    if database_url is None:
        template = database_templates["org" if "org" in request.fixturenames else "empty"]
        backend_for(template).clone_database(template, database_url_for(tmp_path))
    marker = request.node.get_closest_marker("config")
    application = open_app(app_shell, {**app_config(tmp_path), "DATABASE_URL": database_url,
                                       **(marker.kwargs if marker else {})})
    yield application
    close_app(application)


@pytest.fixture
def flask_client(app):
    """Flask's test client of the app."""
    return app.test_client()


@pytest.fixture
def org(flask_client):
    """The example organization (owner Desdemona, admin Iago, moderator Shiva, members Hamlet,
    Othello, Cordelia, guest Polonius, Hamlet's bot; channels general, Denmark, Verona, secret)."""
    return Org(flask_client)


@pytest.fixture
def anon(flask_client):
    """A client that sends no credentials."""
    return ApiClient(flask_client, None, None)


@pytest.fixture
def events(app):
    """An EventRecorder listening on the app's bus for the duration of the test."""
    runtime = app.extensions["chat_appliance"].runtime
    recorder = bus.add_listener(EventRecorder(), runtime)
    yield recorder
    bus.remove_listener(recorder, runtime)


@pytest.fixture
def push_service():
    """A stand-in for Zulip's Mobile Push Notification Service on loopback (tests/support/push_service_standin.py)."""
    from .support.push_service_standin import PushServiceStandIn

    standin = PushServiceStandIn().start()
    yield standin
    standin.stop()


@pytest.fixture
def push_configured(app, push_service):
    """The app registered with the stand-in (its org id and key in the configuration), retrying fast."""
    org_id, key = push_service.register_server()
    app.config.update(ZULIP_SERVICES_URL=push_service.url, ZULIP_ORG_ID=org_id, ZULIP_ORG_KEY=key,
                      PUSH_NOTIFICATION_RETRY_SECONDS=0.05, PUSH_NOTIFICATION_TIMEOUT_SECONDS=5)
    return push_service


@pytest.fixture
def smtp():
    """A real SMTP server on loopback (tests/support/smtp_sink.py) keeping every mail it receives."""
    from .support.smtp_sink import SmtpSink

    sink = SmtpSink()
    sink.controller.start()
    yield sink
    sink.controller.stop()


@pytest.fixture
def mail(app, smtp):
    """The app sends its mail to the `smtp` server, retrying quickly."""
    app.config.update(smtp.config(), EMAIL_RETRY_SECONDS=0.2, EMAIL_TIMEOUT_SECONDS=2)
    return smtp


@pytest.fixture
def instance(tmp_path):
    path = tmp_path / "inst"
    result = run("init", "--instance", str(path), *INIT_ARGS)
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture
def new_database(tmp_path):
    """A function making an empty database of this run's engine: (url, peewee database, backend)."""
    made, opened = [], []

    def make(label):
        if pg.ENABLED:
            name = pg.new_name(label)
            url = pg.create(name)
            made.append(name)
        else:
            url = f"sqlite:///{tmp_path / (label + '.sqlite3')}"
        backend = backend_for(url)
        db = backend.open_database(url, pool_size=2)
        opened.append(db)
        return url, db, backend

    yield make
    for db in opened:
        if hasattr(db, "close_all"):
            db.close_all()
    if hasattr(database.obj, "close_all"):
        database.close_all()
    for name in made:
        pg.drop(name)


@pytest.fixture
def statements(monkeypatch):
    """(sql, params) of every statement run through the app's database (pooled and write
    connections), in order; clear() it to count from a point."""
    from chat_appliance.models import database

    counted = []
    cls = type(database.obj)
    original = cls.execute_sql

    def execute_sql(self, sql, params=None, *args, **kwargs):
        counted.append((sql, tuple(params or ())))
        return original(self, sql, params, *args, **kwargs)

    monkeypatch.setattr(cls, "execute_sql", execute_sql)
    return counted
