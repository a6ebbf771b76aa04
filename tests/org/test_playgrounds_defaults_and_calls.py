"""Code playgrounds, user-settings defaults and BigBlueButton, through HTTP (push registrations:
tests/mobile/test_push_notifications.py)."""

from chat_appliance.actions.users import do_create_user
from chat_appliance.models import database

from ..support.helpers import FAST_HASH, PASSWORD, err, ok, polled, queues, register

PLAYGROUND = {"name": "Python playground", "pygments_language": "Python",
              "url_template": "https://python.example.com?code={code}"}


def test_playgrounds_add_remove_events(org):
    """Do administrators add and remove playgrounds, with the whole list in events and /register?"""
    admin = org.client(org.admin)
    qs = queues(org, org.othello, event_types=["realm_playgrounds"])
    playground_id = ok(admin.post("realm/playgrounds", **PLAYGROUND))["id"]
    expected = [{"id": playground_id, **PLAYGROUND}]
    assert register(org.client(org.othello), fetch_event_types=["realm_playgrounds"])["realm_playgrounds"] == expected
    ok(admin.delete(f"realm/playgrounds/{playground_id}"))
    assert [e["realm_playgrounds"] for e in polled(qs, org.othello)] == [expected, []]


def test_playground_errors(org):
    """Are members, bad languages, templates without exactly {code}, duplicates and unknown ids refused?"""
    admin = org.client(org.admin)
    err(org.client(org.hamlet).post("realm/playgrounds", **PLAYGROUND), 400, "UNAUTHORIZED_PRINCIPAL")
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, pygments_language="py$")), 400, "BAD_REQUEST",
        "Invalid characters in pygments language")
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, url_template="https://x.example/{other}")), 400,
        "BAD_REQUEST", '"code" should be the only variable present in the URL template')
    err(admin.post("realm/playgrounds", **dict(PLAYGROUND, url_template="https://x.example/{code")), 400,
        "BAD_REQUEST", "Invalid URL template.")
    err(admin.post("realm/playgrounds", name="x"), 400, "REQUEST_VARIABLE_MISSING")
    ok(admin.post("realm/playgrounds", **PLAYGROUND))
    err(admin.post("realm/playgrounds", **PLAYGROUND), 400, "BAD_REQUEST")
    err(admin.delete("realm/playgrounds/99999"), 400, "BAD_REQUEST", "Invalid playground")
    assert len(register(admin, fetch_event_types=["realm_playgrounds"])["realm_playgrounds"]) == 1


def test_user_settings_defaults(org):
    """Does an administrator's change reach /register and everyone's queues, and does a user
    created afterwards start with it?"""
    qs = queues(org, org.othello, event_types=["realm_user_settings_defaults"])
    ok(org.client(org.admin).patch("realm/user_settings_defaults", twenty_four_hour_time=True,
                                   web_home_view="recent_topics", email_address_visibility=3))
    events = polled(qs, org.othello)
    assert {(e["property"], e["value"]) for e in events} == {
        ("twenty_four_hour_time", True), ("web_home_view", "recent_topics"), ("email_address_visibility", 3)}
    defaults = register(org.client(org.othello),
                        fetch_event_types=["realm_user_settings_defaults"])["realm_user_settings_defaults"]
    assert defaults["twenty_four_hour_time"] is True and defaults["web_home_view"] == "recent_topics"
    with database.connection_context():
        newcomer = do_create_user(org.realm, "newcomer@zulip.example", PASSWORD, "Newcomer",
                                  password_method=FAST_HASH)
    settings = register(org.client(newcomer), fetch_event_types=["user_settings"])["user_settings"]
    assert settings["twenty_four_hour_time"] is True and settings["email_address_visibility"] == 3
    assert newcomer.email == f"user{newcomer.id}@{org.realm.host}"


def test_user_settings_defaults_errors(org):
    """Are members refused and bad values 400s that change nothing?"""
    err(org.client(org.hamlet).patch("realm/user_settings_defaults", twenty_four_hour_time=True), 400,
        "UNAUTHORIZED_PRINCIPAL")
    admin = org.client(org.admin)
    err(admin.patch("realm/user_settings_defaults", twenty_four_hour_time="maybe"), 400, "BAD_REQUEST")
    err(admin.patch("realm/user_settings_defaults", color_scheme=9), 400, "BAD_REQUEST")
    defaults = register(admin, fetch_event_types=["realm_user_settings_defaults"])["realm_user_settings_defaults"]
    assert defaults["twenty_four_hour_time"] is False and defaults["color_scheme"] == 1


def test_bigbluebutton_not_configured(org):
    """Does the BigBlueButton call URL answer Zulip's not-configured error, and need meeting_name?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.get("calls/bigbluebutton/create", meeting_name="standup"), 400, "BAD_REQUEST",
        "BigBlueButton is not configured.")
    err(hamlet.get("calls/bigbluebutton/create"), 400, "REQUEST_VARIABLE_MISSING")
