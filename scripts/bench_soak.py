#!/usr/bin/env python3
"""Soak benchmark: a small team's day in the browser, replayed, and the server's memory after it.

A team of three (the owner and two members made through the API) uses `chat-appliance serve` as
the web client does, round after round: each person loads the page and its scripts now and then
(/register with the client's parameters, its first GET /messages), polls for events, sends
messages of every kind (plain, code, quotes, mentions, emoji, links, TeX, spoilers, polls), edits
and reacts, marks read, searches, types, sets presence, opens profiles, and now and then uploads
an image (so the thumbnail worker runs) and changes a setting. Every request checks its answer.

Printed: the server's resident memory (RSS) idle after start-up (the baseline, measured in the same
run), after each tenth of the rounds, its peak, and at the end, with the ratio to the baseline;
beside each, the same with the server's child processes (the KaTeX engine's, which runs while
formulas are typeset and ends after a minute without one: markdown/katex.py). At the end the
benchmark waits for that process to end and prints the total again: what the day leaves behind.
Target: the day ends under 100 MiB (the README's "well under 100 MB").
"""

import argparse
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402
import requests  # noqa: E402

from bench_big_org import WEB_REGISTER  # noqa: E402  (scripts/ is first on sys.path when run)
from tests.support.serve_process import ServeProcess  # noqa: E402

TARGET_MIB = 100
SCRIPTS = ("boot.js", "main.js", "feed.js", "compose.js", "emoji.js", "admin.js", "widgets.js")
MESSAGES = [
    "Morning all, the build is green again.",
    "Did anyone look at **the release notes**? @**{other}** I think you wrote most of them.",
    "```python\ndef total(values):\n    return sum(v for v in values if v)\n```",
    "> quoting what was said earlier\n\nand my answer below it :thumbs_up:",
    "Inline math $$e^{{i\\pi}} + 1 = 0$$ and a display block:\n\n```math\n\\int_0^1 x^2\\,dx = \\frac{{1}}{{3}}\n```",
    "See https://example.com/docs/{n} and [the tracker](https://example.org/issues/{n})",
    "```spoiler Answer\nIt was the cache all along.\n```",
    "- one\n- two\n  - two and a half\n- three\n\n1. first\n2. second",
    "/poll Lunch?\nPizza\nSushi\nSalad",
    "| name | value |\n|---|---|\n| a | {n} |\n| b | {n2} |",
    "Thanks @**all**, see you tomorrow :wave:",
]


class Person:
    def __init__(self, url, email, key, name):
        self.url, self.name = url, name
        self.session = requests.Session()
        self.session.auth = (email, key)
        self.queue = None
        self.last_event = -1
        self.sent = []
        self.reactions = set()

    def call(self, method, path, **params):
        kwargs = {"params": params} if method == "GET" else {"data": params}
        response = self.session.request(method, f"{self.url}/api/v1/{path}", timeout=30, **kwargs)
        body = response.json()
        if body.get("result") != "success":
            raise SystemExit(f"{method} {path} failed: {response.status_code} {body}")
        return body

    def load_page(self):
        """What opening the web client costs the server: the page, some of its scripts, /register
        and the first view's messages."""
        if self.queue is not None:  # the page left behind deletes its queue (events.js, on pagehide)
            self.call("DELETE", "events", queue_id=self.queue)
        for path in ["/"] + [f"/static/webclient/js/{name}" for name in SCRIPTS]:
            self.session.get(self.url + path, timeout=30).raise_for_status()
        state = self.call("POST", "register", **WEB_REGISTER)
        self.queue, self.last_event = state["queue_id"], state["last_event_id"]
        self.call("GET", "messages", anchor="first_unread", num_before=50, num_after=50, apply_markdown="true",
                  client_gravatar="true", narrow="[]")

    def poll(self):
        body = self.call("GET", "events", queue_id=self.queue, last_event_id=self.last_event, dont_block="true")
        if body["events"]:
            self.last_event = body["events"][-1]["id"]
        return body["events"]


