"""Fixtures: a fresh database per test, an example organization, clients that encode like
the zulip library (form bodies, JSON for every non-string value, HTTP Basic)."""

import pytest

from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
from chat_appliance.actions.realm import do_create_realm
from chat_appliance.actions.users import do_create_bot, do_create_user
from chat_appliance.app import create_app
from chat_appliance.db import close_connection, write_transaction
from chat_appliance.events.queues import manager as queue_manager
from chat_appliance.models import (
    ROLE_ADMINISTRATOR,
    ROLE_GUEST,
    ROLE_MEMBER,
    ROLE_MODERATOR,
    database,
)

from . import pg
from .helpers import ApiClient

# Cheap hashing keeps fixtures fast; production uses scrypt.
FAST_HASH = "pbkdf2:sha256:1000"
PASSWORD = "correct horse battery staple"
REALM_HOST = "zulip.example"


@pytest.fixture(scope="session", autouse=True)
def _postgres_session():
    """On PostgreSQL, drop every database the session made, at its end."""
    yield
    if pg.ENABLED:
        pg.drop_all()


@pytest.fixture(autouse=True)
def database_url(monkeypatch):
    """The database of this test: None on SQLite (each app makes its own file in tmp_path); on
    PostgreSQL a fresh migrated clone of the session's template, also given to commands run in
    the test through $CHAT_APPLIANCE_DATABASE_URL, and dropped after it."""
    if not pg.ENABLED:
        yield None
        return
    name, url = pg.clone_for_test()
    monkeypatch.setenv("CHAT_APPLIANCE_DATABASE_URL", url)
    yield url
    from chat_appliance.models import database

    if database.obj is not None and hasattr(database.obj, "close_all"):
        database.close_all()
    pg.drop_later(name)


@pytest.fixture
def app(tmp_path, database_url):
    """A Flask app on a fresh database (SQLite in tmp_path, or this test's PostgreSQL one)."""
    application = create_app({
        "INSTANCE_PATH": str(tmp_path),
        "DATABASE_URL": database_url,
        "PASSWORD_HASH_METHOD": FAST_HASH,
        "LOG_REQUESTS": False,
        "TESTING": True,
    })
    yield application
    close_connection()
    queue_manager.clear()


@pytest.fixture
def flask_client(app):
    return app.test_client()


class Org:
    """The example organization: named users and channels."""

    def __init__(self, flask_client):
        self.flask_client = flask_client
        with database.connection_context():
            self.realm, self.owner = do_create_realm("Zulip Dev", REALM_HOST, f"http://{REALM_HOST}",
                                                     "desdemona@zulip.example", "Desdemona", PASSWORD,
                                                     password_method=FAST_HASH)
            make = lambda email, name, role: do_create_user(  # noqa: E731
                self.realm, email, PASSWORD, name, role=role, password_method=FAST_HASH)
            self.admin = make("iago@zulip.example", "Iago", ROLE_ADMINISTRATOR)
            self.moderator = make("shiva@zulip.example", "Shiva", ROLE_MODERATOR)
            self.hamlet = make("hamlet@zulip.example", "King Hamlet", ROLE_MEMBER)
            self.othello = make("othello@zulip.example", "Othello, the Moor of Venice", ROLE_MEMBER)
            self.cordelia = make("cordelia@zulip.example", "Cordelia, Lear's daughter", ROLE_MEMBER)
            self.guest = make("polonius@zulip.example", "Polonius", ROLE_GUEST)
            self.bot = do_create_bot(self.hamlet, "Hamlet's Bot", "hamlet", 1)
            with write_transaction():
                streams, _created = do_create_streams(
                    self.realm, [("Denmark", "A Scandinavian country"), ("Verona", "A city in Italy")],
                    invite_only=False, history_public_to_subscribers=None, creator=self.owner)
                secret, _ = do_create_streams(self.realm, [("secret", "Private things")], invite_only=True,
                                              history_public_to_subscribers=False, creator=self.admin)
            self.denmark, self.verona = streams["denmark"], streams["verona"]
            self.secret = secret["secret"]
            subscribe_users_to_streams([self.denmark], [self.hamlet, self.othello, self.admin])
            subscribe_users_to_streams([self.verona], [self.hamlet, self.cordelia, self.guest])
            subscribe_users_to_streams([self.secret], [self.admin, self.hamlet])
            self.general = streams_by_name(self.realm, "general")

    def client(self, user):
        """An API client authenticated as `user`."""
        return ApiClient(self.flask_client, user.email, user.api_key)


def streams_by_name(realm, name):
    from chat_appliance.lib.access import get_stream_by_name

    return get_stream_by_name(realm.id, name)


@pytest.fixture
def org(flask_client):
    """The example organization (owner Desdemona, admin Iago, moderator Shiva, members Hamlet,
    Othello, Cordelia, guest Polonius, Hamlet's bot; channels general, Denmark, Verona, secret)."""
    return Org(flask_client)


@pytest.fixture
def anon(flask_client):
    """A client that sends no credentials."""
    return ApiClient(flask_client, None, None)

