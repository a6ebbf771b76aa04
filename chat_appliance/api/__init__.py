"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import channels, events, realm, server, typing, users

BLUEPRINTS = [server.bp, users.bp, channels.bp, realm.bp, events.bp, typing.bp]
