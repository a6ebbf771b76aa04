"""The error-shape check every `err` assertion runs (tests/openapi.validate_error)."""

import pytest

from . import openapi
from .openapi import validate_error


def test_missing_description_fails_loudly(monkeypatch, tmp_path):
    """Without ../shared/spec, does validation raise instead of calling every body valid?"""
    monkeypatch.setattr(openapi, "SPEC_PATH", tmp_path / "absent.yaml")
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
