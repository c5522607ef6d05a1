"""Two fastmcp nodes on one real Redis: a round's answer or the model's answer lands on the node that does not hold
the run, and reaches the one that does; a killed owner's run is replayed by the other. Each node is a `FastMCP`
served by its own HTTP app on 127.0.0.1 (in this process, or as a process of its own: tests/node_app.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastmcp")

from fastmcp import Context, FastMCP
from mcp import Client
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation
from elicitkit.testing import serve_app
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, pending_id, send_answer, text_of
from tests.test_cluster import CODE_WORD, Node, assert_provisioned, provision, running

pytestmark = pytest.mark.anyio

SECRET = "fastmcp-nodes-test-secret-0123456789abcdef"


def fastmcp_node(store: str, node: str, log: list[str]) -> Elicitation:
    """A node named like its twin (so `requestState` opens on both); `log` records where each stretch ran."""
    server = FastMCP("fastmcp-cluster")
    hitl = Elicitation(server, store=store, node_id=node, secret=SECRET, forward_timeout=1, lease=3)

    @server.tool
    async def provision(name: str, ctx: Context) -> str:
        log.append(f"started on {node}")
        go = await hitl.text(ctx, f"Go for {name}?")
        assert isinstance(go, Accepted)
        await hitl.step(ctx, "create", lambda: log.append(f"created {name} on {node}"))
        size = await hitl.text(ctx, f"Size for {name}?")
        assert isinstance(size, Accepted)
        return f"{name} {go.data} {size.data} on {node}"

    return hitl


@asynccontextmanager
async def two_nodes(redis_server: RedisServer, log: list[str]) -> AsyncIterator[tuple[str, str]]:
    nodes = [fastmcp_node(redis_server.url, name, log) for name in ("node-a", "node-b")]
    async with AsyncExitStack() as stack:
        for hitl in nodes:
            stack.push_async_callback(hitl.aclose)  # once its server has stopped
        urls = [f"{await stack.enter_async_context(serve_app(hitl.http_app()))}/mcp" for hitl in nodes]
        yield urls[0], urls[1]


async def test_a_retry_landing_on_the_other_fastmcp_node_reaches_the_owner(redis_server: RedisServer) -> None:
    log: list[str] = []
    web = Rounds("provision", {"name": "web"})
    async with two_nodes(redis_server, log) as (a, b), by_hand(a) as on_a, by_hand(b) as on_b:
        first = await web.start(on_a)
        second = await web.answer(on_b, first, "yes")  # lands on B; A holds the run
        assert isinstance(second, InputRequiredResult)
        final = await web.answer(on_b, second, "large")
    assert isinstance(final, CallToolResult)
    assert text_of(final) == "web yes large on node-a"
    assert log == ["started on node-a", "created web on node-a"]  # the body ran once, on its owner


async def test_a_fallback_answer_landing_on_the_other_fastmcp_node_reaches_the_owner(
    redis_server: RedisServer,
) -> None:
    log: list[str] = []
    async with two_nodes(redis_server, log) as (a, b), Client(a, mode="auto") as on_a, Client(b, mode="auto") as on_b:
        first = await on_a.call_tool("provision", {"name": "db"})
        second = await send_answer(on_b, pending_id(first), "accept", {"value": "go"})
        assert (second.meta or {})["elicitationPending"]["message"] == "Size for db?"
        final = await send_answer(on_a, pending_id(second), "accept", {"value": "small"})
    assert text_of(final) == "db go small on node-a"
    assert log == ["started on node-a", "created db on node-a"]


def fastmcp_pair(store: str, effects: Path) -> tuple[Node, Node]:
    """Two node processes (tests/node_app.py) serving their tools from a fastmcp `FastMCP`."""
    nodes = Node(store, "node-a", effects), Node(store, "node-b", effects)
    for node in nodes:
        node.args += ["--framework", "fastmcp"]
    return nodes


async def test_the_other_fastmcp_node_replays_a_killed_owners_run_and_the_step_runs_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.log"
    a, b = fastmcp_pair(redis_server.url, effects)
    cache = provision("cache")
    async with running(a, b), by_hand(b.url) as on_b:
        async with by_hand(a.url) as on_a:
            first = await cache.start(on_a)
            second = await cache.answer(on_a, first, CODE_WORD)  # A runs the step, then asks again
            assert isinstance(second, InputRequiredResult)
        a.kill()
        final = await cache.answer(on_b, second, "small")
    assert_provisioned(final, effects, "cache", "small", finished_on="node-b", created_on="node-a")
