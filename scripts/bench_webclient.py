#!/usr/bin/env python3
"""Web client benchmark, in Debian's Chromium through Playwright against a real serve.

Prints, each beside a baseline measured in the same run:

  first message   navigation start -> first message shown with the "Message" box enabled, on a
                  channel of --messages messages, browser cache disabled (p50 of --runs loads);
                  baseline: the two API calls the page needs (POST /register, GET /messages),
                  made from Python over HTTP
  size            JavaScript + CSS the page loads, bytes before compression (budget 150 KB)
  remote message  another client sends -> the message is in the page (p50 of --samples);
                  baseline: the same message reaching a Python long-poll client on /api/v1/events
  scroll back     a channel of --scroll-messages messages opened at its newest, then
                  scrolled to the top again and again until its first message is in the page;
                  the time, and the most elements the page held on the way (document.*);
                  baseline: the same GET /messages pages fetched from Python
  own send        Enter in the compose box -> your message in the page, right after
                  the scroll back (the page holds the oldest messages) and then at the end
                  (p50 of --samples); baseline: POST /messages from Python

  returning visit the same page loaded again in the same browser (its cache kept), over a link
                  with a 50 ms round trip (Chromium's network emulation): time to the first
                  message, and the requests that went to the network; baseline: the first
                  visit over the same link, cache empty

Targets: first message under 1 s; size under 150 KB; remote message p50 under 300 ms; scroll back
through 2,000 messages under 4 s, under 20,000 elements; own send under 200 ms.
"""

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.serve_process import ServeProcess  # noqa: E402

STATIC = ROOT / "chat_appliance" / "webclient" / "static"


def api(server, auth, method, path, **params):
    params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    response = requests.request(method, f"{server.url}/api/v1/{path}", auth=auth, timeout=60,
                                **({"params": params} if method == "GET" else {"data": params}))
    body = response.json()
    assert body["result"] == "success", body
    return body


def seed(server, auth, count, name="bench"):
    """A channel with `count` messages, sent through the API by 8 threads."""
    api(server, auth, "POST", "users/me/subscriptions", subscriptions=[{"name": name}])
    session = requests.Session()
    session.auth = auth

    def send(n):
        session.post(f"{server.url}/api/v1/messages", timeout=60,
                     data={"type": "stream", "to": name, "topic": f"topic {n % 40}",
                           "content": f"Message **{n}** with a [link](https://example.com/{n}) and `code`"})

    with ThreadPoolExecutor(8) as pool:
        for done, _ in enumerate(pool.map(send, range(count)), 1):
            if done % 500 == 0:
                sys.stderr.write(f"\r  seeding {done}/{count}")
    sys.stderr.write("\n")
    return api(server, auth, "GET", "get_stream_id", stream=name)["stream_id"]


def p50(samples):
    return statistics.median(samples)


