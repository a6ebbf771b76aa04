"""Migration 120: a partial index of each user's direct-message rows (the `is_private` flag), as
Zulip has. /register's recent_private_conversations read every row a user ever received to find
the few that are direct messages (a tenth of a second at 100,000 received rows, growing with the
history); through this index it reads those rows alone. It holds rows whatever their other
bits, so a direct message's rows are in it from the send on (no pending state to wait for).
"""

DESCRIPTION = "an index of each user's direct-message rows"

IS_PRIVATE = 1 << 9  # the value of models.messages.FLAG_BITS["is_private"] when written


def apply(database, backend):
    database.execute_sql(
        "CREATE INDEX user_message_private ON user_message (user_profile_id, message_id)"
        f" WHERE (flags & {IS_PRIVATE}) != 0"
    )
