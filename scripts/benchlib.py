"""Pieces the benchmark scripts share (imported from their folder, which Python puts first on
sys.path when a script runs): a free port, SQL on PostgreSQL's maintenance database, and the raw
long poll that times message fan-out."""

import base64
import re
import socket
import time
from urllib.parse import urlencode, urlparse


def free_port():
    return free_ports(1)[0]


def free_ports(count):
    """`count` distinct free ports, for servers started side by side: free_port() called again
    before the first server has bound its port can give that same port back, and then two servers
    race for it and the loser's requests go to the winner."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sockets.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def admin(url, sql):
    """Run `sql` on the maintenance database of the PostgreSQL server of `url` (CREATE/DROP DATABASE)."""
    import psycopg2

    parsed = urlparse(url)
    conn = psycopg2.connect(dbname="postgres", user=parsed.username, password=parsed.password,
                            host=parsed.hostname, port=parsed.port or 5432)
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute(sql)
    conn.close()


def basic(user):
    return "Basic " + base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode()


async def poll_rounds(reader, writer, api_url, user, queue_id, stop, read_response):
    """Long-poll GET {api_url}/events for `queue_id` on one keep-alive connection until `stop` is
    set, reading each answer with read_response(reader); yields (time received, N) for each
    message event whose content says "round N". The next poll goes out once the caller has taken
    every event of the answer."""
    parsed = urlparse(api_url)
    last = -1
    while not stop.is_set():
        query = urlencode({"queue_id": queue_id, "last_event_id": last})
        writer.write(f"GET {parsed.path}/events?{query} HTTP/1.1\r\nHost: {parsed.netloc}\r\n"
                     f"Authorization: {basic(user)}\r\n\r\n".encode())
        body = await read_response(reader)
        now = time.perf_counter()
        for event in body.get("events", []):
            last = max(last, event["id"])
            if event["type"] == "message":
                yield now, int(re.search(r"round (\d+)", event["message"]["content"]).group(1))
