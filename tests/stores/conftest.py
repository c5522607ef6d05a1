"""Every store and broker the contract suite runs against: memory, SQLite, a real Redis, a real Valkey and a real
Redis Cluster."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import pytest

from elicitkit.stores import Broker, MemoryBroker, MemoryStore, SQLiteStore, Store
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer

# The stores whose server drops expired keys itself (Redis's protocol), so that a sweep finds none of them.
EXPIRING = frozenset({"redis", "valkey", "redis-cluster"})


def unique_prefix() -> str:
    """Tests share one Redis; each keeps to its own keys and channels."""
    return f"test-{uuid.uuid4().hex}:"


def shared_redis(request: pytest.FixtureRequest) -> dict[str, str]:
    """Where the session's one Redis is, and a key prefix of this test's own.

    Only Redis-backed parameters ask for the server, so the others never start it.
    """
    server: RedisServer = request.getfixturevalue("redis_server")
    return {"url": server.url, "prefix": unique_prefix()}


def shared_valkey(request: pytest.FixtureRequest) -> dict[str, str]:
    """Where the session's one Valkey is, and a key prefix of this test's own."""
    server: RedisServer = request.getfixturevalue("valkey_server")
    return {"url": server.url, "prefix": unique_prefix()}


def shared_redis_cluster(request: pytest.FixtureRequest) -> dict[str, str]:
    """Where the session's one Redis Cluster is, and a key prefix of this test's own."""
    cluster: RedisCluster = request.getfixturevalue("redis_cluster")
    return {"url": cluster.url, "prefix": unique_prefix()}


@pytest.fixture(params=["memory", "sqlite", "redis", "valkey", "redis-cluster"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    opened: Store
    if store_kind == "memory":
        opened = MemoryStore()
    elif store_kind == "sqlite":
        opened = SQLiteStore(tmp_path / "state.db")
    elif store_kind in ("redis", "valkey"):
        from elicitkit.stores.redis import RedisStore

        opened = RedisStore(**(shared_redis(request) if store_kind == "redis" else shared_valkey(request)))
    else:
        from elicitkit.stores.redis_cluster import RedisClusterStore

        opened = RedisClusterStore(**shared_redis_cluster(request))
    async with aclosing(opened):
        yield opened


@pytest.fixture(params=["memory", "redis", "valkey", "redis-cluster"])
def broker_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def broker(broker_kind: str, request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    opened: Broker
    if broker_kind == "memory":
        opened = MemoryBroker()
    elif broker_kind in ("redis", "valkey"):
        from elicitkit.stores.redis import RedisBroker

        opened = RedisBroker(**(shared_redis(request) if broker_kind == "redis" else shared_valkey(request)))
    else:
        from elicitkit.stores.redis_cluster import RedisClusterBroker

        opened = RedisClusterBroker(**shared_redis_cluster(request))
    async with aclosing(opened):
        yield opened
