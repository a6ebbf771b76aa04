"""A database outage under a running `serve`: requests answer 503 DATABASE_UNAVAILABLE with
Retry-After (not `500 Internal server error` with a traceback each), the log says when it starts
and when it ends, once each, and the server works again when the database is back. The outage
is real: PostgreSQL is told to refuse connections to the server's database and to end those it
has."""

import os
import time
from urllib.parse import urlparse, urlunparse

import pytest
import requests

from ..support import pg
from ..support.serve_process import ServeProcess

ADMIN_URL = pg.BASE_URL if pg.ENABLED else "postgresql://postgres@127.0.0.1:5432/postgres"


def admin():
    """An autocommit connection to the PostgreSQL server's maintenance database, or a skip."""
    psycopg2 = pytest.importorskip("psycopg2")
    parsed = urlparse(ADMIN_URL)
    try:
        conn = psycopg2.connect(dbname="postgres", user=parsed.username, password=parsed.password,
                                host=parsed.hostname, port=parsed.port or 5432, connect_timeout=3)
    except psycopg2.OperationalError as error:
        pytest.skip(f"no PostgreSQL server to take down a database on: {error}")
    conn.autocommit = True
    return conn


def run(conn, sql, *params):
    with conn.cursor() as cursor:
        cursor.execute(sql, params)


def refuse_connections(conn, name, refused):
    run(conn, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"false" if refused else "true"}')
    if refused:
        run(conn, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", name)


@pytest.fixture
def outage_database(tmp_path):
    """(admin connection, database name, URL) of the database the test's `serve` uses: the one
    the suite gives the instance folder when it runs on PostgreSQL, else one made here."""
    conn = admin()
    if pg.ENABLED:
        url = pg.database_for_instance(tmp_path / "instance")
        name, made = urlparse(url).path.lstrip("/"), False
    else:
        name, made = f"chat_outage_{os.getpid()}_{int(time.time())}", True
        url = urlunparse(urlparse(ADMIN_URL)._replace(path="/" + name))
        run(conn, f'CREATE DATABASE "{name}"')
    try:
        yield conn, name, url
    finally:
        refuse_connections(conn, name, True)
        refuse_connections(conn, name, False)
        if made:
            run(conn, f'DROP DATABASE IF EXISTS "{name}"')
        conn.close()


def test_a_database_outage_answers_503_and_is_logged_once(tmp_path, outage_database):
    """While PostgreSQL refuses the server's database, do sends and reads answer 503
    DATABASE_UNAVAILABLE with Retry-After (never 500), is the outage logged once when it starts
    and once when it ends without a traceback, and do sends work again once the database is back?"""
    conn, name, url = outage_database
    server = ServeProcess(tmp_path / "instance", env={"CHAT_APPLIANCE_DATABASE_URL": url})
    try:
        auth = (server.email, server.api_key)

        def send():
            return requests.post(server.url + "/api/v1/messages", auth=auth, timeout=30,
                                 data={"type": "stream", "to": "general", "topic": "outage", "content": "hi"})

        assert send().status_code == 200
        refuse_connections(conn, name, True)
        answers = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            answers.append(send())
            answers.append(requests.get(server.url + "/api/v1/messages", auth=auth, timeout=30,
                                        params={"anchor": "newest", "num_before": 5, "num_after": 0}))
        assert {answer.status_code for answer in answers} == {503}, [a.text for a in answers[:4]]
        for answer in answers:
            assert answer.json()["code"] == "DATABASE_UNAVAILABLE"
            assert answer.json()["result"] == "error"
            assert int(answer.headers["Retry-After"]) > 0
        health = requests.get(server.url + "/health", timeout=10)
        assert health.status_code == 503 and health.json()["code"] == "DATABASE_UNAVAILABLE"

        refuse_connections(conn, name, False)
        deadline = time.monotonic() + 10
        while send().status_code != 200:
            assert time.monotonic() < deadline, "sends still fail 10 s after the database came back"
            time.sleep(0.2)
        assert requests.get(server.url + "/health", timeout=10).status_code == 200
    finally:
        server.stop()
    log = "".join(server.output)
    assert log.count("the database is unavailable") == 1, log
    assert log.count("the database is available again") == 1, log
    assert "Traceback" not in log, log
