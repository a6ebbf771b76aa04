"""Migration 2: full-text search of messages, in the engine's own form (an FTS5 table on
SQLite; a tsvector table with a GIN index on PostgreSQL: backends/), and an index on
message.date_sent for the `date` anchor of GET /messages.
"""

DESCRIPTION = "message search index"


def apply(database, backend):
    backend.create_search_index(database)
    database.execute_sql("CREATE INDEX message_date_sent ON message (date_sent)")
