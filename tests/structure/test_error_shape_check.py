"""The error-shape check every `err` assertion runs (tests/support/openapi.validate_error)."""

import importlib.util

import pytest

from ..support import openapi
from ..support.openapi import validate_error
from ..support.shared import REPO_ROOT, shared_file


def test_missing_description_fails_loudly(monkeypatch, tmp_path):
    """Without the shapes file, does validation raise instead of calling every body valid?"""
    monkeypatch.setattr(openapi, "SPEC_PATH", tmp_path / "absent.json")
    openapi.load_spec.cache_clear()
    try:
        with pytest.raises(FileNotFoundError):
            openapi.validate_response("GET", "/api/v1/users", 200, {"result": "success"})
    finally:
        monkeypatch.undo()
        openapi.load_spec.cache_clear()


def test_generic_and_documented_error_shapes_pass():
    """Do a plain coded error, a missing-argument error with var_name, and an operation's
    documented extra field (a bad queue's queue_id) pass?"""
    assert validate_error("POST", "/api/v1/nowhere", 400, {"result": "error", "msg": "x", "code": "BAD_REQUEST"})
    assert validate_error("POST", "/api/v1/messages", 400, {"result": "error", "msg": "Missing 'to' argument",
                                                            "code": "REQUEST_VARIABLE_MISSING", "var_name": "to"})
    assert validate_error("GET", "/api/v1/events", 400, {"result": "error", "msg": "Bad event queue id: q",
                                                         "code": "BAD_EVENT_QUEUE_ID", "queue_id": "q"})


@pytest.mark.parametrize("body", [
    {"result": "error", "msg": "no code"},
    {"result": "error", "msg": "x", "code": "BAD_REQUEST", "surprise": 1},
    {"result": "error", "msg": "x", "code": "BAD_EVENT_QUEUE_ID", "queue_id": 5},
    {"result": "success", "msg": "", "code": "BAD_REQUEST"},
])
def test_malformed_error_bodies_fail(body):
    """Are a missing code, an undocumented field, a mistyped field and a wrong result refused?"""
    with pytest.raises(AssertionError):
        validate_error("GET", "/api/v1/events", 400, body)


def test_committed_shapes_are_current():
    """Is tests/support/data/openapi-shapes.json what scripts/make_schemas.py derives from ../shared/spec now,
    and does it hold no prose (no description, summary or example keyword outside property names)?"""
    source = shared_file("spec", "zulip-openapi.yaml")
    spec = importlib.util.spec_from_file_location("make_schemas", REPO_ROOT / "scripts" / "make_schemas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render(source) == openapi.SPEC_PATH.read_text(encoding="utf-8"), \
        "run: python scripts/make_schemas.py"

    def prose_keys(value, names_only=False):
        """Keys for people found in the value (the keys of a `properties` map are names, not keywords)."""
        if isinstance(value, list):
            return [key for item in value for key in prose_keys(item)]
        if not isinstance(value, dict):
            return []
        found = [] if names_only else [key for key in value if key in module.PROSE or key.startswith("x-")]
        return found + [key for name, item in value.items()
                        for key in prose_keys(item, names_only=(name == "properties" and not names_only))]

    assert prose_keys(openapi.load_spec()) == []
