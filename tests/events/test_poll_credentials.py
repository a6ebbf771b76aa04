"""GET/DELETE /events check credentials against an in-memory cache (re-polls must not queue on
database connections); the cache never accepts what the database would refuse."""

from chat_appliance.web import auth

from ..support.helpers import ApiClient, err, ok, register


def poll(client, queue_id):
    return client.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True)


def test_repolls_do_not_authenticate_against_the_database(org, monkeypatch):
    """After the first poll, do further polls skip the database check?"""
    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["message"])["queue_id"]
    ok(poll(client, queue_id))
    calls = []
    original = auth.verify_api_key
    monkeypatch.setattr(auth, "verify_api_key", lambda *args: calls.append(1) or original(*args))
    for _ in range(3):
        ok(poll(client, queue_id))
    assert calls == []


def test_cached_entry_never_accepts_a_wrong_key(org):
    """With the user's credentials cached, is a wrong key still refused?"""
    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["message"])["queue_id"]
    ok(poll(client, queue_id))
    wrong = ApiClient(org.flask_client, org.hamlet.email, "x" * 32)
    err(poll(wrong, queue_id), 401, "INVALID_API_KEY")


def test_new_api_key_drops_the_cached_one(org):
    """Does regenerating the key stop the old one working for long polls at once?"""
    from chat_appliance.actions.users import do_regenerate_api_key
    from chat_appliance.models import UserProfile, database

    client = org.client(org.hamlet)
    queue_id = register(client, event_types=["message"])["queue_id"]
    ok(poll(client, queue_id))
    with database.connection_context():
        do_regenerate_api_key(UserProfile.get_by_id(org.hamlet.id))
    err(poll(client, queue_id), 401, "INVALID_API_KEY")


def test_deactivation_drops_the_cached_user(org):
    """Does a deactivated user's cached login stop working for long polls at once?"""
    client = org.client(org.othello)
    queue_id = register(client, event_types=["message"])["queue_id"]
    ok(poll(client, queue_id))
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    err(poll(client, queue_id), 401, "USER_DEACTIVATED")
