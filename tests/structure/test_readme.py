"""The README's generated API coverage section matches what the server routes."""

import importlib.util
from pathlib import Path

from ..support.shared import shared_file

ROOT = Path(__file__).resolve().parents[2]


def test_api_coverage_section_is_current():
    """Is README.md's "API coverage" section what scripts/api_coverage.py generates now?"""
    shared_file("spec", "chat-api.md")
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "scripts" / "api_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "README.md").read_text()
    current = readme[readme.index(module.HEADING):]
    assert current == module.section(), "run: python scripts/api_coverage.py --write"
