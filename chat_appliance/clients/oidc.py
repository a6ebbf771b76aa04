"""The OpenID Connect provider, as a client of it: discovery, the authorization URL (PKCE and a
nonce), the code's redemption and the ID token's checks, then the person's email and name.

Authlib does the OAuth 2.0 exchange (PKCE S256, client authentication) and joserfc, its JOSE
library, checks the ID token's signature against the provider's published keys. Plain HTTP and
loopback issuers are accepted, as on Zulip: a provider on the same private network is common.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from chat_appliance.lib.auth_backends import OidcIdp

log = logging.getLogger(__name__)

SCOPE = "openid email profile"
TIMEOUT_SECONDS = 10
# The signature algorithms accepted on an ID token: the asymmetric ones providers use (HS256,
# keyed with the client secret, is refused: Keycloak, Authentik, Google and GitLab sign with keys).
ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


class OidcError(Exception):
    """The provider refused, could not be reached, or answered something that does not check out."""


@dataclass(frozen=True)
class FlowStart:
    """The authorization URL and the secrets the callback needs to finish the same flow."""

    url: str
    state: str
    nonce: str
    code_verifier: str


@dataclass(frozen=True)
class OidcIdentity:
    email: str
    full_name: str | None


def discovery(idp: OidcIdp) -> dict[str, Any]:
    """The provider's /.well-known/openid-configuration; OidcError when it cannot be read."""
    url = idp.issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=TIMEOUT_SECONDS)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise OidcError(f"cannot read {url}: {error}") from None
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(document.get(key), str):
            raise OidcError(f"{url} has no {key}")
    return document


def session(idp: OidcIdp, redirect_uri: str) -> OAuth2Session:
    return OAuth2Session(idp.client_id, idp.secret, scope=SCOPE, redirect_uri=redirect_uri,
                         code_challenge_method="S256", timeout=TIMEOUT_SECONDS)


def start_flow(idp: OidcIdp, redirect_uri: str) -> FlowStart:
    """Where to send the browser: the authorization endpoint with response_type=code, the scope,
    a random state and nonce, and a PKCE challenge (S256)."""
    endpoint = discovery(idp)["authorization_endpoint"]
    state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    url, _state = session(idp, redirect_uri).create_authorization_url(endpoint, state=state, nonce=nonce,
                                                                       code_verifier=verifier)
    return FlowStart(url=url, state=state, nonce=nonce, code_verifier=verifier)


def finish_flow(idp: OidcIdp, redirect_uri: str, code: str, nonce: str, code_verifier: str) -> OidcIdentity:
    """Redeem `code` (once: the provider refuses it a second time), check the ID token (signature,
    issuer, audience, expiry, nonce), and return the email and name from it or, when it lacks
    them, from the userinfo endpoint. Every failure is an OidcError."""
    config = discovery(idp)
    client = session(idp, redirect_uri)
    try:
        token = client.fetch_token(config["token_endpoint"], code=code, code_verifier=code_verifier,
                                   grant_type="authorization_code")
    except Exception as error:  # Authlib raises OAuthError, requests its own, a bad body ValueError
        raise OidcError(f"the provider refused the code: {error}") from None
    claims = id_token_claims(config, idp, token.get("id_token"), nonce)
    if not claims.get("email") or not claims.get("name"):
        claims = {**userinfo(config, client, claims["sub"]), **{k: v for k, v in claims.items() if v}}
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise OidcError("the provider gave no email address")
    if claims.get("email_verified") is False:
        raise OidcError("the provider says the email address is not verified")
    name = claims.get("name")
    if not isinstance(name, str) or not name.strip():
        parts = [claims.get("given_name"), claims.get("family_name")]
        name = " ".join(part for part in parts if isinstance(part, str) and part) or None
    return OidcIdentity(email=email.strip(), full_name=name)


def id_token_claims(config: dict[str, Any], idp: OidcIdp, id_token: Any, nonce: str) -> dict[str, Any]:
    if not isinstance(id_token, str):
        raise OidcError("the provider sent no ID token")
    try:
        keys = requests.get(config["jwks_uri"], timeout=TIMEOUT_SECONDS)
        keys.raise_for_status()
        key_set = KeySet.import_key_set(keys.json())
        decoded = jwt.decode(id_token, key_set, algorithms=ID_TOKEN_ALGORITHMS)
        registry = jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": config.get("issuer") or idp.issuer},
            aud={"essential": True, "value": idp.client_id},
            sub={"essential": True},
            exp={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        registry.validate(decoded.claims)
    except (requests.RequestException, ValueError, JoseError) as error:
        raise OidcError(f"the ID token does not check out: {error}") from None
    return dict(decoded.claims)


def userinfo(config: dict[str, Any], client: OAuth2Session, subject: str) -> dict[str, Any]:
    """The userinfo endpoint's claims, for the same subject as the ID token (OIDC Core 5.3.2)."""
    endpoint = config.get("userinfo_endpoint")
    if not isinstance(endpoint, str):
        return {}
    try:
        response = client.get(endpoint, timeout=TIMEOUT_SECONDS)
        response.raise_for_status()
        claims = response.json()
    except (requests.RequestException, ValueError) as error:
        raise OidcError(f"cannot read the userinfo: {error}") from None
    if not isinstance(claims, dict) or claims.get("sub") != subject:
        raise OidcError("the userinfo is not about the ID token's subject")
    return claims
