"""chat-appliance: a single-process team chat server that speaks the Zulip REST API."""

__version__ = "0.1.0"
