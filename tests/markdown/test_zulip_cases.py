"""Zulip's own Markdown test cases, run against chat_appliance.markdown.

The case file lives outside the repository (``../shared/zulip/`` next to the
repo root) and is read in place.  Outputs are compared after a
whitespace-insensitive normalisation (HTML re-tokenised, entities decoded,
attributes sorted, whitespace around tags dropped).  Cases render as on
Zulip's test server (realm URL ``http://zulip.testserver``, so links into it
become relative narrows).  The test asserts the exact set of cases that do
not match (KNOWN_MISSES): a new miss fails it, and so does a fix that is not
recorded there.
"""

from __future__ import annotations

import collections
import json
import re
from html.parser import HTMLParser

from chat_appliance.markdown import RenderContext, render

from ..support.shared import shared_file

TEST_REALM_URL = "http://zulip.testserver"

# No misses: TeX is typeset by the KaTeX release Zulip's cases were made with
# (chat_appliance/markdown/katex.py).
KNOWN_MISSES: set[str] = set()


def is_tex_case(name: str) -> bool:
    return name.startswith("tex_") or "math" in name


class _Normaliser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs_s = "".join(f' {k}="{v or ""}"' for k, v in sorted(attrs))
        self.parts.append(f"<{tag}{attrs_s}>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.parts.append(f"</{tag}>")

    def handle_data(self, data):
        text = re.sub(r"\s+", " ", data).strip()
        if text:
            self.parts.append(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def normalise(html: str) -> str:
    parser = _Normaliser()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _load():
    return json.loads(shared_file("zulip", "markdown_cases.json").read_text(encoding="utf-8"))


def _feature(name: str) -> str:
    return name.split("_", 1)[0]


def run_regular_cases(cases: dict) -> tuple[int, int, dict, list[str]]:
    per_feature: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    failures: list[str] = []
    passed = total = 0
    for case in cases["regular_tests"]:
        if case.get("backend_only_rendering"):
            continue
        ctx = RenderContext(realm_url=TEST_REALM_URL, translate_emoticons=bool(case.get("translate_emoticons")))
        got = render(case["input"], ctx).html
        ok = normalise(got) == normalise(case["expected_output"])
        counts = per_feature[_feature(case["name"])]
        counts[1] += 1
        total += 1
        if ok:
            counts[0] += 1
            passed += 1
        else:
            failures.append(case["name"])
    return passed, total, per_feature, failures


def linkify_expected(template: str, url: str) -> str:
    if not url or "%s" not in template:
        return template
    if re.match(r"[a-z]+://", url):
        href = url
    elif "@" in url:
        href = "mailto:" + url
    else:
        href = "http://" + url
    return template % f'<a href="{href}">{url}</a>'


def pass_rates(cases: dict) -> dict:
    """Pass counts over the cases that are not backend-only: all of them and
    those that are not TeX (the target covers the latter)."""
    passed, total, per_feature, failures = run_regular_cases(cases)
    names = [c["name"] for c in cases["regular_tests"] if not c.get("backend_only_rendering")]
    non_tex = [n for n in names if not is_tex_case(n)]
    return {
        "passed": passed,
        "total": total,
        "non_tex_passed": sum(1 for n in non_tex if n not in failures),
        "non_tex_total": len(non_tex),
        "per_feature": per_feature,
        "failures": failures,
    }


def test_regular_cases(capsys):
    """Does every one of Zulip's rendering cases match, TeX included (KNOWN_MISSES is empty)?"""
    cases = _load()
    rates = pass_rates(cases)
    failures = rates["failures"]
    with capsys.disabled():
        print(f"\nZulip markdown cases: {rates['passed']}/{rates['total']} (backend-only excluded); "
              f"not TeX: {rates['non_tex_passed']}/{rates['non_tex_total']}")
        for feature, (ok, n) in sorted(rates["per_feature"].items()):
            if ok != n:
                print(f"  {feature:<24} {ok}/{n}")
    assert set(failures) == KNOWN_MISSES, (
        f"new misses: {sorted(set(failures) - KNOWN_MISSES)}; "
        f"now passing (remove from KNOWN_MISSES): {sorted(KNOWN_MISSES - set(failures))}"
    )
    assert rates["non_tex_passed"] == rates["non_tex_total"]


def test_backend_only_cases():
    """Do Zulip's backend-only cases (image previews) match as well?"""
    cases = _load()
    misses = []
    for case in cases["regular_tests"]:
        if not case.get("backend_only_rendering"):
            continue
        got = render(case["input"], RenderContext(realm_url=TEST_REALM_URL)).html
        if normalise(got) != normalise(case["expected_output"]):
            misses.append(case["name"])
    assert misses == []


def test_linkify_cases(capsys):
    """How many of Zulip's bare-URL linkification cases do we reproduce?"""
    cases = _load()
    ctx = RenderContext(realm_url=TEST_REALM_URL)
    passed = 0
    failures = []
    for text, template, url in cases["linkify_tests"]:
        got = render(text, ctx).html
        if normalise(got) == normalise(linkify_expected(template, url)):
            passed += 1
        else:
            failures.append((text, got))
    with capsys.disabled():
        print(f"\nZulip linkify cases: {passed}/{len(cases['linkify_tests'])}")
    assert failures == []
