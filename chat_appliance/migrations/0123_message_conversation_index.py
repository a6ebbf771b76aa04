"""Migration 123: an index of each message's conversation by its id: (id, recipient, channel,
topic). /register's unread_msgs reads the conversation of each of a person's unread messages,
thousands of them. Through the table's key, each such read lands on a page of its own among the
message bodies, and the farther apart those pages, the fewer the page cache holds: 3,000 unread
messages among a million cost a page read each. The index keeps a few dozen bytes per message,
so that the same reads share a few hundred pages whatever the history's size. A send adds one
entry, at the index's end.
"""

DESCRIPTION = "messages' conversations indexed by message id"


def apply(database, backend):
    database.execute_sql('CREATE INDEX IF NOT EXISTS "message_id_recipient_id_stream_id_topic"'
                         ' ON "message" ("id", "recipient_id", "stream_id", "topic")')
