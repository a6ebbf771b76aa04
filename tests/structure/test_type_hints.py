"""Static checks: the type hints of actions/, workers/, clients/, lib/, events/, db/ and server/, and mypy over the
whole package (configured in setup.cfg [mypy]). They read the source only; no server, no database."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "chat_appliance"
TYPED_PACKAGES = ("actions", "workers", "clients", "lib", "events", "db", "server")


def public_functions(tree):
    """(qualified name, node) of each public function: module-level ones and the methods of public
    classes, their names not starting with an underscore. Nested functions are private to their
    enclosing one."""
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not child.name.startswith("_"):
                yield prefix + child.name, child
            elif isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                yield from walk(child, prefix + child.name + ".")
    yield from walk(tree, "")


def missing_annotations(function, in_class):
    """The names of the function's parameters without an annotation, and "return" when its return
    type is missing. The first parameter of a method (self, cls) needs none."""
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    decorators = {ast.unparse(decorator) for decorator in function.decorator_list}
    if in_class and positional and "staticmethod" not in decorators:
        positional = positional[1:]
    named = positional + arguments.kwonlyargs
    named += [star for star in (arguments.vararg, arguments.kwarg) if star is not None]
    missing = [argument.arg for argument in named if argument.annotation is None]
    if function.returns is None:
        missing.append("return")
    return missing


def test_public_functions_have_type_hints():
    """Does every public function and method of actions/, lib/, events/, db/ and server/ annotate
    all its parameters (but self and cls) and its return type?"""
    gaps = []
    for package in TYPED_PACKAGES:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for name, function in public_functions(tree):
                missing = missing_annotations(function, "." in name)
                if missing:
                    gaps.append(f"{path.relative_to(REPO)}:{function.lineno} {name}: {', '.join(missing)}")
    assert gaps == []


def test_public_function_check_finds_a_gap():
    """Does the annotation check see a missing parameter or return annotation (so that the check
    above can fail), and leave self alone?"""
    tree = ast.parse("def f(a: int, b) -> None: ...\n"
                     "class C:\n"
                     "    def m(self, a: int): ...\n"
                     "    def _private(self, a): ...\n"
                     "def _helper(a): ...\n")
    found = {name: missing_annotations(node, "." in name) for name, node in public_functions(tree)}
    assert found == {"f": ["b"], "C.m": ["return"]}


def test_mypy_passes_on_the_package():
    """Does `mypy chat_appliance` (setup.cfg's [mypy] settings) report no error?"""
    pytest.importorskip("mypy")
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    environment.pop("MYPY_CACHE_DIR", None)
    # mypy's own incremental cache, .mypy_cache in the checkout (ignored by git), the one a plain
    # `mypy chat_appliance` there uses too: the first run checks everything (tens of seconds),
    # later ones only the modules that changed and those that depend on them (a second or so).
    # mypy checks each cached module against its source (size, mtime, hash), against the
    # installed libraries and against the settings, so the answer is the one a fresh run gives.
    # Not the daemon (dmypy): it would leave a server running after the test.
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(REPO / ".mypy_cache"),
                             "chat_appliance"], cwd=REPO, env=environment, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
