"""The test suite on PostgreSQL: with CHAT_APPLIANCE_DATABASE_URL=postgresql://.../NAME set, every
test gets a database of its own, named NAME_<pid>_<n>, copied (CREATE DATABASE ... TEMPLATE) from
the templates conftest builds once per session, and dropped after the test. Real `serve`
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


def register(url):
    """Count a database made elsewhere (by a backend's clone) as one to drop at the end."""
    _made.add(urlparse(url).path.lstrip("/"))


def clone_for_test(template_url):
    """(name, url) of a fresh copy of a template database for one test. A background thread
    copies the next test's database while this test runs, and drops finished ones, so that a
    test waits for neither (the first call of each template copies in the foreground)."""
    import concurrent.futures

    template = urlparse(template_url).path.lstrip("/")
    if "worker" not in _state:
        _state["worker"] = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-clone")
        _state["next"] = {}
    ready = _state["next"].pop(template, None)
    if ready is None:
        name = new_name()
        url = create(name, template=template)
    else:
        name, url = ready.result()
    upcoming = new_name()
    _state["next"][template] = _state["worker"].submit(lambda: (upcoming, create(upcoming, template=template)))
    return name, url


def drop_later(name):
    """Drop a test's database in the background (drop_all waits for it at the end)."""
    if "worker" in _state:
        _state["worker"].submit(drop, name)
    else:
        drop(name)


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
    if "worker" in _state:
        _state["worker"].shutdown(wait=True)
        del _state["worker"]
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
