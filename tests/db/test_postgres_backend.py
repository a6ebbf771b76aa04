"""What only the PostgreSQL backend has: a connection pool sized by configuration."""

import pytest

from chat_appliance.app import create_app
from chat_appliance.models import database

from ..support import pg

pytestmark = pytest.mark.skipif(not pg.ENABLED, reason="needs CHAT_APPLIANCE_DATABASE_URL=postgresql://...")


def test_pool_size_comes_from_configuration(tmp_path, database_url):
    """Does DATABASE_POOL_SIZE cap the process's connections, and DATABASE_POOL_TIMEOUT_SECONDS
    bound the wait for a free one?"""
    create_app({"INSTANCE_PATH": str(tmp_path), "DATABASE_URL": database_url, "DATABASE_POOL_SIZE": 3,
                "DATABASE_POOL_TIMEOUT_SECONDS": 7, "LOG_REQUESTS": False})
    assert database.obj._max_connections == 3
    assert database.obj._wait_timeout == 7
