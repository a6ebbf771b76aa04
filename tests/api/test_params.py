"""The parameter layer: missing, wrong types, null bytes, unknown parameters, aliases."""

from ..support.helpers import err, ok


def test_missing_parameter(org):
    """Does a missing required parameter give REQUEST_VARIABLE_MISSING with var_name?"""
    body = err(org.client(org.owner).post("users", email="x@zulip.example", password="p"), 400,
               "REQUEST_VARIABLE_MISSING", "Missing 'full_name' argument")
    assert body["var_name"] == "full_name"


def test_wrong_type_boolean(org):
    """Does a non-boolean for a boolean parameter give BAD_REQUEST with Zulip's text?"""
    err(org.client(org.hamlet).get("users", client_gravatar="maybe"), 400, "BAD_REQUEST",
        "client_gravatar is not a boolean")


def test_wrong_type_integer(org):
    """Does a non-integer for an integer parameter give BAD_REQUEST?"""
    err(org.client(org.owner).patch(f"users/{org.hamlet.id}", role="admin"), 400, "BAD_REQUEST",
        "role is not valid JSON")
    err(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=True), 400, "BAD_REQUEST",
        "role is not an integer")


def test_bad_json(org):
    """Does malformed JSON for a JSON parameter give a clear BAD_REQUEST?"""
    response = org.client(org.hamlet).call("POST", "users/me/subscriptions", {"subscriptions": '[{"name": '})
    err(response, 400, "BAD_REQUEST", "subscriptions is not valid JSON")


def test_null_bytes_refused(org):
    """Is a parameter with a NUL byte refused, changing nothing?"""
    client = org.client(org.owner)
    err(client.post("users", email="n@zulip.example", password="p", full_name="Nul\x00l"), 400, "BAD_REQUEST")
    members = ok(client.get("users"))["members"]
    assert not any(m["email"] == "n@zulip.example" for m in members)


def test_unknown_parameters_are_ignored_and_listed(org):
    """Are unknown parameters ignored and listed in ignored_parameters_unsupported (never an error)?"""
    body = ok(org.client(org.hamlet).get("users/me", dont_block=True, frobnicate="x"))
    assert body["ignored_parameters_unsupported"] == ["dont_block", "frobnicate"]


def test_no_ignored_key_without_unknown_parameters(org):
    """Is ignored_parameters_unsupported absent when every parameter is known?"""
    assert "ignored_parameters_unsupported" not in ok(org.client(org.hamlet).get("users/me"))


def test_oversized_body_refused(app, org):
    """Is a body over the configured limit refused with a JSON error?"""
    app.config["MAX_CONTENT_LENGTH"] = 1000
    response = org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "x" * 5000}])
    assert response.status_code == 413
    assert response.get_json()["result"] == "error"
