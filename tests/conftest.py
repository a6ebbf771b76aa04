"""Fixtures: a fresh database per test, an example organization, clients that encode like
the zulip library (form bodies, JSON for every non-string value, HTTP Basic)."""

import pytest

from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
from chat_appliance.actions.realm import do_create_realm
from chat_appliance.actions.users import do_create_bot, do_create_user
from chat_appliance.app import create_app
from chat_appliance.backends import backend_for
from chat_appliance.config import database_url_for
from chat_appliance.db import close_connection, write_transaction
from chat_appliance.events import bus
from chat_appliance.events.queues import manager as queue_manager
from chat_appliance.lib.access import get_stream_by_name
from chat_appliance.models import (
    ROLE_ADMINISTRATOR,
    ROLE_GUEST,
    ROLE_MEMBER,
    ROLE_MODERATOR,
    Realm,
    UserProfile,
    database,
)

from . import pg
from .helpers import ApiClient

# Cheap hashing keeps fixtures fast; production uses scrypt.
FAST_HASH = "pbkdf2:sha256:1000"
PASSWORD = "correct horse battery staple"
REALM_HOST = "zulip.example"


def test_config(instance_path, database_url=None):
    """The configuration of a test app on the database in `instance_path` (SQLite), or at
    `database_url` (PostgreSQL)."""
    return {
        "INSTANCE_PATH": str(instance_path),
        "DATABASE_URL": database_url,
        "PASSWORD_HASH_METHOD": FAST_HASH,
        "LOG_REQUESTS": False,
        "TESTING": True,
    }


def close_app():
    close_connection()
    if pg.ENABLED:
        database.close_idle()  # PostgreSQL's pool: no idle session left on the working database
    queue_manager.clear()


@pytest.fixture(scope="session")
def database_templates(tmp_path_factory):
    """Databases built once per session and copied for each test: {"empty": URL after the
    migrations, "org": URL with the example organization added}. Building the organization
    (migrations, nine accounts, rendered welcome messages) per test cost most of the suite's time."""
    root = tmp_path_factory.mktemp("templates")
    empty_path, org_path = root / "empty", root / "org"
    empty_path.mkdir()
    org_path.mkdir()
    if pg.ENABLED:
        # One working database, reset to a saved state before each test (tests/pg.py).
        url = pg.work_database()
        create_app(test_config(empty_path, url))
        close_app()
        pg.save_snapshot("empty")
        create_app(test_config(org_path, url))
        Org.populate()
        close_app()
        pg.save_snapshot("org")
        return {"empty": url, "org": url}
    urls = {"empty": database_url_for(empty_path), "org": database_url_for(org_path)}
    create_app(test_config(empty_path))
    close_app()
    backend_for(urls["empty"]).clone_database(urls["empty"], urls["org"])
    create_app(test_config(org_path))
    Org.populate()
    close_app()
    return urls


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
    url = request.getfixturevalue("database_templates")["empty"]
    pg.restore_snapshot("org" if "org" in request.fixturenames else "empty")
    monkeypatch.setenv("CHAT_APPLIANCE_DATABASE_URL", url)
    yield url
    close_app()


@pytest.fixture
def app(request, tmp_path, database_templates, database_url):
    """A Flask app on a fresh database: a copy of the session's template, with the example
    organization when the test uses the `org` fixture (on PostgreSQL: `database_url`)."""
    if database_url is None:
        template = database_templates["org" if "org" in request.fixturenames else "empty"]
        backend_for(template).clone_database(template, database_url_for(tmp_path))
    application = create_app(test_config(tmp_path, database_url))
    yield application
    close_app()


@pytest.fixture
def flask_client(app):
    return app.test_client()


