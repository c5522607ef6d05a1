"""Bugs found in review, each pinned by the behaviour users rely on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit import Elicitation
from tests.scenes import Rounds, by_hand, new_server, pending_id, reached, send_answer, settled, text_of, watched_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def stateless_lifespan(server: Any) -> AsyncIterator[None]:
    yield  # setup/teardown only: every client gets the same (None) lifespan state


async def test_one_client_leaving_does_not_cancel_another_clients_run() -> None:
    server = MCPServer("t", lifespan=stateless_lifespan)
    Elicitation(server)
    started, release, b_up, b_leave, b_gone, a_done = (anyio.Event() for _ in range(6))
    results: list[CallToolResult] = []

    @server.tool()
    async def work(ctx: Context) -> str:
        started.set()
        await release.wait()
        return "done"

    async def client_b() -> None:
        async with by_hand(server):
            b_up.set()
            await b_leave.wait()
        b_gone.set()

    async with by_hand(server) as a:

        async def call() -> None:
            results.append(await a.call_tool("work", {}))
            a_done.set()

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client_b)
                await b_up.wait()
                tg.start_soon(call)
                await started.wait()
                b_leave.set()
                await b_gone.wait()
                release.set()
                await a_done.wait()
    assert [c.text for c in results[0].content if isinstance(c, TextContent)] == ["done"]


async def test_a_retry_racing_the_runs_expiry_gets_a_clear_error_instead_of_hanging() -> None:
    server, hitl = new_server(run_expiry=0.1)
    unwinding, release = anyio.Event(), anyio.Event()

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Go?")
        finally:
            unwinding.set()
            with anyio.CancelScope(shield=True):
                await release.wait()  # cleanup that awaits, e.g. releasing a lock
        return "done"

    async with by_hand(server) as client:
        first = await Rounds("ask").start(client)
        with anyio.fail_after(5):
            await unwinding.wait()
            with pytest.raises(MCPError, match="ended before finishing") as info:
                await Rounds("ask").answer(client, first, True)
            release.set()
    assert info.value.error.data == {"reason": "elicitation_ended"}


async def test_a_second_elicitation_on_the_same_server_is_refused() -> None:
    server = MCPServer("t")
    Elicitation(server)
    with pytest.raises(ValueError, match="already has an Elicitation attached"):
        Elicitation(server)


async def test_runs_are_freed_when_the_sdks_request_state_ttl_runs_out() -> None:
    # elicitkit's run_expiry (600 s by default) is capped at the SDK's requestState lifetime.
    server = MCPServer("t", request_state_security=RequestStateSecurity.ephemeral(ttl=0.2))
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Go?"), server)
    async with by_hand(server) as client:
        await Rounds("ask").start(client)
        await reached(scene.cancelled)
        await settled(scene.hitl)


async def test_a_sibling_that_awaits_before_asking_still_joins_the_same_round() -> None:
    server, hitl = new_server()

    @server.tool()
    async def both(ctx: Context) -> str:
        async def late() -> None:
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            await hitl.confirm(ctx, "Late?")

        async with anyio.create_task_group() as tg:
            tg.start_soon(hitl.confirm, ctx, "Early?")
            tg.start_soon(late)
        return "done"

    async with by_hand(server) as client:
        first = await Rounds("both").start(client)
    assert sorted(r.params.message for r in (first.input_requests or {}).values()) == ["Early?", "Late?"]


async def test_without_a_secret_another_principal_still_cannot_answer_on_a_node_without_the_run(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_types import Implementation

    from elicitkit import _mcp
    from tests.test_durable import node

    def principal_from_client_name(rctx: Any) -> str | None:  # stands in for OAuth
        params = rctx.session.client_params
        return params.client_info.name if params is not None and params.client_info is not None else None

    monkeypatch.setattr(_mcp, "principal", principal_from_client_name)
    monkeypatch.delenv("ELICITKIT_SECRET", raising=False)
    store = f"sqlite:///{tmp_path / 'state.db'}"
    effects: list[str] = []
    owner, _ = node(store, effects, plaintext_store=True)
    other, _ = node(store, effects, plaintext_store=True)
    async with (
        Client(owner, mode="legacy", client_info=Implementation(name="alice", version="1")) as alice,
        Client(other, mode="legacy", client_info=Implementation(name="mallory", version="1")) as mallory,
    ):
        first = await alice.call_tool("order", {"item": "tea"})
        stolen = await send_answer(mallory, pending_id(first), "accept", {"value": "999"})
    assert stolen.is_error
    assert "no open question" in text_of(stolen)
    assert effects == []


async def test_the_stored_run_outlives_the_wait_after_every_round_and_is_renewed_before_it_could_lapse(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3
    import time

    from elicitkit._engine import records, tenure
    from tests.test_durable import SECRET, node

    path = tmp_path / "state.db"
    server, _ = node(f"sqlite:///{path}", [], secret=SECRET, run_expiry=300.0)
    clock = {"skew": 0.0}

    def now() -> float:
        return time.time() + clock["skew"]

    # The engine's own clock runs ahead on demand (the store's keeps real time), so a renewal is due without sleeping.
    monkeypatch.setattr(tenure, "time", type("Clock", (), {"time": staticmethod(now)}))
    monkeypatch.setattr(records, "time", type("Clock", (), {"time": staticmethod(now)}))

    def expiry() -> float:
        db = sqlite3.connect(path)
        try:
            # The newest record: the previous call's may still be on its way out.
            (value,) = db.execute("SELECT expires_at FROM runs ORDER BY rowid DESC LIMIT 1").fetchone()
            return float(value)
        finally:
            db.close()

    order = Rounds("order", {"item": "tea"})
    async with by_hand(server) as client:
        # Back to back, a round leaves the record as it was: it still outlives the wait for the next request.
        asked = await order.start(client)
        first = await anyio.to_thread.run_sync(expiry)
        assert first - now() >= 300.0
        then = await order.answer(client, asked, "3")
        assert isinstance(then, InputRequiredResult)
        assert await anyio.to_thread.run_sync(expiry) == first
        assert isinstance(await order.answer(client, then, True), CallToolResult)

        # Later, when what is left of the record is less than a whole wait, the next round renews it.
        asked = await order.start(client)
        first = await anyio.to_thread.run_sync(expiry)
        clock["skew"] = 200.0
        assert first - now() < 300.0
        then = await order.answer(client, asked, "3")
        assert isinstance(then, InputRequiredResult)
        second = await anyio.to_thread.run_sync(expiry)
        assert second > first
        assert second - now() >= 300.0
        assert isinstance(await order.answer(client, then, True), CallToolResult)


async def test_a_heartbeat_survives_a_store_outage() -> None:
    from elicitkit._crypto import PlainSealer
    from elicitkit._engine.cluster import Cluster
    from elicitkit.stores.memory import MemoryBroker, MemoryStore

    beats = anyio.Event()
    calls: list[str] = []

    class Flaky(MemoryStore):
        async def heartbeat(self, node: str, expires_at: float) -> None:
            calls.append(node)
            if len(calls) == 1:
                raise ConnectionError("store down")
            beats.set()
            await super().heartbeat(node, expires_at)

    store = Flaky()
    cluster = Cluster(store, MemoryBroker(), PlainSealer(), "n1")
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cluster.heartbeat, 0.03)
            await beats.wait()
            tg.cancel_scope.cancel()
    assert await store.is_alive("n1")
    assert len(calls) >= 2
