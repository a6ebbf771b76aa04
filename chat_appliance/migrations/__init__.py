"""Versioned schema migrations, one module per migration (`db.connection.migrate` applies every
version a database lacks).

A migration is a module `NNNN_short_name.py` in this folder: NNNN its version (the number
recorded in schema_migration once applied), a docstring saying what it does and why,
`DESCRIPTION` (a few words, shown while migrating and in exports' migration_status.json) and
`apply(database, backend)`. It states its own schema: models frozen with migrations/frozen.py, or
SQL that runs on SQLite and PostgreSQL alike; never the live models, which move on. A migration
that has shipped is never edited: a change is a new migration.

MIGRATIONS is the list the runner uses: (version, description, apply), by version, found in this
folder when first asked for (`versions()` lists the numbers from the file names alone, so that a
server starting on an up-to-date database imports no migration, which keeps a restart short).
tests/ops/test_migration_schema.py checks that they make the models' schema.
"""

from typing import Any

import importlib
import pkgutil
import re

# The whole module name: four digits, then lower-case words. Anything else in the folder that is
# not a helper is a mistake (a migration that would silently never run).
MODULE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+$")
HELPERS = {"frozen"}


def _module_names(package=__name__, path=__path__) -> dict[int, str]:
    """{version: module name} of the migration modules in the folder, from their names alone,
    importing none of them. Refuses a badly named module and a number used twice."""
    found: dict[int, str] = {}
    for info in pkgutil.iter_modules(path):
        if info.name in HELPERS:
            continue
        match = MODULE_NAME.match(info.name)
        if not match or info.ispkg:
            raise ImportError(f"{package}.{info.name} is not a migration: name it NNNN_short_name.py")
        version = int(match.group(1))
        if version in found:
            raise ImportError(f"two migrations numbered {version:04d}: {found[version]} and {info.name}"
                              " (renumber the one merged last to the next free number)")
        found[version] = info.name
    return found


def discover(package=__name__, path=__path__):
    """(version, description, apply) of every migration module in the package, by version.
    Refuses a badly named module, a number used twice (_module_names()) and a module without
    DESCRIPTION or apply."""
    found = []
    for version, name in sorted(_module_names(package, path).items()):
        module = importlib.import_module(f"{package}.{name}")
        if not module.__doc__ or not isinstance(getattr(module, "DESCRIPTION", None), str) \
                or not callable(getattr(module, "apply", None)):
            raise ImportError(f"migration {name} needs a docstring, DESCRIPTION and apply(database, backend)")
        found.append((version, module.DESCRIPTION, module.apply))
    return found


def versions(package=__name__, path=__path__) -> set[int]:
    """The version numbers of the migration modules in the folder, from their names alone, importing
    none of them (_module_names())."""
    return set(_module_names(package, path))


def __getattr__(name: str) -> Any:
    """MIGRATIONS, discovered (every migration module imported) on first use."""
    if name == "MIGRATIONS":
        found = globals()["MIGRATIONS"] = discover()
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
