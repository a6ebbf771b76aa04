"""Migration 116: user_message is keyed by (message, user) instead of (user, message), and a
partial index by (user, message) holds the rows that have entered the per-user indexes.

A send to a channel adds one row per recipient. Keyed by user first, those rows landed in a
different leaf of the key for every recipient, and COMMIT copied each of those leaves whole into
SQLite's write-ahead log: about 70 of a send's 104 pages for a 50-member channel. Keyed by
message first, a send's rows are neighbours in one or two leaves. The per-user index leaves out
rows that carry PENDING_UNREAD_INDEX (models/messages.py), as the unread index already did, so
a new message's rows enter both per-user indexes together, in the batch that the next unread
pass writes: a send's WAL frames went from 104.5 to 31.5.

On SQLite the table is rebuilt WITHOUT ROWID: the key is then the table itself, where a rowid
table kept every row twice (the rows, and the key's index of them). The (message) index goes: the
key starts with the message now. PostgreSQL keeps its heap and changes the key in place.
"""

DESCRIPTION = "per-user message rows are keyed by message first"

PENDING_UNREAD_INDEX = 1 << 11  # the value of models.messages.PENDING_UNREAD_INDEX when written
READ = 1

# The new per-user index, then those of migrations 1 and 115 (SQLite drops them with the old table).
PARTIAL_INDEXES = (
    ("by_user", f"(flags & {PENDING_UNREAD_INDEX}) = 0"),
    ("unread", f"(flags & {READ | PENDING_UNREAD_INDEX}) = 0"),
    ("starred", "(flags & 2) != 0"),
    ("mentioned", "(flags & 120) != 0"),
)


def apply(database, backend):
    if backend.NAME == "sqlite":
        database.execute_sql(
            'CREATE TABLE "user_message_by_message" ("user_profile_id" INTEGER NOT NULL, "message_id" INTEGER NOT NULL,'
            ' "flags" INTEGER NOT NULL, PRIMARY KEY ("message_id", "user_profile_id"),'
            ' FOREIGN KEY ("user_profile_id") REFERENCES "user_profile" ("id") ON DELETE CASCADE,'
            ' FOREIGN KEY ("message_id") REFERENCES "message" ("id") ON DELETE CASCADE) WITHOUT ROWID'
        )
        # In key order, so that the new table's leaves are written once each, full.
        database.execute_sql(
            'INSERT INTO "user_message_by_message" ("user_profile_id", "message_id", "flags")'
            ' SELECT "user_profile_id", "message_id", "flags" FROM "user_message"'
            ' ORDER BY "message_id", "user_profile_id"'
        )
        database.execute_sql('DROP TABLE "user_message"')
        database.execute_sql('ALTER TABLE "user_message_by_message" RENAME TO "user_message"')
        indexes = PARTIAL_INDEXES
    else:
        (key,) = database.execute_sql(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'user_message'::regclass AND contype = 'p'"
        ).fetchone()
        database.execute_sql(f'ALTER TABLE "user_message" DROP CONSTRAINT "{key}"')
        database.execute_sql('ALTER TABLE "user_message" ADD PRIMARY KEY ("message_id", "user_profile_id")')
        database.execute_sql('DROP INDEX IF EXISTS "user_message_message_id"')
        indexes = PARTIAL_INDEXES[:1]  # the others are as they were
    for name, condition in indexes:
        database.execute_sql(
            f"CREATE INDEX user_message_{name} ON user_message (user_profile_id, message_id) WHERE {condition}"
        )
