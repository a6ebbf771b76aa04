"""Migration 118: what an end-to-end encrypted push registration keeps on a client device: the
push key and its kind of token; and push_key_id made 64-bit on PostgreSQL, since the app's ids
are unsigned 32-bit integers and PostgreSQL's integer stops at 2**31 - 1 (SQLite's INTEGER holds
64 bits already).
"""

DESCRIPTION = "push keys of client devices (end-to-end encrypted notifications)"

COLUMNS = (
    ("push_key", "VARCHAR(64) NULL"),
    ("push_token_kind", "VARCHAR(4) NULL"),
)


def apply(database, backend):
    existing = {column.name for column in database.get_columns("client_device")}
    for name, sql_type in COLUMNS:
        if name not in existing:
            database.execute_sql(f"ALTER TABLE client_device ADD COLUMN {name} {sql_type}")
    if backend.NAME != "sqlite":
        database.execute_sql("ALTER TABLE client_device ALTER COLUMN push_key_id TYPE BIGINT")
