"""Configuration: config.json, CHAT_APPLIANCE_<KEY> variables and command-line options, and the
limits built from them being the ones enforced."""

import json

import pytest

from chat_appliance.app import close_app, create_app
from chat_appliance.db.backends import backend_for
from chat_appliance.config import ConfigError, database_url_for, environment_overrides, load_config

from ..support.helpers import FAST_HASH, Org, err, ok, register


@pytest.fixture
def configured_org(tmp_path, database_templates):
    """make(config_json) -> the example organization on an app configured as `serve` does:
    load_config on an instance folder holding this config.json (and no environment)."""

    apps = []

    def make(config_json):
        (tmp_path / "config.json").write_text(json.dumps(config_json))
        template = database_templates["org"]
        backend_for(template).clone_database(template, database_url_for(tmp_path))
        config = load_config(tmp_path, overrides={"PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False},
                             environ={})
        apps.append(create_app(config))
        return Org(apps[-1].test_client())

    yield make
    for app in apps:
        close_app(app)


def test_stream_name_limit_from_config_json_is_enforced(configured_org):
    """Does MAX_STREAM_NAME_LENGTH from config.json both appear in /register and bound the names
    the server accepts, on creation and on rename?"""
    org = configured_org({"MAX_STREAM_NAME_LENGTH": 10})
    hamlet = org.client(org.hamlet)
    assert register(hamlet, fetch_event_types=["realm"])["max_stream_name_length"] == 10
    err(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "x" * 11}]), 400, "BAD_REQUEST",
        "Channel name too long (limit: 10 characters).")
    ok(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "y" * 10}]))
    err(org.client(org.admin).patch(f"streams/{org.denmark.id}", new_name="z" * 11), 400, "BAD_REQUEST",
        "Channel name too long (limit: 10 characters).")


def test_topic_and_message_limits_from_config_json_are_enforced(configured_org):
    """Do MAX_TOPIC_LENGTH and MAX_MESSAGE_LENGTH from config.json bound what POST /messages takes?"""
    org = configured_org({"MAX_TOPIC_LENGTH": 5, "MAX_MESSAGE_LENGTH": 20})
    hamlet = org.client(org.hamlet)
    err(hamlet.post("messages", type="stream", to="Denmark", topic="sixsix", content="hi"), 400, "BAD_REQUEST",
        "Topic too long (limit: 5 characters)")
    err(hamlet.post("messages", type="stream", to="Denmark", topic="five", content="x" * 21), 400, "BAD_REQUEST",
        "Message too long (limit: 20 characters)")
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="fivee", content="x" * 20))


def test_environment_values_are_json_unless_the_key_takes_a_string():
    """Are CHAT_APPLIANCE_<KEY> values parsed as JSON (false, 25, lists), string keys taken as
    written, unknown variables ignored, and CHAT_APPLIANCE_INSTANCE left to the instance folder?"""
    got = environment_overrides({
        "CHAT_APPLIANCE_LOG_REQUESTS": "false",
        "CHAT_APPLIANCE_MAX_TOPIC_LENGTH": "25",
        "CHAT_APPLIANCE_TRUSTED_PROXIES": '["10.0.0.1", "10.0.0.2"]',
        "CHAT_APPLIANCE_ZULIP_SERVICES_URL": "https://push.example.net",
        "CHAT_APPLIANCE_DATABASE_URL": "postgresql://u@h/db",
        "CHAT_APPLIANCE_PASSWORD_HASH_METHOD": "pbkdf2:sha256",
        "CHAT_APPLIANCE_INSTANCE": "/somewhere",
        "CHAT_APPLIANCE_NO_SUCH_KEY": "1",
    })
    assert got == {"LOG_REQUESTS": False, "MAX_TOPIC_LENGTH": 25, "TRUSTED_PROXIES": ["10.0.0.1", "10.0.0.2"],
                   "ZULIP_SERVICES_URL": "https://push.example.net", "DATABASE_URL": "postgresql://u@h/db", "PASSWORD_HASH_METHOD": "pbkdf2:sha256"}


def test_a_value_that_is_not_json_names_its_variable():
    """Is a non-JSON value for a JSON key refused with the variable's name?"""
    with pytest.raises(ConfigError, match="CHAT_APPLIANCE_MAX_TOPIC_LENGTH"):
        environment_overrides({"CHAT_APPLIANCE_MAX_TOPIC_LENGTH": "twenty"})


def test_precedence_options_then_environment_then_config_json_then_defaults(tmp_path):
    """Does a command-line option beat the environment, the environment beat config.json, and
    config.json beat the default?"""
    (tmp_path / "config.json").write_text(json.dumps({"MAX_TOPIC_LENGTH": 30, "MAX_MESSAGE_LENGTH": 40,
                                                      "LOG_REQUESTS": True}))
    environ = {"CHAT_APPLIANCE_MAX_TOPIC_LENGTH": "25", "CHAT_APPLIANCE_LOG_REQUESTS": "true"}
    config = load_config(tmp_path, overrides={"LOG_REQUESTS": False}, environ=environ)
    assert config["LOG_REQUESTS"] is False
    assert config["MAX_TOPIC_LENGTH"] == 25
    assert config["MAX_MESSAGE_LENGTH"] == 40
    assert config["MAX_STREAM_NAME_LENGTH"] == 60
    assert config["DATABASE_URL"] == database_url_for(tmp_path)


def test_cli_reports_a_bad_environment_value_and_documents_the_rules(tmp_path):
    """Does the command line refuse a non-JSON CHAT_APPLIANCE_<KEY> with a clear error (exit 1),
    and does --help explain the variables and their precedence?"""
    import os
    import subprocess
    import sys

    env = dict(os.environ, CHAT_APPLIANCE_MAX_TOPIC_LENGTH="twenty")
    result = subprocess.run([sys.executable, "-m", "chat_appliance", "list-users", "--instance", str(tmp_path)],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 1
    assert "error: $CHAT_APPLIANCE_MAX_TOPIC_LENGTH is not JSON" in result.stderr
    usage = subprocess.run([sys.executable, "-m", "chat_appliance", "--help"], capture_output=True, text=True,
                           timeout=60).stdout
    assert "CHAT_APPLIANCE_<KEY>" in usage and "config.json" in usage and "DATABASE_URL" in usage
