"""Derive tests/support/data/openapi-shapes.json from Zulip's OpenAPI description (../shared/spec).

The tests validate every response body against Zulip's documented shapes (tests/support/openapi.py). The
description itself stays outside the repository; what the tests need of it is its structure only:
per operation its parameters, request body and response schemas, and the shared components they
refer to. This script keeps exactly that (types, properties, required lists, enums, references,
bounds) and drops every word written for people (descriptions, summaries, examples, defaults,
titles, x-* extensions), so that a plain clone can run the suite.

    python scripts/make_schemas.py            # rewrite tests/support/data/openapi-shapes.json
    python scripts/make_schemas.py --check    # exit 1 when the committed file is out of date

A keyword this script does not know fails it: a new kind of constraint in the description must be
looked at (kept or dropped on purpose), not silently lost.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "spec" / "zulip-openapi.yaml"
TARGET = ROOT / "tests" / "support" / "data" / "openapi-shapes.json"

METHODS = ("get", "post", "put", "patch", "delete")
# JSON Schema (OpenAPI 3.0 dialect) keywords that constrain a value: kept.
SCHEMA_KEYWORDS = {
    "type", "format", "enum", "nullable", "required", "$ref", "pattern", "uniqueItems",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
}
# Keywords whose value is a schema or a list of schemas.
SCHEMA_CHILDREN = {"items", "not", "additionalProperties"}
SCHEMA_LISTS = {"oneOf", "anyOf", "allOf"}
# Words for people, or hints for documentation tools: dropped. `deprecated` and `default`
# constrain nothing a validator checks.
PROSE = {"description", "summary", "example", "examples", "title", "default", "deprecated", "tags"}


def is_dropped(key):
    return key in PROSE or key.startswith("x-")


def schema(value, where):
    """The schema with its constraints only."""
    if not isinstance(value, dict):
        return value  # `additionalProperties: false`
    result = {}
    for key, item in value.items():
        if key == "properties":
            result[key] = {name: schema(sub, f"{where}.{name}") for name, sub in item.items()}
        elif key in SCHEMA_CHILDREN:
            result[key] = schema(item, f"{where}/{key}")
        elif key in SCHEMA_LISTS:
            result[key] = [schema(sub, f"{where}/{key}[{i}]") for i, sub in enumerate(item)]
        elif key in SCHEMA_KEYWORDS:
            result[key] = item
        elif not is_dropped(key):
            raise SystemExit(f"unknown schema keyword {key!r} at {where}: keep or drop it in {__file__}")
    return result


def media(value, where):
    result = {"schema": schema(value.get("schema", {}), where)}
    if "encoding" in value:
        result["encoding"] = {name: {k: v for k, v in enc.items() if k in ("contentType", "style", "explode")}
                              for name, enc in value["encoding"].items()}
    return result


def content(value, where):
    return {kind: media(item, f"{where}[{kind}]") for kind, item in value.items()}


def parameter(value, where):
    if "$ref" in value:
        return {"$ref": value["$ref"]}
    result = {k: value[k] for k in ("name", "in", "required", "style", "explode") if k in value}
    if "schema" in value:
        result["schema"] = schema(value["schema"], where)
    if "content" in value:
        result["content"] = content(value["content"], where)
    return result


def request_body(value, where):
    if "$ref" in value:
        return {"$ref": value["$ref"]}
    return {"required": value.get("required", False), "content": content(value.get("content", {}), where)}


def response(value, where):
    if "$ref" in value:
        return {"$ref": value["$ref"]}
    return {"content": content(value.get("content", {}), where)}


def operation(value, where):
    result = {"operationId": value.get("operationId")}
    if "parameters" in value:
        result["parameters"] = [parameter(p, where) for p in value["parameters"]]
    if "requestBody" in value:
        result["requestBody"] = request_body(value["requestBody"], where)
    result["responses"] = {str(code): response(r, f"{where} {code}") for code, r in value["responses"].items()}
    return result


def shapes(spec):
    """The structural part of a parsed OpenAPI description."""
    components = spec["components"]
    return {
        "source": {"file": "zulip-openapi.yaml", "openapi": spec["openapi"],
                   "version": spec.get("info", {}).get("version")},
        "paths": {path: {method: operation(op, f"{method.upper()} {path}")
                         for method, op in item.items() if method in METHODS}
                  for path, item in spec["paths"].items()},
        "components": {
            "schemas": {name: schema(s, name) for name, s in components.get("schemas", {}).items()},
            "parameters": {name: parameter(p, name) for name, p in components.get("parameters", {}).items()},
            "requestBodies": {name: request_body(b, name) for name, b in components.get("requestBodies", {}).items()},
            "responses": {name: response(r, name) for name, r in components.get("responses", {}).items()},
        },
    }


def render(source=SOURCE):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    spec = yaml.load(source.read_text(encoding="utf-8"), Loader=loader)
    return json.dumps(shapes(spec), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report whether the committed file is current")
    args = parser.parse_args(argv)
    if not SOURCE.exists():
        sys.exit(f"{SOURCE} is missing: check out ../shared beside the project")
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            sys.exit(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/make_schemas.py")
        return
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(text) // 1024} KiB)")


if __name__ == "__main__":
    main()
