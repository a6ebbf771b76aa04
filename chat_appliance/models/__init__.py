"""Peewee models, split by domain. Import them from here, not from their modules.

The base and the organization (Realm) load with the package. The other model modules load
together, on the first use of any of their names here (models/everything.py, the one list of
those names): a restarted server answers its first request, GET /server_settings, without them,
and whenever one model is in use all are, so that every backref they add exists. Outside this
package, only the base, the organization's module, the limits and the shards' tables are imported
directly (tests/structure/test_layers.py)."""

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

from chat_appliance.models.base import MAX_DATABASE_INT, BaseModel, JSONField, database, in_ids, now
from chat_appliance.models.realm import EDIT_HISTORY_POLICIES, Realm, instance_realm

# What the package loads with itself: the names imported above (not its submodules, nor the tools
# of this file).
_CORE = tuple(name for name, value in dict(globals()).items()
              if not name.startswith("_") and not isinstance(value, ModuleType)
              and name not in ("import_module", "ModuleType", "TYPE_CHECKING"))

if TYPE_CHECKING:  # for mypy: what __getattr__ gives, read from its one declaration
    from chat_appliance.models.everything import *


def __getattr__(name):
    """A name of models/everything.py (importing it loads every model module), or __all__ (the
    core names, then those)."""
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Importing `everything` while another thread imports it waits until it is complete.
    everything = import_module(f"{__name__}.everything")
    if name == "__all__":
        value = [*_CORE, *everything.NAMES]
    elif name in everything.NAMES:
        value = getattr(everything, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found directly from now on
    return value
