"""Migration 71: where a user's picture comes from ('G' Gravatar, 'U' uploaded), for uploaded
avatars. An added column must have a default on SQLite; existing users keep Gravatar.

Migration 1 once created user_profile from the live model, so databases made then already have
the column: it is added only where missing.
"""

DESCRIPTION = "uploaded avatars"


def apply(database, backend):
    if any(column.name == "avatar_source" for column in database.get_columns("user_profile")):
        return
    database.execute_sql("ALTER TABLE user_profile ADD COLUMN avatar_source VARCHAR(1) NOT NULL DEFAULT 'G'")
