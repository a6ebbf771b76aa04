"""End to end: a real `serve` signing people in against Debian's slapd, and `chat-appliance
sync-ldap-users` run beside it while it serves."""

import json
import os
import subprocess
import sys

import pytest
import requests

from ..support import pg
from ..support.helpers import wait_for
from ..support.ldap_server import LdapServer
from ..support.serve_process import ServeProcess


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    """slapd with the instance's owner (uid owner, so owner@localhost), Ada and Bob."""
    server = LdapServer(tmp_path_factory.mktemp("slapd"))
    server.add_person("owner", "owner ldap pw", "Owner")
    server.add_person("ada", "ada pw", "Ada Lovelace")
    server.add_person("bob", "bob pw", "Bob")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory, directory):
    """A serve whose config.json turns LDAP on beside local passwords, deactivating people LDAP
    drops."""
    instance = tmp_path_factory.mktemp("ldap-serve") / "instance"
    instance.mkdir()
    (instance / "config.json").write_text(json.dumps(directory.config(
        LDAP_APPEND_DOMAIN="localhost", LDAP_DEACTIVATE_NON_MATCHING_USERS=True)))
    server = ServeProcess(instance)
    server.instance = instance
    yield server
    server.stop()


def fetch_key(site, username, password):
    return requests.post(f"{site.url}/api/v1/fetch_api_key", data={"username": username, "password": password},
                         timeout=30)


def sync(site):
    """`chat-appliance sync-ldap-users --instance DIR`, as an operator runs it; its output."""
    env = dict(os.environ)
    if pg.ENABLED:
        env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(site.instance)
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "sync-ldap-users", "--instance", str(site.instance)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_first_login_then_sync_deactivates_and_renames(site, directory):
    """Do Ada and Bob get accounts at their first sign-in by uid; and once Bob leaves LDAP and
    Ada's cn changes, does sync-ldap-users, run beside the running server, deactivate Bob (his
    key answers 401 within seconds, his uid no longer signs in), rename Ada, and say so?"""
    ada = fetch_key(site, "ada", "ada pw").json()
    bob = fetch_key(site, "bob@localhost", "bob pw").json()
    assert ada["result"] == bob["result"] == "success", (ada, bob)
    bob_auth = (bob["email"], bob["api_key"])
    assert requests.get(f"{site.url}/api/v1/users/me", auth=bob_auth, timeout=30).status_code == 200

    directory.delete_person("bob")
    directory.rename_person("ada", "Ada King")
    output = sync(site)
    assert "2 people in LDAP" in output and "1 renamed, 1 deactivated" in output, output

    assert wait_for(lambda: requests.get(f"{site.url}/api/v1/users/me", auth=bob_auth, timeout=30).status_code
                    == 401, seconds=10)
    refused = fetch_key(site, "bob", "bob pw")
    assert refused.status_code == 401 and refused.json()["code"] == "AUTHENTICATION_FAILED"
    me = requests.get(f"{site.url}/api/v1/users/me", auth=(ada["email"], ada["api_key"]), timeout=30).json()
    assert me["full_name"] == "Ada King"


def test_sync_refuses_to_deactivate_everyone(site, directory):
    """Does the sync refuse, changing nothing, when the directory would leave no active person
    (a search gone wrong), as Zulip's does?"""
    directory.delete_person("owner")
    directory.delete_person("ada")
    env = dict(os.environ)
    if pg.ENABLED:
        env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(site.instance)
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "sync-ldap-users", "--instance", str(site.instance)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1 and "nothing was changed" in done.stderr, (done.stdout, done.stderr)
    assert requests.get(f"{site.url}/api/v1/users/me", auth=(site.email, site.api_key), timeout=30).status_code == 200