class Org:
    """The example organization: named users and channels."""

    USERS = {
        "owner": "desdemona@zulip.example", "admin": "iago@zulip.example", "moderator": "shiva@zulip.example",
        "hamlet": "hamlet@zulip.example", "othello": "othello@zulip.example",
        "cordelia": "cordelia@zulip.example", "guest": "polonius@zulip.example",
        "bot": "hamlet-bot@zulip.example",
    }
    STREAMS = {"denmark": "Denmark", "verona": "Verona", "secret": "secret", "general": "general"}

    @staticmethod
    def populate():
        """Create the organization in the current database (once per session, in the template)."""
        with database.connection_context():
            realm, owner = do_create_realm("Zulip Dev", REALM_HOST, f"http://{REALM_HOST}",
                                           Org.USERS["owner"], "Desdemona", PASSWORD, password_method=FAST_HASH)
            make = lambda key, name, role: do_create_user(  # noqa: E731
                realm, Org.USERS[key], PASSWORD, name, role=role, password_method=FAST_HASH)
            admin = make("admin", "Iago", ROLE_ADMINISTRATOR)
            make("moderator", "Shiva", ROLE_MODERATOR)
            hamlet = make("hamlet", "King Hamlet", ROLE_MEMBER)
            othello = make("othello", "Othello, the Moor of Venice", ROLE_MEMBER)
            cordelia = make("cordelia", "Cordelia, Lear's daughter", ROLE_MEMBER)
            guest = make("guest", "Polonius", ROLE_GUEST)
            bot = do_create_bot(hamlet, "Hamlet's Bot", "hamlet", 1)
            assert bot.email == Org.USERS["bot"], bot.email
            with write_transaction():
                streams, _created = do_create_streams(
                    realm, [("Denmark", "A Scandinavian country"), ("Verona", "A city in Italy")],
                    invite_only=False, history_public_to_subscribers=None, creator=owner)
                secret, _ = do_create_streams(realm, [("secret", "Private things")], invite_only=True,
                                              history_public_to_subscribers=False, creator=admin)
            subscribe_users_to_streams([streams["denmark"]], [hamlet, othello, admin])
            subscribe_users_to_streams([streams["verona"]], [hamlet, cordelia, guest])
            subscribe_users_to_streams([secret["secret"]], [admin, hamlet])

    def __init__(self, flask_client):
        """The organization as copied from the template: rows loaded by email and name."""
        self.flask_client = flask_client
        with database.connection_context():
            self.realm = Realm.get(Realm.host == REALM_HOST)
            for attribute, email in self.USERS.items():
                setattr(self, attribute, UserProfile.get(UserProfile.email == email))
            for attribute, name in self.STREAMS.items():
                setattr(self, attribute, get_stream_by_name(self.realm.id, name))

    def client(self, user):
        """An API client authenticated as `user`."""
        return ApiClient(self.flask_client, user.email, user.api_key)


@pytest.fixture
def org(flask_client):
    """The example organization (owner Desdemona, admin Iago, moderator Shiva, members Hamlet,
    Othello, Cordelia, guest Polonius, Hamlet's bot; channels general, Denmark, Verona, secret)."""
    return Org(flask_client)


@pytest.fixture
def anon(flask_client):
    """A client that sends no credentials."""
    return ApiClient(flask_client, None, None)



class EventRecorder:
    """Events published while the test runs, with the ids of the users they were sent to."""

    def __init__(self):
        self.published = []

    def __call__(self, event, user_ids):
        self.published.append((event, set(user_ids)))

    def of(self, type_, **match):
        """(event, user ids) pairs of this type whose top-level fields equal `match`."""
        return [(e, ids) for e, ids in self.published
                if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]

    def one(self, type_, **match):
        """The single matching event, asserted to be exactly one."""
        found = self.of(type_, **match)
        assert len(found) == 1, (type_, match, self.published)
        return found[0]


@pytest.fixture
def events():
    """An EventRecorder listening on the bus for the duration of the test."""
    recorder = bus.add_listener(EventRecorder())
    yield recorder
    bus.remove_listener(recorder)
