"""Organization export and import in Zulip's export layout (`manage.py export`).

layout.py holds the facts of the format; exporter.py writes it from this server's database;
importer.py reads it (from this server or from a Zulip server) into a new instance.
slack.py (with slack_text.py for message text) reads a Slack workspace export into a new instance
through the importer's Writer.
"""
