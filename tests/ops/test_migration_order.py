"""Migrations merged out of order: a database that already has a later version still gets an
earlier one that arrived after it (branches write migrations at the same time and merge in any
order)."""

from chat_appliance.config import database_url_for
from chat_appliance.db.connection import (
    SchemaMigration,
    close_connection,
    init_database,
    migrate,
)
from chat_appliance.models import database


def test_missing_earlier_migration_is_applied(tmp_path):
    """With migration 90 missing from a database at 100, does migrate() apply 90 (and only it)?"""
    init_database(database_url_for(tmp_path))
    migrate()
    with database.connection_context():
        for table in ("user_status", "muted_user", "alert_word", "push_device_token", "realm_emoji",
                      "realm_playground", "realm_export"):
            database.execute_sql(f'DROP TABLE "{table}"')
        SchemaMigration.delete().where(SchemaMigration.version == 90).execute()
        assert max(row.version for row in SchemaMigration.select()) > 90
    assert migrate() == [90]
    with database.connection_context():
        assert database.table_exists("muted_user")
    assert migrate() == []
    close_connection()
