"""The error hierarchy. Views and actions raise these; one handler in app.py renders them.

Codes, messages and HTTP statuses follow Zulip's, because clients compare them
(zulip-terminal matches msg text, the zulip library reads `code`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict


class JsonableError(Exception):
    """An error with a Zulip error code, an HTTP status and optional extra fields."""

    code = "BAD_REQUEST"
    http_status = 400

    def __init__(self, msg, *, code=None, http_status=None, **data):
        super().__init__(msg)
        self.msg = msg
        if code is not None:
            self.code = code
        if http_status is not None:
            self.http_status = http_status
        self.data = data

    def to_dict(self) -> JSONDict:
        """The error envelope, with the extra fields Zulip adds for this code."""
        return {"result": "error", "msg": self.msg, "code": self.code, **self.data}


class MissingArgumentError(JsonableError):
    """A required parameter was not sent."""

    code = "REQUEST_VARIABLE_MISSING"

    def __init__(self, var_name):
        super().__init__(f"Missing '{var_name}' argument", var_name=var_name)


class UnauthorizedError(JsonableError):
    """No credentials were sent (HTTP 401 with a Basic challenge)."""

    code = "UNAUTHORIZED"
    http_status = 401

    def __init__(self, msg="Not logged in: API authentication or user session required"):
        super().__init__(msg)


class InvalidAPIKeyError(JsonableError):
    """Credentials were sent but do not match an account."""

    code = "INVALID_API_KEY"
    http_status = 401

    def __init__(self):
        super().__init__("Invalid API key")


class UserDeactivatedError(JsonableError):
    """The account exists but is deactivated (401 since Zulip feature level 76)."""

    code = "USER_DEACTIVATED"
    http_status = 401

    def __init__(self):
        super().__init__("Account is deactivated")


class OrganizationAdministratorRequiredError(JsonableError):
    """An administrator-only endpoint called by someone else."""

    code = "UNAUTHORIZED_PRINCIPAL"

    def __init__(self):
        super().__init__("Must be an organization administrator")


class OrganizationOwnerRequiredError(JsonableError):
    """An owner-only change requested by someone else."""

    code = "UNAUTHORIZED_PRINCIPAL"

    def __init__(self):
        super().__init__("Must be an organization owner")


class ResourceNotFoundError(JsonableError):
    """Zulip's NOT_FOUND (404)."""

    code = "NOT_FOUND"
    http_status = 404


class StreamDoesNotExistError(JsonableError):
    """A channel named by the client does not exist (or is invisible to it)."""

    code = "STREAM_DOES_NOT_EXIST"

    def __init__(self, name):
        super().__init__(f"Channel '{name}' does not exist", stream=name)


class StreamIdDoesNotExistError(JsonableError):
    """A channel id named by the client does not exist (or is invisible to it)."""

    code = "STREAM_DOES_NOT_EXIST"

    def __init__(self, stream_id):
        super().__init__(f"Channel with ID '{stream_id}' does not exist", stream_id=stream_id)


class RateLimitedError(JsonableError):
    """Too many requests; clients wait `retry-after` seconds."""

    code = "RATE_LIMIT_HIT"
    http_status = 429

    def __init__(self, retry_after):
        super().__init__("API usage exceeded rate limit", **{"retry-after": retry_after})
