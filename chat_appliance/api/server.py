"""Server-level endpoints that need no session: GET /server_settings, POST /fetch_api_key."""

from flask import Blueprint, current_app, request

from chat_appliance import __version__
from chat_appliance.models.realm import instance_realm
from chat_appliance.lib.push_credentials import configured as push_configured
from chat_appliance.lib.realm_icon import realm_icon_url_path
from chat_appliance.web.auth import authenticate_by_password
from chat_appliance.web.context import auth_settings
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("server", __name__)

# The feature level chat-api.md is written at. Real clients gate behaviour on it.
ZULIP_FEATURE_LEVEL = 482
# Clients parse the leading "major.minor"; the suffix names us.
ZULIP_VERSION = f"11.0-chat-appliance-{__version__}"
ZULIP_MERGE_BASE = ZULIP_VERSION


@bp.get("/server_settings")
@endpoint(auth=False)
def server_settings():
    """Never requires auth and ignores any credentials sent: the zulip library calls it with
    them from its constructor and asserts zulip_version is present."""
    realm = instance_realm()
    auth = auth_settings()
    return {
        "zulip_version": ZULIP_VERSION,
        "zulip_feature_level": ZULIP_FEATURE_LEVEL,
        "zulip_merge_base": ZULIP_MERGE_BASE,
        "push_notifications_enabled": push_configured(current_app.config) is not None,
        "is_incompatible": False,
        "email_auth_enabled": auth.email,
        "require_email_format_usernames": auth.require_email_format_usernames,
        "authentication_methods": auth.authentication_methods(),
        "external_authentication_methods": auth.external_authentication_methods(),
        "realm_uri": realm.url if realm else "",
        "realm_url": realm.url if realm else "",
        "realm_name": realm.name if realm else "",
        "realm_icon": request.host_url.rstrip("/") + realm_icon_url_path(realm) if realm else "",
        "realm_description": realm.description if realm else "",
        "realm_web_public_access_enabled": False,
    }


@bp.post("/fetch_api_key")
@endpoint(auth=False, username=Param(), password=Param())
def fetch_api_key(username, password):
    """Exchange an email and password for the account's API key (zulip-terminal's login);
    throttled per account (lib/auth.authenticate_by_password)."""
    user = authenticate_by_password(username, password)
    return {"api_key": user.api_key, "email": user.email, "user_id": user.id}
