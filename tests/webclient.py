"""A test client that signs in like the web client: session cookie, CSRF token, /json/..."""

from .helpers import encode_params


def sign_in(flask_client, email, password):
    """POST /accounts/login as the page does; returns the response."""
    return flask_client.post("/accounts/login", data={"username": email, "password": password},
                             headers={"X-Requested-With": "XMLHttpRequest"})


class SessionClient:
    """Calls /json with the Flask test client's cookie jar and the session's CSRF token."""

    def __init__(self, flask_client, csrf_token):
        self.flask_client = flask_client
        self.csrf_token = csrf_token

    @classmethod
    def signed_in(cls, flask_client, email, password):
        response = sign_in(flask_client, email, password)
        assert response.status_code == 200, response.get_json()
        return cls(flask_client, response.get_json()["csrf_token"])

    def call(self, method, path, params=None, csrf=True, **kwargs):
        url = "/json/" + path.lstrip("/")
        data = encode_params(params or {})
        headers = {"X-CSRFToken": self.csrf_token} if csrf and self.csrf_token else {}
        if method == "GET":
            return self.flask_client.get(url, query_string=data, headers=headers, **kwargs)
        return self.flask_client.open(url, method=method, data=data, headers=headers, **kwargs)

    def get(self, path, **params):
        return self.call("GET", path, params)

    def post(self, path, **params):
        return self.call("POST", path, params)

    def patch(self, path, **params):
        return self.call("PATCH", path, params)

    def delete(self, path, **params):
        return self.call("DELETE", path, params)
