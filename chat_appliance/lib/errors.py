"""The error hierarchy. Views and actions raise these; one handler in app.py renders them.

Codes, messages and HTTP statuses follow Zulip's, because clients compare them
(zulip-terminal matches msg text, the zulip library reads `code`). Every JsonableError subclass
is defined here and nowhere else (tests/structure/test_errors_defined_once.py checks), so that the
answers a client can get are found in one file, each class named by what went wrong.
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


# --- Parameters and requests ------------------------------------------------------------------


class ParamError(JsonableError):
    """A parameter of the wrong type or shape: BAD_REQUEST with Zulip's text."""


class BadNarrowError(JsonableError):
    """Zulip's BAD_NARROW."""

    code = "BAD_NARROW"

    def __init__(self, detail):
        super().__init__(f"Invalid narrow operator: {detail}")


# --- Sign-in and sessions ---------------------------------------------------------------------


class CsrfFailedError(JsonableError):
    """A state-changing /json request without the session's CSRF token (Zulip: 403 CSRF_FAILED)."""

    code = "CSRF_FAILED"
    http_status = 403

    def __init__(self, reason):
        super().__init__(f"CSRF error: {reason}")


class WebhookBotOnlyError(JsonableError):
    """An incoming webhook bot's key, whose home is URLs handed to other services, used on a
    route other than /api/v1/external/* (Zulip's answer: 400)."""

    def __init__(self):
        super().__init__("This API is not available to incoming webhook bots.")


class AuthenticationFailedError(JsonableError):
    """Zulip's answer to a wrong email or password (401)."""

    code = "AUTHENTICATION_FAILED"
    http_status = 401

    def __init__(self):
        super().__init__("Your username or password is incorrect")


class WrongPasswordError(JsonableError):
    """The old password does not match: the HTTP layer counts it as a failed login."""


class InvalidResetLinkError(JsonableError):
    """A reset token that is unknown, used, or too old."""

    def __init__(self) -> None:
        super().__init__("The password reset link has expired or has already been used.")


class InvalidEmailChangeLinkError(JsonableError):
    """An email change confirmation token that is unknown, used, or too old."""

    def __init__(self) -> None:
        super().__init__("The confirmation link has expired or has already been used.")


# --- Events -----------------------------------------------------------------------------------


class BadEventQueueIdError(JsonableError):
    """An unknown, expired or foreign queue. zulip-terminal 0.7.0 re-registers only when the
    message starts with exactly "Bad event queue id:" (lower-case id)."""

    code = "BAD_EVENT_QUEUE_ID"

    def __init__(self, queue_id):
        super().__init__(f"Bad event queue id: {queue_id}", queue_id=queue_id)


# --- Users and channels -----------------------------------------------------------------------


class CannotDeactivateLastUserError(JsonableError):
    """Zulip's refusal to deactivate the organization's only owner."""

    code = "CANNOT_DEACTIVATE_LAST_USER"

    def __init__(self):
        super().__init__("Cannot deactivate the only organization owner", entity="organization owner",
                         is_last_owner=True)


class UnauthorizedPrincipalError(JsonableError):
    """A principal the requester may not act for (or that does not exist): Zulip's 403."""

    code = "UNAUTHORIZED_PRINCIPAL"
    http_status = 403

    def __init__(self, principal):
        super().__init__(f"User not authorized to execute queries on behalf of '{principal}'",
                         principal=principal)


class ChannelAlreadyExistsError(JsonableError):
    """Zulip's 409 for a channel name in use."""

    code = "CHANNEL_ALREADY_EXISTS"
    http_status = 409

    def __init__(self, name):
        super().__init__(f"Channel '{name}' already exists")


# --- Invitations ------------------------------------------------------------------------------


class InvitationFailedError(JsonableError):
    """Zulip's INVITATION_FAILED: some addresses could not be invited."""

    code = "INVITATION_FAILED"

    def __init__(self, msg, errors, *, sent_invitations):
        super().__init__(msg, errors=[list(e) for e in errors], sent_invitations=sent_invitations,
                         license_limit_reached=False, daily_limit_reached=False)


class InvalidInvitationError(JsonableError):
    """An invitation key that cannot be used (unknown, used, revoked or expired)."""

    def __init__(self, msg="The invitation link has expired or been deactivated."):
        super().__init__(msg)


class EmailInvitationsUnavailableError(JsonableError):
    """Email invitations on a server that cannot send email."""

    def __init__(self):
        super().__init__("This server is not configured to send email, so it cannot send invitations by "
                         "email. Create an invitation link instead.")


# --- Push notifications -----------------------------------------------------------------------


class PushServiceNotConfiguredError(JsonableError):
    """This server has not registered with the service (or push is turned off)."""

    code = "PUSH_SERVICE_NOT_CONFIGURED"

    def __init__(self):
        super().__init__("Server is not configured to use push notification service.")


class PushServiceRetryLaterError(JsonableError):
    """No answer, or a 5xx: the service may work later (Zulip: a 502 to the app)."""

    code = "BAD_GATEWAY"
    http_status = 502

    def __init__(self, detail="Network error while connecting to Zulip push notification service.", *,
                 server_error=False):
        super().__init__("Network error while connecting to Zulip push notification service.")
        self.detail = detail
        # The service answered 5xx (rather than not at all): Zulip tells the two apart to the app.
        self.server_error = server_error


class PushServiceRefusedError(JsonableError):
    """The service answered 4xx: its message is passed on (an unknown token, bad credentials)."""

    def __init__(self, msg: str, service_code: str | None = None):
        super().__init__(msg)
        self.service_code = service_code


class NoActivePushDeviceError(JsonableError):
    """A test notification for someone with no registered device."""

    code = "NO_ACTIVE_PUSH_DEVICE"

    def __init__(self):
        super().__init__("No active registered push device")


class InvalidPushDeviceTokenError(JsonableError):
    """A device token this server (or the service) does not know."""

    code = "INVALID_PUSH_DEVICE_TOKEN"

    def __init__(self):
        super().__init__("Device not recognized")


class FailedToConnectBouncerError(JsonableError):
    """The service could not be reached for a test notification."""

    code = "FAILED_TO_CONNECT_BOUNCER"
    http_status = 502

    def __init__(self):
        super().__init__("Network error while connecting to Zulip push notification service.")


class InternalBouncerServerError(JsonableError):
    """The service answered 5xx to an end-to-end encrypted test notification."""

    code = "INTERNAL_SERVER_ERROR_ON_BOUNCER"
    http_status = 502

    def __init__(self):
        super().__init__("Internal server error on Zulip push notification service, retry later.")


class PushNotificationAdminActionRequiredError(JsonableError):
    """The service refused this server for something its operator must fix (credentials, the
    organizations not uploaded, the plan)."""

    code = "ADMIN_ACTION_REQUIRED"
    http_status = 403

    def __init__(self):
        super().__init__("Push notification configuration issue on server, contact the server administrator "
                         "or retry later.")
