"""A test client that signs in like the web client: session cookie, CSRF token, /json/..."""

from .helpers import ApiClient


def sign_in(flask_client, email, password):
    """POST /accounts/login as the page does; returns the response."""
    return flask_client.post("/accounts/login", data={"username": email, "password": password},
                             headers={"X-Requested-With": "XMLHttpRequest"})


class SessionClient(ApiClient):
    """Calls /json with the Flask test client's cookie jar and the session's CSRF token."""

    prefix = "/json/"

    def __init__(self, flask_client, csrf_token):
        self.flask_client = flask_client
        self.csrf_token = csrf_token

    @classmethod
    def signed_in(cls, flask_client, email, password):
        response = sign_in(flask_client, email, password)
        assert response.status_code == 200, response.get_json()
        return cls(flask_client, response.get_json()["csrf_token"])

    def call(self, method, path, params=None, csrf=True, **kwargs):
        headers = {"X-CSRFToken": self.csrf_token} if csrf and self.csrf_token else {}
        return self.send(method, path, params, headers, **kwargs)
