"""The generated documents (docs/configuration.md, docs/api-coverage.md) are what their
generator, scripts/gen_docs.py, writes from the code now."""

import importlib.util
from pathlib import Path

from chat_appliance import config

from ..support.shared import shared_file

ROOT = Path(__file__).resolve().parents[2]


def load_script(name):
    """A module of scripts/ (which is no package), loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_configuration_doc_is_regenerated_from_the_settings():
    """Is docs/configuration.md exactly what scripts/gen_docs.py generates from config.SETTINGS now?"""
    text = load_script("gen_docs").configuration_md()
    assert (ROOT / "docs" / "configuration.md").read_text() == text, "run: python scripts/gen_docs.py"


def test_configuration_doc_has_a_row_and_a_doc_for_every_key():
    """Does every configuration key have its own documentation in SETTINGS, and a row of its own in
    the generated document?"""
    text = load_script("gen_docs").configuration_md()
    assert [s.name for s in config.SETTINGS] == list(config.DEFAULTS)
    for setting in config.SETTINGS:
        assert len(setting.doc) > 10, setting.name
        assert f"| `{setting.name}` |" in text


def test_api_coverage_doc_is_regenerated_from_the_routes():
    """Is docs/api-coverage.md exactly what scripts/api_coverage.py generates from the app's routes
    and the spec now?"""
    shared_file("spec", "chat-api.md")
    coverage = load_script("api_coverage")
    assert coverage.DOC.read_text() == coverage.section(), "run: python scripts/gen_docs.py"
