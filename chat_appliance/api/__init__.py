"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import channels, messages, realm, server, users

BLUEPRINTS = [server.bp, users.bp, channels.bp, realm.bp, messages.bp]
