"""`open_store` turns a URL into a store and a broker; the Redis backend explains a missing extra."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import anyio
import pytest

from elicitkit.stores import MemoryBroker, MemoryStore, SQLiteStore, open_store
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("url", [None, "memory://"])
async def test_no_url_or_memory_opens_the_memory_store(url: str | None) -> None:
    store, broker = open_store(url)

    assert isinstance(store, MemoryStore)
    assert isinstance(broker, MemoryBroker)


async def test_a_relative_sqlite_url_opens_a_file_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store, broker = open_store("sqlite:///state.db")
    try:
        assert isinstance(store, SQLiteStore)
        assert isinstance(broker, MemoryBroker)
        assert store.path == "state.db"
        assert (tmp_path / "state.db").exists()
    finally:
        await store.aclose()


async def test_an_absolute_sqlite_url_takes_four_slashes(tmp_path: Path) -> None:
    store, _ = open_store(f"sqlite:///{tmp_path}/state.db")  # tmp_path starts with "/"
    try:
        assert isinstance(store, SQLiteStore)
        assert store.path == f"{tmp_path}/state.db"
        assert (tmp_path / "state.db").exists()
    finally:
        await store.aclose()


async def test_a_redis_url_opens_the_redis_store_and_broker(redis_server: RedisServer) -> None:
    from elicitkit.stores.redis import RedisBroker, RedisStore

    store, broker = open_store(redis_server.url)
    try:
        assert isinstance(store, RedisStore)
        assert isinstance(broker, RedisBroker)
        await store.put_run("run-1", "node-a", b"record", 4e9)
        assert await store.get_run("run-1") == ("node-a", b"record")
        await store.delete_run("run-1")
    finally:
        await store.aclose()
        await broker.aclose()


async def test_a_burst_of_more_redis_commands_than_pooled_connections_waits_for_one_instead_of_failing(
    redis_server: RedisServer,
) -> None:
    store, broker = open_store(f"{redis_server.url}?max_connections=2")
    try:
        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(store.put_run, f"burst-{i}", "node-a", b"record", 4e9)
        assert [await store.get_run(f"burst-{i}") for i in range(50)] == [("node-a", b"record")] * 50
    finally:
        for i in range(50):
            await store.delete_run(f"burst-{i}")
        await store.aclose()
        await broker.aclose()


async def test_a_redis_cluster_url_opens_the_cluster_store_and_broker(redis_cluster: RedisCluster) -> None:
    from elicitkit.stores.redis_cluster import RedisClusterBroker, RedisClusterStore

    store, broker = open_store(redis_cluster.url)
    try:
        assert isinstance(store, RedisClusterStore)
        assert isinstance(broker, RedisClusterBroker)
        await store.put_run("run-1", "node-a", b"record", 4e9)
        assert await store.get_run("run-1") == ("node-a", b"record")
        await store.delete_run("run-1")
    finally:
        await store.aclose()
        await broker.aclose()


def test_the_standalone_redis_classes_refuse_a_cluster_url_and_say_which_to_use() -> None:
    from elicitkit.stores.redis import RedisBroker, RedisStore

    for backend in (RedisStore, RedisBroker):
        with pytest.raises(ValueError, match="RedisClusterStore"):
            backend("redis+cluster://127.0.0.1:7000")


@pytest.mark.parametrize("url", ["postgres://localhost/db", "state.db", "sqlite://", "sqlite:///", "memory://x"])
def test_a_url_no_backend_handles_is_refused_with_the_supported_ones(url: str) -> None:
    with pytest.raises(ValueError, match=r"memory://|sqlite:///"):
        open_store(url)


def test_the_redis_backend_without_redis_py_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "redis" or m.startswith("redis.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "redis", None)
    for name in [m for m in sys.modules if m.startswith(("elicitkit.stores.redis", "elicitkit.stores._redis"))]:
        monkeypatch.delitem(sys.modules, name)  # (the store, the broker, and what they share)

    with pytest.raises(ImportError, match=r"pip install 'elicitkit\[redis\]'"):
        importlib.import_module("elicitkit.stores.redis")
