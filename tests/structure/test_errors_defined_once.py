"""Every error a client can get is defined in one module: chat_appliance/lib/errors.py holds each
JsonableError subclass, so that a newcomer finds all of Zulip's error answers (codes, statuses,
texts) in one file and no module grows its own variant of one."""

import ast
from pathlib import Path

from chat_appliance.lib import errors

ROOT = Path(__file__).resolve().parents[2] / "chat_appliance"
HOME = ROOT / "lib" / "errors.py"


def class_bases(path):
    """(class name, names of its bases, line) for every class the module defines, nested or not."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            yield node.name, [ast.unparse(base).rpartition(".")[2] for base in node.bases], node.lineno


def test_jsonable_errors_are_defined_only_in_lib_errors():
    """Is every subclass of JsonableError (directly or through another one) defined in
    lib/errors.py, and nowhere else in the package?"""
    defined = {name: obj for name, obj in vars(errors).items()
               if isinstance(obj, type) and issubclass(obj, errors.JsonableError)}
    elsewhere = []
    for path in sorted(ROOT.rglob("*.py")):
        if path == HOME:
            continue
        for name, bases, line in class_bases(path):
            if any(base in defined for base in bases):
                elsewhere.append(f"{path.relative_to(ROOT.parent)}:{line} {name}({', '.join(bases)})")
    assert elsewhere == []


def test_error_names_say_what_went_wrong_once():
    """Does each error class have its own name (no two classes, here or elsewhere in the
    package, share one, such as two EmailNotConfiguredError meaning different things)?"""
    names = {}
    for path in sorted(ROOT.rglob("*.py")):
        for name, bases, _line in class_bases(path):
            if name.endswith("Error"):
                names.setdefault(name, []).append(str(path.relative_to(ROOT.parent)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