def signed_in_page(browser, server, email, password):
    """(context, page, its DevTools session with the network domain on), signed in by the form's
    request; CSP bypassed, as the benchmark's checks are expressions the page's policy refuses."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    context.request.post(f"{server.url}/accounts/login", form={"username": email, "password": password},
                         headers={"X-Requested-With": "XMLHttpRequest"})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    return context, page, cdp


def first_message(browser, server, email, password, stream_id, runs):
    samples, api_samples, loaded_bytes = [], [], 0
    auth_session = requests.Session()
    for _ in range(runs):
        context, page, cdp = signed_in_page(browser, server, email, password)
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        sizes = {}
        page.on("response", lambda r: sizes.__setitem__(r.url, len(r.body())) if re.search(r"\.(js|css)$", r.url) else None)
        page.goto(f"{server.url}/#narrow/channel/{stream_id}-bench")
        page.wait_for_function("document.querySelector('[role=article]') && "
                               "!document.querySelector('textarea[aria-label=Message]').disabled", polling="raf")
        samples.append(page.evaluate("performance.now()") / 1000)
        loaded_bytes = sum(sizes.values())
        context.close()
        # Baseline: the page's two API calls, from Python.
        started = time.perf_counter()
        login = auth_session.post(f"{server.url}/accounts/login", data={"username": email, "password": password},
                                  headers={"X-Requested-With": "XMLHttpRequest"}).json()
        headers = {"X-CSRFToken": login["csrf_token"]}
        started = time.perf_counter()
        auth_session.post(f"{server.url}/json/register", headers=headers,
                          data={"apply_markdown": "true", "client_gravatar": "true", "slim_presence": "true"})
        auth_session.get(f"{server.url}/json/messages", params={
            "anchor": "first_unread", "num_before": 50, "num_after": 50, "apply_markdown": "true",
            "narrow": json.dumps([{"operator": "channel", "operand": stream_id}])})
        api_samples.append(time.perf_counter() - started)
    return samples, api_samples, loaded_bytes


def remote_message(browser, server, email, password, sender_auth, stream_id, samples_wanted):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    context.request.post(f"{server.url}/accounts/login", form={"username": email, "password": password},
                         headers={"X-Requested-With": "XMLHttpRequest"})
    page = context.new_page()
    page.goto(f"{server.url}/#narrow/channel/{stream_id}-bench/topic/live")
    page.get_by_role("textbox", name="Message").wait_for()
    page.wait_for_timeout(500)
    page.evaluate("""() => {
        window.__seen = {};
        new MutationObserver(() => {
          for (const el of document.querySelectorAll('[role=article] .content')) {
            const m = /probe-(\\d+)/.exec(el.textContent);
            if (m && !(m[1] in window.__seen)) window.__seen[m[1]] = performance.timeOrigin + performance.now();
          }
        }).observe(document.body, {subtree: true, childList: true});
    }""")
    # The baseline: a Python long-poll client on the same server.
    queue = api(server, sender_auth, "POST", "register", event_types=["message"])
    poll_seen = {}
    stop = threading.Event()

    def poller():
        last = queue["last_event_id"]
        session = requests.Session()
        session.auth = sender_auth
        while not stop.is_set():
            try:
                body = session.get(f"{server.url}/api/v1/events", timeout=90,
                                   params={"queue_id": queue["queue_id"], "last_event_id": last}).json()
            except requests.RequestException:
                return  # the server stopped at the end of the run
            for event in body.get("events", []):
                last = max(last, event["id"])
                match = re.search(r"probe-(\d+)", event.get("message", {}).get("content", ""))
                if match:
                    poll_seen.setdefault(match.group(1), time.time() * 1000)

    thread = threading.Thread(target=poller, daemon=True)
    thread.start()
    browser_ms, poll_ms = [], []
    session = requests.Session()
    session.auth = sender_auth
    for n in range(samples_wanted):
        sent = time.time() * 1000
        session.post(f"{server.url}/api/v1/messages",
                     data={"type": "stream", "to": "bench", "topic": "live", "content": f"probe-{n}"})
        page.wait_for_function(f"'{n}' in window.__seen", polling="raf")
        deadline = time.time() + 5
        while str(n) not in poll_seen and time.time() < deadline:
            time.sleep(0.002)
        browser_ms.append(page.evaluate(f"window.__seen['{n}']") - sent)
        poll_ms.append(poll_seen[str(n)] - sent)
        time.sleep(0.1)
    stop.set()
    context.close()
    return browser_ms, poll_ms


def scroll_back(browser, server, email, password, stream_id, samples_wanted):
    """The scroll-back and own-send figures (see the docstring)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    context.request.post(f"{server.url}/accounts/login", form={"username": email, "password": password},
                         headers={"X-Requested-With": "XMLHttpRequest"})
    page = context.new_page()
    page.goto(f"{server.url}/#narrow/channel/{stream_id}-scroll")
    page.wait_for_function("document.querySelector('[role=article]')")
    page.wait_for_timeout(500)
    result = page.evaluate("""async () => {
        const feed = document.querySelector(".feed");
        let peak = document.getElementsByTagName("*").length;
        const started = performance.now();
        let last = null;
        let changed = started;
        // Until the page has got no older message for 1.5 s (it has the channel's first).
        while (performance.now() - changed < 1500) {
            feed.scrollTop = 0;
            feed.dispatchEvent(new Event("scroll"));
            await new Promise((resolve) => setTimeout(resolve, 20));
            peak = Math.max(peak, document.getElementsByTagName("*").length);
            const first = document.querySelector("[role=article]")?.dataset.id;
            if (first !== last) { last = first; changed = performance.now(); }
        }
        return { seconds: (changed - started) / 1000, peak, first: Number(last) };
    }""")
    sends = []
    for n in range(samples_wanted):
        sends.append(page.evaluate("""async (n) => {
            const box = document.querySelector("textarea[aria-label=Message]");
            box.value = `own-${n}`;
            box.dispatchEvent(new Event("input"));
            const started = performance.now();
            const seen = new Promise((resolve) => {
                const look = () => [...document.querySelectorAll("[role=article] .content")].some((el) => el.textContent === `own-${n}`);
                new MutationObserver((_, observer) => { if (look()) { observer.disconnect(); resolve(performance.now()); } })
                    .observe(document.querySelector(".message-list"), { subtree: true, childList: true });
            });
            box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
            return (await seen) - started;
        }""", n))
        page.wait_for_timeout(150)
    context.close()
    return result, sends


