"""chat-appliance: a single-process team chat server that speaks the Zulip REST API."""

__version__ = "0.1.0"

from chat_appliance.db.drivers import import_peewee_without_drivers

import_peewee_without_drivers()
