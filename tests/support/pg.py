"""The test suite on PostgreSQL: with CHAT_APPLIANCE_DATABASE_URL=postgresql://.../NAME set, the
session makes one working database, NAME_<pid>_work<n>, migrates it and saves its tables' rows
(the empty state, then with the example organization) in snapshot schemas; before each test the
working database is reset to one of them, so every test starts from a fresh database's state. Real `serve`
processes get a database per instance folder. Every database made here starts with NAME_ and is
dropped at the end of the session, whatever happened.
"""

import hashlib
import itertools
import os
from urllib.parse import urlparse, urlunparse

BASE_URL = os.environ.get("CHAT_APPLIANCE_DATABASE_URL") or ""
ENABLED = urlparse(BASE_URL).scheme in ("postgres", "postgresql")

_counter = itertools.count(1)
_made = set()
_state = {}


def engine():
    """'postgres' when the suite runs on PostgreSQL, else 'sqlite'."""
    return "postgres" if ENABLED else "sqlite"


def _prefix():
    return urlparse(BASE_URL).path.lstrip("/") or "chat_appliance_test"


def url_for(name):
    """The base URL with another database name."""
    return urlunparse(urlparse(BASE_URL)._replace(path="/" + name))


def _admin():
    """An autocommit connection to the server's maintenance database."""
    import psycopg2

    parsed = urlparse(BASE_URL)
    conn = psycopg2.connect(dbname="postgres", user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432)
    conn.autocommit = True
    return conn


def _execute(sql):
    conn = _admin()
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


def new_name(tag="t"):
    """A fresh database name under the URL's name (never created yet)."""
    return f"{_prefix()}_{os.getpid()}_{tag}{next(_counter)}"


def create(name, template=None):
    """CREATE DATABASE name [TEMPLATE template]; returns its URL."""
    _made.add(name)
    _execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return url_for(name)


def drop(name):
    """DROP DATABASE, closing whatever connections are still open to it."""
    _execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _made.discard(name)


def _connect(url):
    import psycopg2

    parsed = urlparse(url)
    return psycopg2.connect(dbname=parsed.path.lstrip("/"), user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432)


def work_database():
    """The session's one working database (created empty on first use): every test runs in it,
    reset to a saved state first (restore). Copying a whole database per test (CREATE DATABASE
    ... TEMPLATE) costs a WAL copy of its catalogs each time, seconds on a busy disk; resetting
    a few dozen small tables inside one transaction costs one commit."""
    if "work" not in _state:
        name = new_name("work")
        _state["work"] = create(name)
    return _state["work"]


def save_snapshot(kind):
    """Keep a copy of every table's rows and every sequence's position of the working database
    under the schema snapshot_<kind>, to restore before each test."""
    conn = _connect(work_database())
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA IF EXISTS snapshot_{kind} CASCADE")
            cursor.execute(f"CREATE SCHEMA snapshot_{kind}")
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
            tables = [row[0] for row in cursor.fetchall()]
            for table in tables:
                cursor.execute(f'CREATE TABLE snapshot_{kind}."{table}" AS SELECT * FROM public."{table}"')
            cursor.execute("SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'")
            sequences = cursor.fetchall()
        _state[f"snapshot_{kind}"] = (tables, sequences)
    finally:
        conn.close()


def restore_snapshot(kind):
    """Put the working database back to a saved state, in one transaction. Foreign-key triggers
    are off for it (session_replication_role = replica: the rows restored were consistent when
    saved), so the order of tables does not matter."""
    tables, sequences = _state[f"snapshot_{kind}"]
    if "admin" not in _state or _state["admin"].closed:
        _state["admin"] = _connect(work_database())
    conn = _state["admin"]
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            for (extra,) in cursor.fetchall():
                if extra not in tables:
                    cursor.execute(f'DROP TABLE public."{extra}" CASCADE')
            for table in tables:
                cursor.execute(f'DELETE FROM public."{table}"')
                cursor.execute(f'INSERT INTO public."{table}" SELECT * FROM snapshot_{kind}."{table}"')
            for sequence, last_value in sequences:
                if last_value is None:
                    cursor.execute(f"SELECT setval('public.\"{sequence}\"', 1, false)")
                else:
                    cursor.execute(f"SELECT setval('public.\"{sequence}\"', %s, true)", (last_value,))
    except Exception:
        conn.close()
        raise


def database_for_instance(instance_path):
    """The URL of the database of a `serve` instance folder: the same folder gets the same
    database (a restarted server finds its data); created empty on first use."""
    digest = hashlib.sha1(str(instance_path).encode()).hexdigest()[:10]
    name = f"{_prefix()}_{os.getpid()}_i{digest}"
    if name not in _made:
        create(name)
    return url_for(name)


def drop_all():
    """Drop every database this session made (end of session)."""
    if "admin" in _state:
        _state.pop("admin").close()
    for name in list(_made):
        try:
            drop(name)
        except Exception:  # noqa: BLE001 (best effort at exit; the next names differ by pid anyway)
            pass


def snapshot(url):
    """Every row of every table of a PostgreSQL database, sorted (to compare before and after)."""
    import psycopg2

    parsed = urlparse(url)
    conn = psycopg2.connect(dbname=parsed.path.lstrip("/"), user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
            tables = [row[0] for row in cursor.fetchall()]
            result = {}
            for table in tables:
                cursor.execute(f'SELECT * FROM "{table}"')
                result[table] = sorted(map(repr, cursor.fetchall()))
            return result
    finally:
        conn.close()


def use_fresh_database(monkeypatch):
    """On PostgreSQL, point $CHAT_APPLIANCE_DATABASE_URL at a new empty database, for a test that
    makes a second instance (an import into a new folder): on SQLite the new folder brings its own
    file. Dropped at the end of the session. No-op on SQLite."""
    if ENABLED:
        monkeypatch.setenv("CHAT_APPLIANCE_DATABASE_URL", create(new_name("fresh")))
