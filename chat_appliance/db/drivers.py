"""Database drivers load only for the backend in use.

peewee imports every database driver it finds installed, and psycopg2 (a dependency, for the
PostgreSQL backend) brings libpq and its own copy of OpenSSL: 9.7 MiB of a SQLite server's
resident memory (BENCHMARKS.md). The `chat-appliance` command (cli/main.py `main`, which `serve`
and every admin command go through) imports peewee with the drivers held back before anything
else imports it, and the PostgreSQL backend hands psycopg2 to peewee when it opens a database,
setting what peewee's own import would have set (tests/db/test_drivers.py compares the two).

Importing the package changes nothing: the command owns its process, but a program that merely
imports the package does not (a bot author's test suite loads its pytest plugin, and may use
peewee with its own drivers). A program that embeds `create_app` may call
`import_peewee_without_drivers` itself, first, for the same saving; without it peewee simply
finds psycopg2 itself.
"""

from __future__ import annotations

import sys

# Drivers peewee looks for at import. psycopg 3 is held back too: the PostgreSQL backend uses
# psycopg2, and peewee would choose psycopg 3 whenever it saw it without psycopg2.
HELD_BACK = ("psycopg2", "psycopg2cffi", "psycopg", "pymysql", "MySQLdb")


def import_peewee_without_drivers() -> None:
    """Import peewee, unless already imported, without letting it import database drivers."""
    if "peewee" in sys.modules:
        return
    held = [name for name in HELD_BACK if name not in sys.modules]
    for name in held:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises ImportError
    try:
        import peewee  # noqa: F401
    finally:
        for name in held:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def load_psycopg2() -> None:
    """Give peewee psycopg2, as its import does when the driver is installed."""
    import peewee

    if peewee.psycopg2 is not None:
        return
    import psycopg2
    from psycopg2 import extensions, extras

    extras.register_uuid()
    peewee.psycopg2, peewee.pg_extensions, peewee.Json_pg2 = psycopg2, extensions, extras.Json
    adapter = peewee.Psycopg2Adapter
    adapter.txn_idle = extensions.TRANSACTION_STATUS_IDLE
    adapter.txn_inerror = extensions.TRANSACTION_STATUS_INERROR
    adapter.txn_unknown = extensions.TRANSACTION_STATUS_UNKNOWN
