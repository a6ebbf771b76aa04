"""Validation of response bodies against Zulip's OpenAPI description in ../shared/spec.

The description is read where it is, never copied. Where it has no schema for an endpoint
(or the file is absent), validation is skipped for that response; everything else must match.
"""

import functools
import pickle
import re
from pathlib import Path

import yaml
from openapi_schema_validator import OAS30Validator

SPEC_PATH = Path(__file__).resolve().parents[2] / "shared" / "spec" / "zulip-openapi.yaml"
CACHE_PATH = Path(__file__).resolve().parent / ".openapi-cache.pickle"


@functools.lru_cache(maxsize=1)
def load_spec():
    """The parsed description (cached as a pickle beside the tests: YAML parsing takes seconds)."""
    if not SPEC_PATH.exists():
        return None
    stamp = SPEC_PATH.stat().st_mtime
    if CACHE_PATH.exists():
        try:
            cached_stamp, spec = pickle.loads(CACHE_PATH.read_bytes())
            if cached_stamp == stamp:
                return spec
        except Exception:
            pass
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    spec = yaml.load(SPEC_PATH.read_text(), Loader=loader)
    CACHE_PATH.write_bytes(pickle.dumps((stamp, spec)))
    return spec


@functools.lru_cache(maxsize=1)
def path_patterns():
    """(regex, template) pairs, literal paths before templated ones (/users/me before /users/{id})."""
    spec = load_spec()
    templates = sorted(spec["paths"], key=lambda t: (t.count("{"), -len(t)))
    return [(re.compile("^" + re.sub(r"\{[^}]+\}", r"[^/]+", t) + "$"), t) for t in templates]


def response_schema(method, path, status):
    """The JSON schema for this response, or None."""
    spec = load_spec()
    if spec is None:
        return None
    api_path = path[len("/api/v1"):] if path.startswith("/api/v1") else path
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
