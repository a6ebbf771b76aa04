"""README.md: short, opening with the two commands a fresh machine needs, and pointing at the
documents in docs/ that hold the rest."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 150


def test_readme_opens_with_the_two_fresh_machine_commands():
    """Are the first commands of README.md the install-and-serve and the install-and-test lines?"""
    commands = [line.strip() for line in README.read_text().splitlines() if line.startswith("    ")][:2]
    assert commands == ["pip install . && chat-appliance serve", "pip install -e '.[test]' && python -m pytest -q"]


def test_readme_is_at_most_150_lines():
    """Is README.md at most 150 lines, the rest living in docs/?"""
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_links_every_doc_and_every_link_resolves():
    """Does README.md link every document in docs/, and does every relative link it holds name a
    file that exists?"""
    text = README.read_text()
    links = set(re.findall(r"\]\(([^)#\s]+)", text))
    local = {link for link in links if "://" not in link}
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= local
    assert [link for link in local if not (ROOT / link).exists()] == []
