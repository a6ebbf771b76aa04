"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import channels, events, messages, realm, server, typing, users

BLUEPRINTS = [server.bp, users.bp, channels.bp, realm.bp, messages.bp, events.bp, typing.bp]
