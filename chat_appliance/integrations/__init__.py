"""Incoming webhook integrations: each module of this package that defines INTEGRATION (an
integrations.base.Integration) is one integration, found by registry() without being listed
anywhere. Adding one is adding its module, its fixtures (tests/support/data/webhooks/<name>/) and its
test file.

This package is pure: it knows nothing of HTTP frameworks or the database.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from chat_appliance.integrations.base import Integration


@lru_cache(maxsize=1)
def registry() -> dict[str, Integration]:
    """Every integration by its URL name, in name order (imported on first use)."""
    found = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        integration = getattr(module, "INTEGRATION", None)
        if isinstance(integration, Integration):
            found[integration.name] = integration
    return dict(sorted(found.items()))


__all__ = ["Integration", "registry"]
