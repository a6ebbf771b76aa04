"""docs/integrations.md is generated from the registry of integrations."""

from pathlib import Path

from chat_appliance.integrations.docs import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def test_integrations_doc_is_up_to_date():
    """Does docs/integrations.md say what the registry holds (regenerate it with
    `python -m chat_appliance.integrations.docs > docs/integrations.md`)?"""
    assert DOC.read_text() == render()
