"""The HTTP kit the API and the browser client stand on: request parameters (params.py),
authentication by API key or session (auth.py, sessions.py), rate limits, the long poll of
/events, the JSON envelope (response.py) and the trusted-proxy middleware. It knows no view."""
