"""The import contracts of setup.cfg ([importlinter]), checked by import-linter on every test run.

import-linter follows imports through other modules, so a module below the HTTP layer that
reaches Flask through a helper breaks the contract as surely as one that imports it itself.
"""

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports(root):
    """Run lint-imports on the package under `root`; return (exit status, output)."""
    executable = Path(sys.executable).with_name("lint-imports")
    command = [str(executable)] if executable.exists() else [sys.executable, "-m", "importlinter.cli"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([*command, "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                            timeout=300)
    return result.returncode, result.stdout + result.stderr


def contract_count():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return sum(1 for section in config.sections() if section.startswith("importlinter:contract:"))


def test_the_package_keeps_its_import_contracts():
    """Does lint-imports find every contract of setup.cfg kept?"""
    status, output = lint_imports(ROOT)
    assert status == 0, output
    assert f"Contracts: {contract_count()} kept, 0 broken." in output, output


def test_a_leak_through_another_module_breaks_the_contracts(tmp_path):
    """Would an action that reaches Flask through web/params, and a parser in lib/ that imports an
    action, break the contracts (so that the test above cannot pass vacuously)?"""
    shutil.copytree(ROOT / "chat_appliance", tmp_path / "chat_appliance",
                    ignore=shutil.ignore_patterns("__pycache__", "static", "templates", "vendor"))
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    (tmp_path / "chat_appliance" / "actions" / "leak.py").write_text(
        "from chat_appliance.web.params import endpoint\n")
    (tmp_path / "chat_appliance" / "lib" / "leak.py").write_text(
        "from chat_appliance.actions.drafts import do_create_drafts\n")
    status, output = lint_imports(tmp_path)
    assert status != 0
    assert "chat_appliance.actions.leak -> chat_appliance.web.params" in output
    assert "chat_appliance.lib.leak -> chat_appliance.actions.drafts" in output
    assert "chat_appliance.actions is not allowed to import flask" in output
