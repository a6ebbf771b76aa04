"""The npm package oidc-provider on loopback (tests/support/oidc/provider.mjs), for the OpenID
Connect sign-in tests: a real provider with discovery, PKCE, signed ID tokens and one-time codes."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from .serve_process import free_port

FOLDER = Path(__file__).resolve().parent / "oidc"
CLIENT_ID = "chat-appliance"
SECRET = "a client secret for the tests"


class OidcProvider:
    """oidc-provider with a client allowed to redirect to `redirect_uris`, and `accounts`
    ({id: {"email", "name"}}); `sign_in_as` picks who the next login is."""

    def __init__(self, folder, redirect_uris, accounts):
        node = shutil.which("node")
        if node is None or not (FOLDER / "node_modules" / "oidc-provider").exists():
            pytest.skip("oidc-provider is not installed (.ci/run runs npm ci in tests/support/oidc)")
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        settings = Path(folder) / "oidc-settings.json"
        settings.write_text(json.dumps({"port": self.port, "client_id": CLIENT_ID, "secret": SECRET,
                                        "redirect_uris": redirect_uris, "accounts": accounts}))
        # Its warnings (an in-memory store, development keys: right for a test) go to a log file.
        self.log = Path(folder) / "oidc-provider.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([node, str(FOLDER / "provider.mjs"), str(settings)], cwd=FOLDER,
                                            stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("ready"):
            self.process.kill()
            raise RuntimeError("oidc-provider did not start: " + line + self.log.read_text())

    def sign_in_as(self, account):
        """The next login at the provider is `account`."""
        requests.post(f"{self.issuer}/test/next", json={"account": account}, timeout=10).raise_for_status()

    def refuse_next(self, error="access_denied"):
        """The next login ends in an error redirect (error=...)."""
        requests.post(f"{self.issuer}/test/next", json={"error": error}, timeout=10).raise_for_status()

    def idp_settings(self, name="testidp", auto_signup=True, **extra):
        """SOCIAL_AUTH_OIDC_ENABLED_IDPS for this provider."""
        return {name: {"oidc_url": self.issuer, "display_name": "Test IdP", "display_icon": None,
                       "client_id": CLIENT_ID, "secret": SECRET, "auto_signup": auto_signup, **extra}}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
