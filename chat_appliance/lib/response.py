"""The Zulip response envelope."""

from flask import jsonify


def json_success(data=None, *, ignored=None):
    """A success response: result, msg, the endpoint's fields, and any ignored parameters."""
    body = {"result": "success", "msg": ""}
    if data:
        body.update(data)
    if ignored:
        body["ignored_parameters_unsupported"] = sorted(ignored)
    return jsonify(body)


def json_error(error):
    """An error response from a JsonableError, with its HTTP status."""
    response = jsonify(error.to_dict())
    response.status_code = error.http_status
    return response
