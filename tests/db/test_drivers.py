"""peewee without database drivers until a backend needs one (chat_appliance/db/drivers.py)."""

import json
import subprocess
import sys

PEEWEE_STATE = """
import json, uuid, peewee, psycopg2.extensions
adapter = peewee.Psycopg2Adapter
print(json.dumps({
    "psycopg2": getattr(peewee.psycopg2, "__name__", None),
    "pg_extensions": getattr(getattr(peewee, "pg_extensions", None), "__name__", None),
    "Json_pg2": getattr(peewee.Json_pg2, "__qualname__", None),
    "txn": [getattr(adapter, name, None) for name in ("txn_idle", "txn_inerror", "txn_unknown")],
    "json_type": getattr(adapter().json_type, "__qualname__", None),
    "uuid_adapted": any(key[0] is uuid.UUID for key in psycopg2.extensions.adapters),
}))
"""


def run_python(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-1]


DRIVERS_LOADED = "print(sorted(m for m in sys.modules if m.startswith(('psycopg', 'pymysql', 'MySQLdb'))))"


def test_a_sqlite_server_loads_no_postgres_driver():
    """Once the `chat-appliance` command has started (as `serve` does), does loading the whole
    server leave every database driver unloaded?"""
    out = run_python("import sys\nfrom chat_appliance.cli.main import main\n"
                     "try:\n    main(['serve', '--help'])\nexcept SystemExit:\n    pass\n"
                     "import chat_appliance.app, chat_appliance.server.asgi\n" + DRIVERS_LOADED)
    assert out == "[]"


def test_importing_the_package_leaves_peewee_alone():
    """Does a program that only imports the package (a bot author's test suite loads its pytest
    plugin) keep peewee as peewee's own import makes it, drivers included?"""
    out = run_python("import sys, chat_appliance, chat_appliance.testing.pytest_plugin, chat_appliance.config\n"
                     "import peewee\nprint(getattr(peewee.psycopg2, '__name__', None))")
    assert out == "psycopg2"


def test_the_postgres_backend_gives_peewee_what_its_own_import_would():
    plain = json.loads(run_python(PEEWEE_STATE))
    assert plain["psycopg2"] == "psycopg2"  # the driver is installed: peewee took it by itself
    deferred = json.loads(run_python(
        "from chat_appliance.db.drivers import import_peewee_without_drivers; import_peewee_without_drivers(); "
        "import peewee; assert peewee.psycopg2 is None; "
        "from chat_appliance.db.backends import postgres; "
        "postgres.open_database('postgresql://nobody@127.0.0.1:1/none')\n" + PEEWEE_STATE))
    assert deferred == plain
