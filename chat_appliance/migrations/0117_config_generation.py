"""Migration 117: config_generation, one row whose counter SQLite triggers raise whenever a row
of the tables a send's configuration reads depend on changes (the account, the organization, the
channel, subscriptions, groups and their memberships, mutes). A send keeps those reads with the
counter read before them (lib/snapshots.py) and reads again once it has moved: every write counts,
by this process or any other (an admin command, a script), because the database itself counts it.

A trigger goes with its table: a later migration that rebuilds one of these tables (SQLite's way
to change a column) must make its triggers again (tests/db/test_kept_config_reads.py checks that every
table a kept read queries has them).

PostgreSQL gets the table, empty, so that both engines have the models' schema; it keeps no reads,
so it needs no triggers.
"""

from peewee import BigIntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "a counter of configuration changes, raised by triggers (SQLite)"

# The tables whose rows the kept reads of a send depend on, at this version.
TABLES = ("realm", "user_profile", "stream", "subscription", "user_group", "user_group_membership",
          "group_group_membership", "muted_user")


def apply(database, backend):
    frozen = Frozen(database)

    class FrozenConfigGeneration(frozen.Model):
        value = BigIntegerField()

        class Meta:
            table_name = "config_generation"

    frozen.create(FrozenConfigGeneration)
    if backend.NAME != "sqlite":
        return
    database.execute_sql("INSERT INTO config_generation (id, value) VALUES (1, 0)")
    for table in TABLES:
        for event in ("INSERT", "UPDATE", "DELETE"):
            database.execute_sql(
                f'CREATE TRIGGER "config_generation_{table}_{event.lower()}" AFTER {event} ON "{table}"'
                " BEGIN UPDATE config_generation SET value = value + 1 WHERE id = 1; END")
