"""HTTP Basic authentication with the account's email and API key (flask-httpauth)."""

from flask import g
from flask_httpauth import HTTPBasicAuth

from ..models import UserProfile
from .errors import InvalidAPIKeyError, UnauthorizedError, UserDeactivatedError
from .passwords import api_key_matches

basic_auth = HTTPBasicAuth(realm="zulip")


@basic_auth.verify_password
def verify_api_key(email, api_key):
    """Find the account by email (API or real address) and compare keys in constant time."""
    if not email and not api_key:
        raise UnauthorizedError()
    user = UserProfile.get_by_login_email(email) if email else None
    if user is None or not api_key or not api_key_matches(user.api_key, api_key):
        raise InvalidAPIKeyError()
    if not user.is_active:
        raise UserDeactivatedError()
    return user


def authenticate_request():
    """The authenticated user of this request; raises a 401 error otherwise."""
    auth = basic_auth.get_auth()
    user = basic_auth.authenticate(auth, basic_auth.get_auth_password(auth))
    g.user = user
    return user
