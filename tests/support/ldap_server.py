"""Debian's slapd for the LDAP tests: a child process of the tests, on a loopback port, with a
configuration and a database of its own in a temporary folder (nothing of the system's slapd
is used or touched)."""

import shutil
import subprocess
import time
from pathlib import Path

import ldap3
import pytest

from .serve_process import free_port

SLAPD = next((path for path in ("/usr/sbin/slapd", shutil.which("slapd") or "") if path and Path(path).exists()), None)
SUFFIX = "dc=example,dc=com"
PEOPLE = f"ou=People,{SUFFIX}"
ADMIN_DN = f"cn=admin,{SUFFIX}"
ADMIN_PASSWORD = "admin secret"
MODULES = "/usr/lib/ldap"
SCHEMAS = "/etc/ldap/schema"

CONFIG = """\
include {schemas}/core.schema
include {schemas}/cosine.schema
include {schemas}/inetorgperson.schema
include {schemas}/nis.schema
pidfile {folder}/slapd.pid
modulepath {modules}
moduleload back_mdb
database mdb
suffix "{suffix}"
rootdn "{admin}"
rootpw "{password}"
directory {folder}/data
maxsize 10485760
access to attrs=userPassword by anonymous auth by * none
access to * by * read
"""


class LdapServer:
    """slapd on 127.0.0.1:<free port> with ou=People under dc=example,dc=com; `add_person` and
    `delete_person` change the directory while the tests run (as the root DN)."""

    def __init__(self, folder):
        if SLAPD is None:
            pytest.skip("slapd is missing (.ci/run installs Debian's slapd and ldap-utils)")
        self.folder = Path(folder)
        (self.folder / "data").mkdir(parents=True)
        (self.folder / "slapd.conf").write_text(CONFIG.format(schemas=SCHEMAS, folder=self.folder, modules=MODULES,
                                                              suffix=SUFFIX, admin=ADMIN_DN, password=ADMIN_PASSWORD))
        self.port = free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        # -d 0: stay in the foreground (a child the tests own and stop), logging nothing.
        self.process = subprocess.Popen([SLAPD, "-f", str(self.folder / "slapd.conf"), "-h", self.uri, "-d", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            self._wait_ready()
            with self.admin() as connection:
                connection.add(SUFFIX, ["dcObject", "organization"], {"o": "Example", "dc": "example"})
                connection.add(PEOPLE, ["organizationalUnit"], {"ou": "People"})
        except BaseException:
            self.stop()  # never leave a slapd behind a fixture that failed to start
            raise

    def _wait_ready(self, seconds=15):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("slapd exited: " + self.process.stdout.read().decode(errors="replace"))
            try:
                self.admin().unbind()
                return
            except ldap3.core.exceptions.LDAPException:
                time.sleep(0.1)
        raise RuntimeError("slapd did not answer")

    def admin(self):
        connection = ldap3.Connection(ldap3.Server(self.uri), ADMIN_DN, ADMIN_PASSWORD, raise_exceptions=True)
        connection.bind()
        return connection

    def add_person(self, uid, password, cn, mail=None, sn="Person"):
        attributes = {"uid": uid, "cn": cn, "sn": sn, "userPassword": password}
        if mail:
            attributes["mail"] = mail
        with self.admin() as connection:
            connection.add(f"uid={uid},{PEOPLE}", ["inetOrgPerson"], attributes)

    def rename_person(self, uid, cn):
        with self.admin() as connection:
            connection.modify(f"uid={uid},{PEOPLE}", {"cn": [(ldap3.MODIFY_REPLACE, [cn])]})

    def delete_person(self, uid):
        with self.admin() as connection:
            connection.delete(f"uid={uid},{PEOPLE}")

    def config(self, **extra):
        """The chat-appliance settings of this directory (LDAP the second backend by default)."""
        return {"AUTHENTICATION_BACKENDS": ["zproject.backends.EmailAuthBackend",
                                            "zproject.backends.ZulipLDAPAuthBackend"],
                "AUTH_LDAP_SERVER_URI": self.uri, "AUTH_LDAP_BIND_DN": ADMIN_DN,
                "AUTH_LDAP_BIND_PASSWORD": ADMIN_PASSWORD,
                "AUTH_LDAP_USER_SEARCH": [PEOPLE, "SCOPE_SUBTREE", "(uid=%(user)s)"],
                "AUTH_LDAP_USER_ATTR_MAP": {"full_name": "cn"}, **extra}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