def fetch_baseline(server, auth, stream_id, page_size=400):
    """The same older pages from Python, newest first; and one POST /messages."""
    session = requests.Session()
    session.auth = auth
    narrow = json.dumps([{"operator": "channel", "operand": stream_id}])
    started = time.perf_counter()
    anchor, pages = "newest", 0
    while True:
        body = session.get(f"{server.url}/api/v1/messages", params={
            "anchor": anchor, "num_before": page_size, "num_after": 0, "include_anchor": "false" if pages else "true",
            "narrow": narrow, "apply_markdown": "true", "client_gravatar": "true"}).json()
        pages += 1
        if body["found_oldest"] or not body["messages"]:
            break
        anchor = str(body["messages"][0]["id"])
    fetch = time.perf_counter() - started
    posts = []
    for n in range(5):
        started = time.perf_counter()
        session.post(f"{server.url}/api/v1/messages", data={"type": "stream", "to": "scroll", "topic": "baseline",
                                                            "content": f"baseline {n}"})
        posts.append(time.perf_counter() - started)
    return fetch, p50(posts)


LATENCY_MS = 50


def returning_visit(browser, server, email, password, stream_id, runs):
    """([first visits' seconds], [returning visits' seconds], requests to the network on a first
    visit, on a returning one) over a link of LATENCY_MS round trips."""
    first, returning, fetched = [], [], ([], [])
    shown = ("document.querySelector('[role=article]') && "
             "!document.querySelector('textarea[aria-label=Message]').disabled")
    count = "() => performance.getEntriesByType('resource').filter((e) => e.transferSize > 0).length"
    for _ in range(max(1, runs // 2)):
        context, page, cdp = signed_in_page(browser, server, email, password)
        cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": LATENCY_MS,
                                                      "downloadThroughput": -1, "uploadThroughput": -1})
        for visit in range(3):
            started = time.perf_counter()
            if visit == 0:
                page.goto(f"{server.url}/#narrow/channel/{stream_id}-bench")
            else:
                page.reload()
            page.wait_for_function(shown, polling="raf")
            (first if visit == 0 else returning).append(time.perf_counter() - started)
            fetched[0 if visit == 0 else 1].append(page.evaluate(count))
        context.close()
    return first, returning, p50(fetched[0]), p50(fetched[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=5000, help="messages in the channel (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=7, help="page loads for the first-message figure")
    parser.add_argument("--samples", type=int, default=30, help="messages for the remote-message figure")
    parser.add_argument("--scroll-messages", type=int, default=2000,
                        help="messages in the channel scrolled back (default: %(default)s)")
    parser.add_argument("--only-scroll", action="store_true", help="only the scroll-back and own-send figures")
    parser.add_argument("--only-returning", action="store_true", help="only the returning-visit figure")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    files = sorted(STATIC.rglob("*.js")) + sorted(STATIC.rglob("*.css"))
    total = sum(f.stat().st_size for f in files)
    with tempfile.TemporaryDirectory() as tmp:
        server = ServeProcess(Path(tmp) / "instance")
        try:
            text = "".join(server.output)
            password = re.search(r"password:\s+(\S+)", text).group(1)
            owner = (server.email, server.api_key)
            api(server, owner, "POST", "users", email="sender@example.com", password="sender password",
                full_name="Sender")
            sender_key = api(server, owner, "POST", "fetch_api_key", username="sender@example.com",
                             password="sender password")["api_key"]
            sender = ("sender@example.com", sender_key)
            if not args.only_scroll:
                stream_id = seed(server, owner, args.messages)
                api(server, sender, "POST", "users/me/subscriptions", subscriptions=[{"name": "bench"}])
            scroll_id = seed(server, owner, 0 if args.only_returning else args.scroll_messages, name="scroll")
            api(server, owner, "POST", "mark_all_as_read")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                if not args.only_scroll:
                    visits = returning_visit(browser, server, server.email, password, stream_id, args.runs)
                if args.only_returning:
                    browser.close()
                    report_returning(*visits)
                    return
                if not args.only_scroll:
                    ttfm, api_baseline, loaded = first_message(browser, server, server.email, password, stream_id,
                                                               args.runs)
                    remote, poll = remote_message(browser, server, server.email, password, sender, stream_id,
                                                  args.samples)
                scrolled, sends = scroll_back(browser, server, server.email, password, scroll_id,
                                              min(args.samples, 15))
                browser.close()
            fetch_seconds, post_seconds = fetch_baseline(server, owner, scroll_id)
        finally:
            server.stop()
    print(f"scroll back through {args.scroll_messages} messages: {scrolled['seconds']:.2f} s; baseline the same "
          f"pages from Python {fetch_seconds:.2f} s; ratio {scrolled['seconds'] / fetch_seconds:.1f}x; target < 4 s")
    print(f"elements in the page, most on the way: {scrolled['peak']}; target < 20,000")
    print(f"own send: {sends[0]:.0f} ms right after the scroll back (oldest messages in the page), then p50 "
          f"{p50(sends[1:]):.0f} ms (max {max(sends[1:]):.0f} ms); baseline POST /messages from Python "
          f"{post_seconds * 1000:.0f} ms; ratio {p50(sends[1:]) / (post_seconds * 1000):.1f}x; target < 200 ms")
    if args.only_scroll:
        return
    print(f"first message ({args.messages} in the channel, cache disabled): p50 {p50(ttfm) * 1000:.0f} ms "
          f"(max {max(ttfm) * 1000:.0f} ms); baseline register+messages from Python "
          f"{p50(api_baseline) * 1000:.0f} ms; ratio {p50(ttfm) / p50(api_baseline):.1f}x; target < 1000 ms")
    print(f"size: {total / 1024:.1f} KiB JS+CSS in the package ({len(files)} files), "
          f"{loaded / 1024:.1f} KiB loaded by the page; target < 150 KB")
    report_returning(*visits)
    print(f"remote message: p50 {p50(remote):.0f} ms (p90 {sorted(remote)[int(len(remote) * 0.9)]:.0f} ms); "
          f"baseline Python long poll p50 {p50(poll):.0f} ms; ratio {p50(remote) / max(p50(poll), 0.1):.1f}x; "
          f"target < 300 ms")


def report_returning(first, returning, fetched_first, fetched_returning):
    print(f"returning visit over a {LATENCY_MS} ms round trip: p50 {p50(returning) * 1000:.0f} ms to the first "
          f"message, {fetched_returning:.0f} requests to the network; baseline the first visit "
          f"{p50(first) * 1000:.0f} ms, {fetched_first:.0f} requests; ratio {p50(returning) / p50(first):.2f}x")


if __name__ == "__main__":
    main()
