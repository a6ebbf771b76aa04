"""Zulip's own Markdown test cases, run against chat_appliance.markdown.

The case file lives outside the repository (``../shared/zulip/`` next to the
repo root) and is read in place.  Outputs are compared after a
whitespace-insensitive normalisation (HTML re-tokenised, entities decoded,
attributes sorted, whitespace around tags dropped).  The pass count may only
go up: raise MIN_REGULAR_PASSES / MIN_LINKIFY_PASSES when it does.
"""

from __future__ import annotations

import collections
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chat_appliance.markdown import RenderContext, render

REPO_ROOT = Path(__file__).resolve().parent.parent
CASES_PATH = REPO_ROOT.parent / "shared" / "zulip" / "markdown_cases.json"

MIN_REGULAR_PASSES = 97
MIN_LINKIFY_PASSES = 56

# Cases that cannot match without a real KaTeX: we emit Zulip's tex-error
# fallback markup instead of KaTeX's rendering.
KNOWN_GAPS = {
    "tex_inline", "tex_complex", "tex_fenced_math", "tex_money", "tex_safe_script_tag",
    "tex_inline_no_markdown_inside", "tex_display_no_markdown_inside",
}


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
    if not CASES_PATH.exists():
        pytest.skip(f"Zulip Markdown cases not found at {CASES_PATH}")
    return json.loads(CASES_PATH.read_text(encoding="utf-8"))


def _feature(name: str) -> str:
    return name.split("_", 1)[0]


def run_regular_cases(cases: dict) -> tuple[int, int, dict, list[str]]:
    per_feature: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    failures: list[str] = []
    passed = total = 0
    for case in cases["regular_tests"]:
        if case.get("backend_only_rendering"):
            continue
        ctx = RenderContext(translate_emoticons=bool(case.get("translate_emoticons")))
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


def test_regular_cases(capsys):
    """How many of Zulip's regular rendering cases do we reproduce?"""
    cases = _load()
    passed, total, per_feature, failures = run_regular_cases(cases)
    with capsys.disabled():
        print(f"\nZulip markdown cases: {passed}/{total} (backend-only excluded)")
        for feature, (ok, n) in sorted(per_feature.items()):
            print(f"  {feature:<24} {ok}/{n}")
        unexpected = sorted(set(failures) - KNOWN_GAPS)
        if unexpected:
            print("  failing (not known gaps):", ", ".join(unexpected))
    assert passed >= MIN_REGULAR_PASSES, failures


def test_linkify_cases(capsys):
    """How many of Zulip's bare-URL linkification cases do we reproduce?"""
    cases = _load()
    ctx = RenderContext(realm_url="http://zulip.testserver")
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
    assert passed >= MIN_LINKIFY_PASSES, failures
