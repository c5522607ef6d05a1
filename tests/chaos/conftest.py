"""Fixtures of the chaos tests: a Redis of each test's own (tests kill and restart it), two nodes on it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.nodes import Node
from tests.redis_server import MISSING, RedisServer


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server for this test alone, without persistence."""
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING, pytrace=False)
    server = RedisServer(tmp_path / "redis")
    server.start_blocking()
    try:
        yield server
    finally:
        server.stop_blocking()


@pytest.fixture
def effects(tmp_path: Path) -> Path:
    """The file every node appends its side effects to, one line each."""
    return tmp_path / "effects.log"


@pytest.fixture
def gates(tmp_path: Path) -> Path:
    """Where a test creates the file that lets a gated step go on (`open_gate`)."""
    path = tmp_path / "gates"
    path.mkdir()
    return path


def open_gate(gates: Path, name: str) -> None:
    """Let `provision`'s step for `name` perform its side effect, on whichever node it waits."""
    (gates / name).touch()


def pair(redis_url: str, effects: Path, gates: Path, framework: str = "mcp") -> tuple[Node, Node]:
    return Node(redis_url, "node-a", effects, gates, framework), Node(redis_url, "node-b", effects, gates, framework)
