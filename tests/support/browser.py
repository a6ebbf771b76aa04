"""Chromium through Playwright for the web client tests: Debian's browser, never a downloaded one."""

import os
import re
import shutil
from pathlib import Path

import pytest
import requests

from .helpers import FAST_HASH
from .serve_process import ServeProcess

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "webclient"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PASSWORD = "a long enough password"


# Starts CHROMIUM with Playwright's arguments and a few features of its own turned off (see there).
CHROMIUM_WRAPPER = Path(__file__).resolve().parent / "chromium.sh"


def launch(playwright):
    """Chromium, or a skip that says why not."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"{CHROMIUM} is missing (.ci/run installs it with apt)")
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    return playwright.chromium.launch(executable_path=str(CHROMIUM_WRAPPER), args=CHROMIUM_ARGS,
                                      env={**os.environ, "CHAT_APPLIANCE_TEST_CHROMIUM": executable})


class Site:
    """A running serve with its owner, and people made through the API."""

    def __init__(self, instance, env=None, **serve_options):
        # Passwords hashed cheaply, as the in-process fixtures hash them (tests/support/helpers.py):
        # every page signs in, and scrypt's tenth of a second of CPU per sign-in added up. Hashing
        # with the default is tested where it is the question (tests/api, `serve` and the CLI).
        env = {"CHAT_APPLIANCE_PASSWORD_HASH_METHOD": FAST_HASH, **(env or {})}
        self.server = ServeProcess(instance, env=env, **serve_options)
        self.url = self.server.url
        text = "".join(self.server.output)
        self.owner_password = re.search(r"password:\s+(\S+)", text).group(1)
        self.owner_auth = (self.server.email, self.server.api_key)

    def api(self, method, path, auth=None, **params):
        params = {k: v if isinstance(v, str) else __import__("json").dumps(v) for k, v in params.items()}
        response = requests.request(method, f"{self.url}/api/v1/{path}", auth=auth or self.owner_auth,
                                    data=params if method != "GET" else None, params=params if method == "GET" else None,
                                    timeout=30)
        body = response.json()
        assert body["result"] == "success", (path, body)
        return body

    def person(self, email, name):
        """A member with PASSWORD, subscribed to general; returns (email, api auth, user id)."""
        user_id = self.api("POST", "users", email=email, password=PASSWORD, full_name=name)["user_id"]
        key = self.api("POST", "fetch_api_key", username=email, password=PASSWORD)["api_key"]
        auth = (email, key)
        self.api("POST", "users/me/subscriptions", auth=auth, subscriptions=[{"name": "general"}])
        return email, auth, user_id

    def stream_id(self, name):
        return self.api("GET", "get_stream_id", stream=name)["stream_id"]

    def stop(self):
        self.server.stop()


class Watched:
    """A page whose console errors, uncaught exceptions and dialogs are recorded."""

    def __init__(self, page):
        self.page = page
        self.errors = []
        self.dialogs = []
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        # Which request failed: the console only says "Failed to load resource".
        page.on("response", lambda response: response.status >= 400 and self.errors.append(
            f"{response.status} {response.request.method} {response.url}"))

        def on_dialog(dialog):
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)


# Run in every page before its own scripts: keep the body of each answered event poll, in order,
# for until_delivered; and count the page's other requests under way, each until its answer has
# arrived whole, for settled. A copy of the response is read, so the page's own reading is untouched.
POLL_RECORDER = """(() => {
    const fetchFirst = window.fetch;
    window.__eventPolls = [];
    window.__requestsUnderWay = 0;
    window.__requestsChanged = performance.now();
    const change = (by) => {
        window.__requestsUnderWay += by;
        window.__requestsChanged = performance.now();
    };
    window.fetch = async (...args) => {
        const poll = String(args[0]).includes("/json/events");
        if (!poll) change(1);
        let response;
        try {
            response = await fetchFirst(...args);
        } catch (error) {
            if (!poll) change(-1);
            throw error;
        }
        if (poll) {
            response.clone().text().then((body) => window.__eventPolls.push(body), () => {});
        } else {
            response.clone().arrayBuffer().catch(() => {}).finally(() => change(-1));
        }
        return response;
    };
})();"""


def sign_in(browser, site, email, password, viewport=DESKTOP, color_scheme="light"):
    """A fresh browser context signed in as `email`, showing the app; returns a Watched page."""
    context = browser.new_context(viewport=viewport, color_scheme=color_scheme)
    context.add_init_script(POLL_RECORDER)
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(site.url + "/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("textbox", name="Message").wait_for()
    # The keyboard shortcuts load just after the first view: a key pressed before then is lost.
    page.locator("body[data-shortcuts=ready]").wait_for(state="attached")
    return watched


def session_cookies(site, email, password):
    """A new web session for `email`, as the sign-in form gets one (POST /accounts/login), as
    cookies for a browser context."""
    response = requests.post(site.url + "/accounts/login", data={"username": email, "password": password},
                             headers={"X-Requested-With": "XMLHttpRequest"}, timeout=30)
    assert response.status_code == 200 and response.json()["result"] == "success", response.text
    return [{"name": cookie.name, "value": cookie.value, "url": site.url, "httpOnly": True, "sameSite": "Lax"}
            for cookie in response.cookies]


def signed_in_page(browser, site, email, password, viewport=DESKTOP, color_scheme="light", at=""):
    """A fresh browser context with a session of its own for `email` (its cookie from the sign-in
    request), showing the app at the view `at` (a location hash; the combined feed without);
    returns a Watched page. What sign_in does but for the sign-in page itself, which loads the
    whole page a second time: the tests of the sign-in form go through sign_in. A view opened by
    `at` is the first one drawn, where going to its hash afterwards shows the combined feed first:
    its messages can satisfy what a test waits for before the view it wants replaces it."""
    context = browser.new_context(viewport=viewport, color_scheme=color_scheme)
    context.add_cookies(session_cookies(site, email, password))
    context.add_init_script(POLL_RECORDER)
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(site.url + "/" + at)
    page.get_by_role("textbox", name="Message").wait_for()
    # The keyboard shortcuts load just after the first view: a key pressed before then is lost.
    page.locator("body[data-shortcuts=ready]").wait_for(state="attached")
    return watched


@pytest.fixture(scope="module")
def browser():
    """Chromium for the whole test module (a test module imports this fixture by name)."""
    from playwright.sync_api import sync_playwright  # the test extra's: imported once a module asks

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def pages(browser, site):
    """Open signed-in pages through `open(email, password)` (the module's `site` fixture gives the
    server), each with a session of its own; afterwards, assert none logged an error or opened a
    dialog. A test module imports this fixture by name."""
    opened = []

    def open_page(email, password=PASSWORD, **kwargs):
        watched = signed_in_page(browser, site, email, password, **kwargs)
        opened.append(watched)
        return watched.page

    yield open_page
    for watched in opened:
        errors, dialogs = watched.errors, watched.dialogs
        watched.page.context.close()
        # A 5xx is the server's bug: its traceback is in what it printed.
        said = "".join(site.server.output[-60:]) if any(error[:1] == "5" for error in errors) else ""
        assert errors == [], f"{errors}\n{said}" if said else errors
        assert dialogs == [], dialogs


def on_page_until(page, check, timeout=10):
    """Wait on `page` until `check()` holds or `timeout` seconds pass; returns its last result.
    Waiting on the page, not sleeping: Playwright runs route handlers and event listeners only
    while this thread waits on it."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() >= deadline:
            return result
        page.wait_for_timeout(50)


