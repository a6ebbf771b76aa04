"""App-scoped state: two apps in one process share nothing, and closing an app releases it."""

import io

import pytest

from chat_appliance.app import close_app, create_app
from chat_appliance.db.backends import backend_for
from chat_appliance.config import database_url_for

from .helpers import Org, app_config, get_events, ok, register, send


@pytest.fixture
def two_orgs(tmp_path, database_templates):
    """The example organization twice, each on its own app and database copy."""
    apps = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        template = database_templates["org"]
        backend_for(template).clone_database(template, database_url_for(folder))
        apps.append(create_app(app_config(folder)))
    yield [Org(app.test_client()) for app in apps], apps
    for app in apps:
        close_app(app)


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
