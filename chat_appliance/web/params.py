"""Typed request parameters, declared once per view.

A view lists its parameters in the `endpoint` decorator; each `Param` names a
parser, a default, aliases (`subject` for `topic`) and whether the value arrives
JSON-encoded. Real clients JSON-encode every non-string value (the zulip library
calls json.dumps on ints, bools, lists and dicts) and send strings raw, so the
parsers (lib/validators.py) accept exactly that. Parameters the view does not declare are
ignored and reported in `ignored_parameters_unsupported` (Zulip feature level 167);
the zulip library adds `dont_block` to every retried request, so this must never
be an error.
"""

import functools

from flask import request
from werkzeug.routing import IntegerConverter, ValidationError

from chat_appliance.lib.errors import JsonableError, MissingArgumentError, ParamError
from chat_appliance.lib.validators import check_no_nul, check_string
from chat_appliance.web.auth import authenticate_request, authenticate_request_cached
from chat_appliance.web.rate_limit import check_api_request
from chat_appliance.web.response import json_success

REQUIRED = object()


class BoundedIntConverter(IntegerConverter):
    """The `int` URL converter, bounded in length: an id of any size up to MAX_ID_DIGITS reaches
    its view, which answers its own "no such ..." error for it (the database layer keeps such
    numbers from overflowing); a longer one matches no route (404) without being converted."""

    MAX_ID_DIGITS = 100

    def to_python(self, value):
        if len(value) > self.MAX_ID_DIGITS:
            raise ValidationError()
        return super().to_python(value)


# --- declaration -----------------------------------------------------------------------


class Param:
    """One declared parameter: parser, default, aliases."""

    def __init__(self, parser=check_string, default=REQUIRED, aliases=(), checks_nul=False):
        self.parser = parser
        self.default = default
        self.aliases = tuple(aliases)
        # True when the view refuses NUL characters itself, with texts of its own (drafts).
        self.checks_nul = checks_nul

    def extract(self, name, values):
        """Return (value, names seen) from the request's merged values."""
        for key in (name, *self.aliases):
            if key in values:
                raw = values[key]
                if "\x00" in raw:
                    raise ParamError(f"{key} contains NULL (0x00) characters")
                value = self.parser(key, raw)
                if not self.checks_nul:
                    check_no_nul(key, value)
                return value, {key}
        if self.default is REQUIRED:
            raise MissingArgumentError(name)
        return self.default, set()


def request_values():
    """Query string and form body merged; the body wins (the zulip library sends bodies for
    POST, PATCH, PUT and DELETE alike)."""
    # (No query string, as in most requests: no parser for it either.)
    values = dict(request.args.items()) if request.environ.get("QUERY_STRING") else {}
    # A request without a body (most GETs) has no form to parse: werkzeug's form parsing set-up
    # was a sixth of a trivial request's time. (No Content-Length at all, the usual GET, is
    # told from the environ, without werkzeug's parse of the header.)
    environ = request.environ
    length = environ.get("CONTENT_LENGTH")
    if (length and length != "0" and request.content_length) or "HTTP_TRANSFER_ENCODING" in environ:
        values.update(request.form.items())
    return values


def parse_params(specs):
    """Parse every declared parameter; return (kwargs, ignored parameter names)."""
    return parse_values(specs, request_values())


def parse_values(specs, values):
    """parse_params on already merged values (the event loop's native handlers have no Flask request)."""
    kwargs, used = {}, set()
    for name, spec in specs.items():
        kwargs[name], seen = spec.extract(name, values)
        used |= seen
    return kwargs, set(values) - used


def endpoint(*, auth=True, rate_limit=True, **specs):
    """Declare a view's parameters; authenticate; count the request against its rate limit;
    wrap its dict result in the envelope.

    The view is called as view(user, **path_args, **params) (without `user` when
    auth=False) and returns a dict of fields, or a ready Response. auth="cached" gives the
    view a lib.auth.CachedUser (id, realm_id, email) checked without the database.
    rate_limit="report" (the long poll) reports the budget without using it: Zulip clients
    poll /events without pause, and that alone must never exhaust their budget.
    """

    authenticate = authenticate_request_cached if auth == "cached" else authenticate_request

    def decorate(view):
        @functools.wraps(view)
        def wrapper(**path_args):
            if auth:
                try:
                    user = authenticate()
                except JsonableError:
                    # Failed credentials count against the address, like any unauthenticated request.
                    check_api_request(None)
                    raise
                check_api_request(user, consume=rate_limit is True)
                args = (user,)
            else:
                check_api_request(None, consume=rate_limit is True)
                args = ()
            kwargs, ignored = parse_params(specs)
            result = view(*args, **path_args, **kwargs)
            if result is None or isinstance(result, dict):
                return json_success(result, ignored=ignored)
            return result

        wrapper.param_specs = specs
        return wrapper

    return decorate
