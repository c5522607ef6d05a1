"""Shared fixtures: every engine test runs on both protocol eras; Redis tests share one real server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import anyio
import pytest

from tests.redis_server import MISSING, RedisServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    """`legacy` speaks 2025-11-25 (elicitation/create); `auto` negotiates 2026-07-28 (InputRequiredResult)."""
    return str(request.param)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a free port for the whole session; tests isolate themselves by key prefix."""
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING, pytrace=False)
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    # A session fixture outlives every test's event loop, so it drives the server from loops of its own.
    anyio.run(server.start)
    try:
        yield server
    finally:
        anyio.run(server.stop)
