"""Migration 122: soft deactivation (actions/soft_deactivation.py). `long_term_idle` marks a
person who has not used the organization for a long time: a channel message sent meanwhile
writes no per-user row for them unless the row carries a flag (a mention, say), and the rows
they lack are added when they come back, for the messages after `last_active_message_id`.
Existing accounts are active.
"""

DESCRIPTION = "soft deactivation of long-idle people"


def apply(database, backend):
    boolean = "BOOLEAN NOT NULL DEFAULT false" if backend.NAME == "postgres" else "INTEGER NOT NULL DEFAULT 0"
    columns = {column.name for column in database.get_columns("user_profile")}
    if "long_term_idle" not in columns:
        database.execute_sql(f"ALTER TABLE user_profile ADD COLUMN long_term_idle {boolean}")
    if "last_active_message_id" not in columns:
        database.execute_sql("ALTER TABLE user_profile ADD COLUMN last_active_message_id INTEGER")
