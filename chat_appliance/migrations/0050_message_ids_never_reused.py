"""Migration 50: a deleted newest message's id never comes back. Clients keep message ids
(drafts reply to them, unread counts hold them), so an id given to another message would show
them the wrong one. SQLite gives a new row max(id) + 1 unless the table is AUTOINCREMENT, which
needs a rebuild of the message table (backends/sqlite.py); PostgreSQL's sequence never goes back,
so nothing changes there.
"""

DESCRIPTION = "message ids never reused"


def apply(database, backend):
    backend.never_reuse_ids(database, "message")
