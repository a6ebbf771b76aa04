"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import channels, profile_fields, realm, server, users

BLUEPRINTS = [server.bp, users.bp, channels.bp, realm.bp, profile_fields.bp]
