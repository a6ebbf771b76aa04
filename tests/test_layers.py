"""The layering of chat_appliance, written as import contracts checked on every test run.

Floors, from the top: the HTTP layer (app.py, api/) parses, checks access and calls actions;
actions/ change state in transactions and publish events; events/ holds the bus, the queues and
the /register state; lib/ and rendering.py are helpers (queries, checks, shapes) that import no
action; markdown/ is a pure renderer; models/, db.py, backends/, runtime.py and config.py are the
ground. cli.py and the pytest plugin sit beside app.py at the top.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = "chat_appliance"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# The HTTP layer, and the modules of lib/ that are HTTP helpers (the request's parameters, Basic
# authentication, the envelope): they read Flask's request, so they belong to it.
HTTP_LAYER = ("chat_appliance.app", "chat_appliance.api", "chat_appliance.cli.main", "chat_appliance.cli.transfer",
              "chat_appliance.testing.pytest_plugin",
              "chat_appliance.web.params", "chat_appliance.web.auth", "chat_appliance.web.response",
              "chat_appliance.web.rate_limit")
FLASK = ("flask", "flask_httpauth")
# Function-local imports of the package's own modules are allowed only where they are the point:
# the command line loads only what a command needs, and backends/__init__ loads only the engine in
# use (so the other engine's driver need not be installed).
LOCAL_IMPORTS_ALLOWED = ("chat_appliance.cli.main", "chat_appliance.cli.transfer", "chat_appliance.db.backends")


def module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path):
    """[(imported module, line, is function-local)] of one source file, relative imports resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    found = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, local) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                found.append((target, child.lineno, local))
                # `from . import x` imports the submodule x.
                found.extend((f"{target}.{alias.name}", child.lineno, local) for alias in child.names
                             if not child.module)
            visit(child, inner)

    visit(tree, False)
    return found


GRAPH = {module_name(path): imports_of(path) for path in sorted(ROOT.rglob("*.py"))}


def within(module, prefixes):
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def violations(importers, forbidden, allowed_importers=()):
    """Imports by modules under `importers` of modules under `forbidden`."""
    return [f"{source}:{line} imports {target}"
            for source, found in GRAPH.items()
            if within(source, importers) and not within(source, allowed_importers)
            for target, line, _local in found if within(target, forbidden)]


LOW_FLOORS = ("chat_appliance.actions", "chat_appliance.events", "chat_appliance.lib", "chat_appliance.lib.rendering",
              "chat_appliance.markdown", "chat_appliance.models", "chat_appliance.db.connection", "chat_appliance.db.backends",
              "chat_appliance.db.runtime", "chat_appliance.config", "chat_appliance.migrations",
              "chat_appliance.integrations", "chat_appliance.ops.sample_data", "chat_appliance.ops.transfer")

CONTRACTS = {
    "nothing below the HTTP layer imports api/ or app.py":
        (LOW_FLOORS, ("chat_appliance.api", "chat_appliance.app", "chat_appliance.cli.main"), HTTP_LAYER),
    "nothing below the HTTP layer imports Flask":
        (LOW_FLOORS, FLASK, HTTP_LAYER),
    "lib/ and rendering.py import no action and no event machinery":
        (("chat_appliance.lib", "chat_appliance.lib.rendering"), ("chat_appliance.actions", "chat_appliance.events"),
         HTTP_LAYER),
    "events/ imports nothing from api/":
        (("chat_appliance.events",), ("chat_appliance.api",), ()),
    "the bus and the queues import no action":
        (("chat_appliance.events.bus", "chat_appliance.events.queues"), ("chat_appliance.actions",), ()),
    "markdown/ is a pure renderer: it imports none of the application":
        (("chat_appliance.markdown",), ("chat_appliance.actions", "chat_appliance.api", "chat_appliance.events",
                                        "chat_appliance.lib", "chat_appliance.models", "chat_appliance.db.connection",
                                        "chat_appliance.lib.rendering"), ()),
    "models/ import only the ground (runtime)":
        (("chat_appliance.models",), ("chat_appliance.actions", "chat_appliance.api", "chat_appliance.events",
                                      "chat_appliance.lib", "chat_appliance.db.connection", "chat_appliance.lib.rendering"), ()),
    "runtime.py imports nothing of the package":
        (("chat_appliance.db.runtime",), (PACKAGE,), ()),
}


@pytest.mark.parametrize("contract", list(CONTRACTS))
def test_import_contract(contract):
    """Does every module keep this layering contract?"""
    importers, forbidden, allowed = CONTRACTS[contract]
    assert violations(importers, forbidden, allowed) == []


def test_no_function_local_imports_of_the_package():
    """Are the package's own modules imported at module level (so that cycles cannot hide in
    functions), except in the command line and the backend loader?"""
    found = [f"{source}:{line} imports {target} inside a function"
             for source, imports in GRAPH.items() if not within(source, LOCAL_IMPORTS_ALLOWED)
             for target, line, local in imports if local and within(target, (PACKAGE,))]
    assert found == []


def test_contracts_see_the_imports():
    """Does the import walker find real imports (so that the contracts above cannot pass vacuously)?"""
    assert ("chat_appliance.actions.messages", True) in {
        (target, True) for target, _line, _local in GRAPH["chat_appliance.api.messages"]}
    assert violations(("chat_appliance.api",), ("chat_appliance.actions",))
    assert violations(("chat_appliance.api",), FLASK)


QUERY_OR_TRANSACTION = ("write_transaction", ".select(", ".get_or_none(", ".get_by_id(", "query_rows(", "raw_select(",
                        ".insert(", ".create(", ".save()", ".delete_instance(", "execute_sql(")


def test_views_write_no_query_or_transaction():
    """Does no module of api/ run a query or open a transaction itself (they belong to actions/ and
    lib/), nor import peewee?"""
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted((ROOT / "api").glob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if any(marker in line for marker in QUERY_OR_TRANSACTION)]
    assert found == []
    assert violations(("chat_appliance.api",), ("peewee", "chat_appliance.models.base")) == []


def test_test_modules_share_helpers_only_through_helpers_and_fixtures():
    """Does no test module import from another test module or from conftest (shared helpers live
    in tests/helpers.py, shared fixtures in conftest.py)?"""
    tests = Path(__file__).resolve().parent
    found = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and (
                    node.module.startswith("test_") or node.module == "conftest"):
                found.append(f"{path.name}:{node.lineno} imports .{node.module}")
    assert found == []