def png(seed, size):
    from PIL import Image

    image = Image.new("RGB", size, ((seed * 37) % 256, (seed * 91) % 256, (seed * 13) % 256))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def one_round(number, people, names, rng, channels, leave_out=()):
    for index, person in enumerate(people):
        other = names[(index + 1) % len(names)]
        if number % 40 == index:  # a page load now and then (a new tab, a reload)
            person.load_page()
        person.poll()
        channel, topic = rng.choice(sorted(channels)), f"topic {rng.randrange(12)}"
        text = rng.choice([m for m in MESSAGES if "tex" not in leave_out or "math" not in m])
        text = text.format(other=other, n=number, n2=number * 7)
        sent = person.call("POST", "messages", type="stream", to=channel, topic=topic, content=text)["id"]
        person.sent.append(sent)
        person.call("POST", "typing", op="stop", type="stream", stream_id=channels[channel], topic=topic)
        person.call("POST", "users/me/presence", status="active", new_user_input="true", ping_only="false",
                    slim_presence="true")
        if rng.random() < 0.3:
            reaction = (rng.choice(person.sent[-20:]), rng.choice(["smile", "tada", "heart"]))
            method = "DELETE" if reaction in person.reactions else "POST"  # a second click takes it back
            person.call(method, f"messages/{reaction[0]}/reactions", emoji_name=reaction[1])
            person.reactions ^= {reaction}
        if rng.random() < 0.1 and len(person.sent) > 2:
            person.call("PATCH", f"messages/{person.sent[-2]}", content=f"edited in round {number}: " + text)
        if rng.random() < 0.2:
            person.call("POST", "messages/flags/narrow", anchor="oldest", num_before=0, num_after=1000,
                        op="add", flag="read", narrow=json.dumps([{"operator": "channel", "operand": channel}]))
        if rng.random() < 0.15:
            person.call("GET", "messages", anchor="newest", num_before=50, num_after=0,
                        narrow=json.dumps([{"operator": "search", "operand": rng.choice(["build", "cache", "lunch"])}]))
        if rng.random() < 0.3:
            person.call("GET", "messages", anchor="newest", num_before=50, num_after=0, apply_markdown="true",
                        narrow=json.dumps([{"operator": "channel", "operand": channel},
                                           {"operator": "topic", "operand": topic}]))
        if rng.random() < 0.05:
            person.call("POST", "messages", type="private", to=json.dumps([names[(index + 1) % 3]]),
                        content=f"a word in private, round {number}")
        if rng.random() < 0.03 and "uploads" not in leave_out:
            files = {"file": (f"photo-{number}.png", png(number, (rng.randrange(600, 2400), rng.randrange(400, 1800))),
                              "image/png")}
            response = person.session.post(f"{person.url}/api/v1/user_uploads", files=files, timeout=60)
            uri = response.json()["url"]
            person.call("POST", "messages", type="stream", to=channel, topic=topic, content=f"[photo]({uri})")
        if rng.random() < 0.02:
            person.call("PATCH", "settings", emojiset=rng.choice(["google", "text"]))
        if rng.random() < 0.05:
            person.call("GET", f"users/{rng.randrange(1, 4)}")


def rss_parts(pid):
    """The kernel's split of a process's RSS (Linux): anonymous memory (heaps), file-backed pages
    (the interpreter's and libraries' code, V8's among them when TeX was typeset), shared memory."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {line.split(":")[0]: " ".join(line.split()[1:]) for line in lines if line.startswith(("RssAnon", "RssFile", "RssShmem"))}


def with_children(process):
    """RSS of `process` and of its child processes, in MiB; and how many children there are."""
    total, children = process.memory_info().rss, 0
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
            children += 1
        except psutil.NoSuchProcess:
            pass
    return total / 2**20, children


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1500,
                        help="rounds; each person does one thing or several per round (default 1,500: "
                             "about 4,500 messages, a busy day for three)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--leave-out", nargs="*", default=[], choices=["tex", "uploads"],
                        help="leave out TeX messages or image uploads, to see what each costs")
    parser.add_argument("--idle-wait", type=float, default=90,
                        help="seconds to wait at the end for the KaTeX engine's process to end (default 90)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        server = ServeProcess(Path(folder) / "instance")
        try:
            process = psutil.Process(server.process.pid)
            owner = (server.email, server.api_key)
            url = server.url
            people = [Person(url, *owner, "Owner")]
            names = [server.email]
            for number in (1, 2):
                email = f"member{number}@example.com"
                requests.post(f"{url}/api/v1/users", auth=owner, timeout=30,
                              data={"email": email, "password": "a long enough password",
                                    "full_name": f"Member {number}"}).raise_for_status()
                key = requests.post(f"{url}/api/v1/fetch_api_key", timeout=30,
                                    data={"username": email, "password": "a long enough password"}).json()["api_key"]
                people.append(Person(url, email, key, f"Member {number}"))
                names.append(email)
            names_of_channels = ["general", "design", "ops"]
            people[0].call("POST", "users/me/subscriptions", principals=json.dumps(names),
                           subscriptions=json.dumps([{"name": name} for name in names_of_channels]))
            channels = {name: people[0].call("GET", "get_stream_id", stream=name)["stream_id"]
                        for name in names_of_channels}
            time.sleep(2)  # as bench_footprint: work deferred past the first answer is done
            baseline = process.memory_info().rss / 2**20
            print(f"idle after start: {baseline:.1f} MiB")
            for person in people:
                person.load_page()
            peak = peak_tree = baseline
            started = time.perf_counter()
            for number in range(args.rounds):
                one_round(number, people, names, rng, channels, args.leave_out)
                rss = process.memory_info().rss / 2**20
                tree, _ = with_children(process)
                peak, peak_tree = max(peak, rss), max(peak_tree, tree)
                if (number + 1) % max(1, args.rounds // 10) == 0:
                    print(f"  round {number + 1:5d}: RSS {rss:6.1f} MiB, with the engine's process {tree:6.1f} MiB",
                          flush=True)
            elapsed = time.perf_counter() - started
            time.sleep(2)
            end = process.memory_info().rss / 2**20
            end_tree, _ = with_children(process)
            sent = sum(len(person.sent) for person in people)
            print(f"{args.rounds} rounds, {sent:,} messages in {elapsed:.0f} s")
            print(f"RSS at the end {end:.1f} MiB ({end / baseline:.2f}x idle after start), peak {peak:.1f} MiB;"
                  f" with the engine's process {end_tree:.1f} MiB, peak {peak_tree:.1f} MiB")
            print("  of which: " + ", ".join(f"{key} {value}" for key, value in rss_parts(process.pid).items()))
            waited = time.perf_counter()
            while with_children(process)[1] and time.perf_counter() - waited < args.idle_wait:
                time.sleep(1)
            left, children = with_children(process)
            print(f"after {time.perf_counter() - waited:.0f} s more, idle: {left:.1f} MiB in all"
                  f" ({children} child processes left); target < {TARGET_MIB} MiB:"
                  f" {'met' if left < TARGET_MIB and not children else 'MISSED'}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
