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


def serve_with_member(instance_path, *extra_args):
    """A real `serve` on a fresh instance (tests/support/serve_process.py), its owner's credentials and a
    second member's, created through the API: the bystander whose latency the interference
    benchmarks report."""
    import requests

    from tests.support.serve_process import ServeProcess

    server = ServeProcess(instance_path, *extra_args)
    owner = (server.email, server.api_key)
    response = requests.post(f"{server.url}/api/v1/users", auth=owner,
                             data={"email": "bystander@example.com", "password": "bystander-password",
                                   "full_name": "Bystander"})
    response.raise_for_status()
    response = requests.post(f"{server.url}/api/v1/fetch_api_key",
                             data={"username": "bystander@example.com", "password": "bystander-password"})
    response.raise_for_status()
    return server, owner, ("bystander@example.com", response.json()["api_key"])


def latencies_while(url, member, seconds, attack=None, attackers=1, per_second=None):
    """GET /users/me as `member` on one keep-alive connection for `seconds`, while `attackers`
    threads run attack() in a loop (None: nothing else runs, the baseline), each at most
    `per_second` times a second when given (a member's rate limit: 200 requests a minute).
    Returns the sorted latencies in ms and the number of attack() calls finished."""
    import threading

    import requests

    stop = threading.Event()
    done = [0]

    def attack_loop():
        while not stop.is_set():
            started = time.perf_counter()
            attack()
            done[0] += 1
            if per_second:
                stop.wait(max(0.0, 1 / per_second - (time.perf_counter() - started)))

    threads = [threading.Thread(target=attack_loop, daemon=True) for _ in range(attackers if attack else 0)]
    for thread in threads:
        thread.start()
    session = requests.Session()
    session.auth = member
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        session.get(f"{url}/api/v1/users/me").raise_for_status()
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    return sorted(times), done[0]


def report(label, times, calls=None):
    """One line: p50, p99 and the worst of a latencies_while() run."""
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    extra = "" if calls is None else f"   ({calls} attack requests)"
    print(f"{label:<44} GET /users/me p50 {p(0.5):7.1f} ms  p99 {p(0.99):7.1f} ms  max {times[-1]:7.1f} ms{extra}")
    return p(0.5), p(0.99)