def settled(page, quiet=0.1, timeout=10):
    """Wait until the page has had no request of its own under way (its event poll aside) for
    `quiet` seconds: what it fetched for a panel has arrived and been drawn. For pages opened by
    `pages` or sign_in (POLL_RECORDER counts their requests)."""
    page.wait_for_function("""(quiet) => window.__requestsUnderWay === 0
        && performance.now() - window.__requestsChanged >= quiet""", arg=quiet * 1000, polling=20,
                           timeout=timeout * 1000)


def until_delivered(page, text, action, timeout=10):
    """Run `action`, then wait until the page's event poll has brought an event whose text holds
    `text`: other events (the page's own read flags, say) may answer a poll first. The page keeps
    each poll's body as it reads it (POLL_RECORDER): asking the browser for a finished
    response's body afterwards fails now and then, and a skipped body was a missed event."""
    seen = page.evaluate("() => window.__eventPolls.length")
    action()
    if on_page_until(page, lambda: page.evaluate(
            "([from, text]) => window.__eventPolls.slice(from).some((body) => body.includes(text))", [seen, text]),
            timeout):
        return
    polls = page.evaluate("(from) => window.__eventPolls.slice(from).map((body) => body.slice(0, 200))", seen)
    raise AssertionError(f"no event with {text!r} reached the page within {timeout} s; polls answered since: {polls}")


def arrives_while_fetching(page, pattern, wanted, start, text, post, timeout=10):
    """Hold the answer to the first request to `pattern` for which `wanted(request)` holds, once
    `start()` has made the page send it and the server has answered (so the answer predates what
    follows); then `post()` a message holding `text`, wait until its event reaches the page, and
    only then let the held answer through. Other requests to `pattern` pass."""
    held, taken = [], []

    def hold(route):
        if taken or not wanted(route.request):
            route.continue_()
            return
        taken.append(route)
        held.append((route, route.fetch()))

    page.route(pattern, hold)
    try:
        start()
        on_page_until(page, lambda: held, timeout)
        assert len(held) == 1, "the page sent no request to hold"
        until_delivered(page, text, post, timeout)
        route, response = held[0]
        route.fulfill(response=response)
    finally:
        page.unroute(pattern)


def shot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


AXE = Path(__file__).resolve().parent / "data" / "axe.min.js"


def axe_violations(page, include=None):
    """axe-core's violations on the page as it is now (or within the `include` CSS selector):
    a list of "rule-id (impact): target, ..." strings. An `include` that matches nothing makes
    axe-core raise, so a check cannot pass on an element that is not there. axe-core is vendored
    in tests/support/data (scripts/fetch_axe.sh): no network at test time."""
    if not AXE.exists():
        pytest.skip(f"{AXE} is missing (scripts/fetch_axe.sh vendors it)")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text() + "\n;0")  # evaluated by the test driver: the page's CSP does not apply
    result = page.evaluate("""async (include) => {
        const r = await axe.run(include ? { include: [include] } : document,
                                { resultTypes: ["violations"], runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] });
        return r.violations.map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 5).map(n => n.target.join(" ")).join(", ")}`);
    }""", include)
    return result
