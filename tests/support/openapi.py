"""Validation of response bodies against the shapes of Zulip's OpenAPI description.

The shapes (schemas, parameters, no prose) live in tests/support/data/openapi-shapes.json, derived from
../shared/spec/zulip-openapi.yaml by scripts/make_schemas.py, so that a plain clone runs the suite;
tests/structure/test_error_shape_check.py checks the file is current when ../shared is there. Where the description has no
schema for an endpoint, validation is skipped for that response; everything else must match. A
missing shapes file is an error, not a pass: a test run without it would check no shape at all.
"""

import functools
import json
import re
from pathlib import Path

from openapi_schema_validator import OAS30Validator

SPEC_PATH = Path(__file__).resolve().parent / "data" / "openapi-shapes.json"


@functools.lru_cache(maxsize=1)
def load_spec():
    """The description's shapes, laid out as the description is (paths, components)."""
    if not SPEC_PATH.exists():
        raise FileNotFoundError(f"The OpenAPI shapes are missing: {SPEC_PATH} (tests validate every body "
                                "against them; scripts/make_schemas.py makes them from ../shared/spec)")
    return json.loads(SPEC_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def path_patterns():
    """(regex, template) pairs, literal paths before templated ones (/users/me before /users/{id})."""
    spec = load_spec()
    templates = sorted(spec["paths"], key=lambda t: (t.count("{"), -len(t)))
    return [(re.compile("^" + re.sub(r"\{[^}]+\}", r"[^/]+", t) + "$"), t) for t in templates]


def response_schema(method, path, status):
    """The JSON schema for this response, or None."""
    spec = load_spec()
    # The web client's /json/... is the same API as /api/v1/...
    prefix = next((p for p in ("/api/v1", "/json") if path.startswith(p + "/")), "")
    api_path = path[len(prefix):]
    for pattern, template in path_patterns():
        if pattern.match(api_path):
            operation = spec["paths"][template].get(method.lower())
            if operation is None:
                continue
            response = operation.get("responses", {}).get(str(status))
            if response is None:
                return None
            while "$ref" in response:
                response = spec["components"]["responses"][response["$ref"].split("/")[-1]]
            return response.get("content", {}).get("application/json", {}).get("schema")
    return None


def without_kept_legacy_fields(value):
    """The body without the legacy fields we send on purpose though this description (feature
    level 420) dropped them: `user` inside reactions, which zulip-terminal 0.7.0 reads
    (CLIENTS.md 5.3). Everything else is validated as is."""
    if isinstance(value, list):
        return [without_kept_legacy_fields(item) for item in value]
    if not isinstance(value, dict):
        return value
    result = {}
    for key, item in value.items():
        if key == "reactions" and isinstance(item, list):
            item = [{k: v for k, v in r.items() if k != "user"} if isinstance(r, dict) else r for r in item]
        result[key] = without_kept_legacy_fields(item)
    return result


def validate_response(method, path, status, body):
    """Raise jsonschema.ValidationError if the body does not match the description's schema."""
    schema = response_schema(method, path, status)
    if schema is None:
        return False
    body = without_kept_legacy_fields(body)
    rooted = dict(schema)
    rooted["components"] = load_spec()["components"]
    OAS30Validator(rooted).validate(body)
    return True


# Error shapes Zulip documents for every endpoint (its "REST error handling" page), by code: a
# response with one of these codes may carry their extra fields whatever the operation lists.
COMMON_ERROR_SCHEMAS = {
    "REQUEST_VARIABLE_MISSING": ["MissingArgumentError"],
    "INVALID_API_KEY": ["InvalidApiKeyError"],
    "USER_DEACTIVATED": ["UserDeactivatedError"],
    "REALM_DEACTIVATED": ["RealmDeactivatedError"],
    "RATE_LIMIT_HIT": ["RateLimitedError"],
    "BAD_EVENT_QUEUE_ID": ["BadEventQueueIdError"],
    "STREAM_DOES_NOT_EXIST": ["NonExistingChannelNameError", "NonExistingChannelIdError"],
    "BAD_REQUEST": ["IncompatibleParametersError"],
}

# Real Zulip error fields this copy of the description does not list (checked in Zulip's
# zerver/lib/exceptions.py): UnauthorizedPrincipalError carries the principal it refused.
UNDOCUMENTED_ERROR_FIELDS = {
    "UNAUTHORIZED_PRINCIPAL": {"principal": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
}


def _coded_error_with(fields):
    """CodedError plus these extra properties."""
    return {"allOf": [{"$ref": "#/components/schemas/CodedErrorBase"},
                      {"type": "object", "additionalProperties": False,
                       "properties": {"result": {}, "msg": {}, "code": {}, **fields}}]}


def _alternatives(schema):
    """The branches of a (possibly nested) oneOf/anyOf. Zulip lists several errors of the same
    shape as oneOf branches, so one body matches many of them: any match counts."""
    spec = load_spec()
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].split("/")[-1]]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return [alt for branch in schema[key] for alt in _alternatives(branch)]
    return [schema]


def validate_error(method, path, status, body):
    """Raise AssertionError unless the error body matches one of: the operation's documented
    schema for this status (its oneOf branches taken as alternatives), the documented shape of
    the body's code (COMMON_ERROR_SCHEMAS), or, when the operation documents nothing for this
    status, the generic CodedError."""
    spec = load_spec()
    schemas = spec["components"]["schemas"]
    documented = response_schema(method, path, status)
    candidates = _alternatives(documented) if documented else [schemas["CodedError"]]
    candidates += [schemas[name] for name in COMMON_ERROR_SCHEMAS.get(body.get("code"), ())]
    if body.get("code") in UNDOCUMENTED_ERROR_FIELDS:
        candidates.append(_coded_error_with(UNDOCUMENTED_ERROR_FIELDS[body["code"]]))
    problems = []
    for candidate in candidates:
        rooted = dict(candidate, components=spec["components"])
        try:
            OAS30Validator(rooted).validate(body)
            return True
        except Exception as error:  # noqa: BLE001 - collected for the message below
            problems.append(getattr(error, "message", str(error)))
    raise AssertionError(f"{method} {path} {status}: error body {body} matches no documented shape: {problems}")
