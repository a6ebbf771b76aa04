"""What the import contracts cannot say: where function-local imports are allowed, and that views
write no query. The floors themselves are import-linter contracts in setup.cfg, which
tests/structure/test_import_contracts.py checks (docs/architecture.md describes them).
"""

import ast
from pathlib import Path

PACKAGE = "chat_appliance"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE

# Function-local imports of the package's own modules are allowed only where they are the point:
# the command line loads only what a command needs, and backends/__init__ loads only the engine in
# use (so the other engine's driver need not be installed).
LOCAL_IMPORTS_ALLOWED = ("chat_appliance.cli", "chat_appliance.db.backends")
# Modules that any module may import inside a function, so that a server loads them when a request
# first needs them and not at start-up (start-up time and idle memory). Each is heavy and
# sits below everything that loads it lazily; test_lazy_modules_import_none_of_their_loaders
# checks that no cycle hides behind such an import.
LAZY_TARGETS = (
    # Sign-in through LDAP or OpenID Connect (ldap3, Authlib) and the accounts it creates: at the
    # first such sign-in, so that a restarted server answers /server_settings without them.
    "chat_appliance.actions.external_auth",
    "chat_appliance.clients.ldap_directory",
    "chat_appliance.clients.oidc",
    "chat_appliance.markdown.engine",  # Python-Markdown, Pygments, nh3, dateutil: at the first render
    "chat_appliance.markdown.emoji",  # the emoji table: at the first emoji check
    "chat_appliance.markdown.fastlex",  # with Pygments: at the first code block
    "chat_appliance.ops.transfer.exporter",  # for an export only
    # A long-idle person's catch-up (it loads every model): at their first request back.
    "chat_appliance.actions.soft_deactivation",
    # The scheduler's delivery (and with it the whole send path): when a message falls due.
    "chat_appliance.actions.scheduled_messages",
    # The schedule's reader, whose model loads all the models: at the scheduler's first pass.
    "chat_appliance.lib.scheduled_messages",
    # A shard's machinery (app.join_shards): only when the server runs as one of several.
    "chat_appliance.events.shards",
    "chat_appliance.web.shared_rate_limit",
    # A queue's narrow check (events/queues.py): with the first queue that has a narrow.
    "chat_appliance.lib.narrow",
    # Outgoing mail (app.build_mailer): with the first message to send.
    "chat_appliance.clients.send_email",
)


def module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path):
    """[(imported module, line, is function-local)] of one source file, relative imports resolved;
    imports for the type checker only (under `if TYPE_CHECKING:`) left out."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    found = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                # Imports for the type checker only never run.
                for other in child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]), local)
                continue
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


def test_no_function_local_imports_of_the_package():
    """Are the package's own modules imported at module level (so that cycles cannot hide in
    functions), except in the command line and the backend loader?"""
    found = [f"{source}:{line} imports {target} inside a function"
             for source, imports in GRAPH.items() if not within(source, LOCAL_IMPORTS_ALLOWED)
             for target, line, local in imports if local and within(target, (PACKAGE,))
             and target not in LAZY_TARGETS]
    assert found == []


# The model modules code outside chat_appliance/models may import directly; the others load
# together through the package (models/__init__.py), so that every backref exists when any
# model is in use.
DIRECT_MODEL_MODULES = ("chat_appliance.models.base", "chat_appliance.models.realm", "chat_appliance.models.limits",
                        "chat_appliance.models.shards")


def test_model_modules_are_reached_through_the_package():
    """Does code outside the models import only the base, the organization, the limits and the
    shards' tables from their own modules, and every other model through chat_appliance.models?"""
    found = [f"{source}:{line} imports {target}" for source, imports in GRAPH.items()
             if not within(source, ("chat_appliance.models",))
             for target, line, _local in imports
             if within(target, ("chat_appliance.models",)) and target != "chat_appliance.models"
             and target not in DIRECT_MODEL_MODULES]
    assert found == []


def module_level_closure(module):
    """Every package module that importing `module` imports, through module-level imports only."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        for target, _line, local in GRAPH.get(current, ()):
            if local or not within(target, (PACKAGE,)):
                continue
            # `from chat_appliance.x import name` may name a submodule or an attribute: take both.
            for candidate in (target, target.rsplit(".", 1)[0]):
                if candidate in GRAPH and candidate not in seen:
                    seen.add(candidate)
                    todo.append(candidate)
    return seen


def test_lazy_modules_import_none_of_their_loaders():
    """Does no module loaded lazily (LAZY_TARGETS) import, at module level and however indirectly,
    a module that loads it inside a function? Such a cycle would only show at the first request."""
    found = []
    for target in LAZY_TARGETS:
        assert target in GRAPH, target
        closure = module_level_closure(target)
        # A package loading its own submodule on first use (PEP 562 __getattr__) is no cycle: the
        # package is always imported before its submodules.
        loaders = {source for source, imports in GRAPH.items()
                   for imported, _line, local in imports if local and imported == target
                   and not target.startswith(source + ".")}
        found.extend(f"{target} imports its lazy loader {loader}" for loader in sorted(loaders & closure))
    assert found == []


def test_the_walker_sees_local_imports():
    """Does the import walker find function-local imports (so that the test above cannot pass
    vacuously)?"""
    assert ("chat_appliance.ops.backup", True) in {
        (target, local) for target, _line, local in GRAPH["chat_appliance.cli.ops"]}
    assert ("chat_appliance.actions.messages", False) in {
        (target, local) for target, _line, local in GRAPH["chat_appliance.api.messages"]}


QUERY_OR_TRANSACTION = ("write_transaction", ".select(", ".get_or_none(", ".get_by_id(", "query_rows(", "raw_select(",
                        ".insert(", ".create(", ".save()", ".delete_instance(", "execute_sql(")


def test_views_write_no_query_or_transaction():
    """Does no module of api/ run a query or open a transaction itself (they belong to actions/ and
    lib/; setup.cfg's contracts keep peewee itself out of api/)?"""
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted((ROOT / "api").glob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if any(marker in line for marker in QUERY_OR_TRANSACTION)]
    assert found == []


def test_test_modules_share_helpers_only_through_support_and_fixtures():
    """Does no test module import from another test module or from conftest (shared helpers live
    in tests/support/, shared fixtures in conftest.py)?"""
    tests = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("tests.")):
                parts = (node.module or "").split(".") + [alias.name for alias in node.names]
                if any(part.startswith("test_") or part == "conftest" for part in parts):
                    found.append(f"{path.relative_to(tests)}:{node.lineno} imports {node.module}")
    assert found == []
