"""Migration 110: drop the single-column indexes that a wider index already starts with:
user_message's user_profile_id (its primary key leads with it), message's recipient_id and
sender_id ((recipient_id, id) and (sender_id, id) lead with them). Every send wrote a row to each
for every recipient; without them a send's COMMIT writes 30% fewer pages (BENCHMARKS.md).
"""

DESCRIPTION = "no index another index already starts with"


def apply(database, backend):
    for table, column in (("user_message", "user_profile_id"), ("message", "recipient_id"),
                          ("message", "sender_id")):
        for index in database.get_indexes(table):
            if list(index.columns) == [column] and not index.unique:
                database.execute_sql(f'DROP INDEX "{index.name}"')
