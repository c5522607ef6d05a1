"""A tampered `requestState` (2026-07-28): the client holds it between rounds, so it is attacker-controlled.

elicitkit's state is sealed by the SDK under elicitkit's secret, bound to the principal, the tool and its
arguments, and works once. Altered, truncated, unsealed, expired, used, or sealed by another deployment,
it is refused with `Invalid or expired requestState` (or `already used`), the body does not move, and the
genuine state still answers — on the node that holds the run and on another node sharing its Redis.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager

import pytest
from mcp import MCPError
from mcp.server import request_state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, new_server, serving, text_of
from tests.security.test_links_and_tokens import altered

pytestmark = pytest.mark.anyio

SECRET = "tampered-state-secret-0123456789abcdef012345"
SHIP = Rounds("ship", {"version": "1"})
TAMPER: dict[str, Callable[[str], str]] = {
    "a character changed in the middle": altered,
    "a character changed near the end": lambda s: s[:-3] + ("A" if s[-3] != "A" else "B") + s[-2:],
    "truncated": lambda s: s[: len(s) // 2],
    "empty": lambda s: "",
    "elicitkit's run and nonce, unsealed": lambda s: "ek1.run.nonce",
}


def ship_server(**options: object) -> tuple[Elicitation, list[str]]:
    """`ship` asks twice; `went` records each stretch of its body that ran."""
    server, hitl = new_server("tampered-state", timeout=20, **options)
    went: list[str] = []

    @server.tool()
    async def ship(version: str, ctx: Context) -> str:
        went.append("started")
        first = await hitl.confirm(ctx, f"Ship {version}?")
        went.append("confirmed")
        second = await hitl.text(ctx, "Release note?")
        assert isinstance(first, Accepted) and isinstance(second, Accepted)
        return f"{version} shipped={first.data} note={second.data}"

    return hitl, went


def asks(result: CallToolResult | InputRequiredResult, message: str) -> InputRequiredResult:
    assert isinstance(result, InputRequiredResult), result
    assert [r.params.message for r in (result.input_requests or {}).values()] == [message]
    return result


@pytest.mark.parametrize("attack", list(TAMPER))
async def test_a_tampered_request_state_is_refused_and_the_genuine_one_still_answers(attack: str) -> None:
    hitl, went = ship_server()
    async with serving(hitl) as url, by_hand(url) as client:
        first = await SHIP.start(client)
        assert first.request_state
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await SHIP.answer(client, first, True, request_state=TAMPER[attack](first.request_state))
        assert went == ["started"]
        asks(await SHIP.answer(client, first, True), "Release note?")
    assert went == ["started", "confirmed"]


async def test_a_used_request_state_is_refused_and_the_body_never_resumes_twice() -> None:
    hitl, went = ship_server()
    async with serving(hitl) as url, by_hand(url) as client:
        first = await SHIP.start(client)
        second = asks(await SHIP.answer(client, first, True), "Release note?")
        with pytest.raises(MCPError, match="requestState was already used"):
            await SHIP.answer(client, first, False)
        done = await SHIP.answer(client, second, "fine")
    assert isinstance(done, CallToolResult)
    assert text_of(done) == "1 shipped=True note=fine"
    assert went == ["started", "confirmed"]


async def test_an_expired_request_state_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    hitl, went = ship_server()
    async with serving(hitl) as url, by_hand(url) as client:
        first = await SHIP.start(client)
        later = time.time() + 601  # past the SDK's default TTL of 600 s, by the SDK's clock only
        monkeypatch.setattr(request_state, "time", type("Clock", (), {"time": staticmethod(lambda: later)}))
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await SHIP.answer(client, first, True)
    assert went == ["started"]


@asynccontextmanager
async def two_nodes(url: str) -> AsyncIterator[tuple[str, str, list[str]]]:
    """Two nodes of one deployment on a real Redis (same secret); yields their MCP URLs and `ship`'s trail."""
    a, went = ship_server(store=url, secret=SECRET, node_id="node-a")
    b, _ = ship_server(store=url, secret=SECRET, node_id="node-b")
    async with AsyncExitStack() as stack:
        stack.push_async_callback(a.aclose)
        stack.push_async_callback(b.aclose)
        yield await stack.enter_async_context(serving(a)), await stack.enter_async_context(serving(b)), went


@pytest.mark.parametrize("attack", ["a character changed in the middle", "truncated"])
async def test_a_tampered_request_state_landing_on_another_node_is_refused_there(
    redis_server: RedisServer, attack: str
) -> None:
    async with two_nodes(redis_server.url) as (url_a, url_b, went), by_hand(url_a) as on_a, by_hand(url_b) as on_b:
        first = await SHIP.start(on_a)
        assert first.request_state
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await SHIP.answer(on_b, first, True, request_state=TAMPER[attack](first.request_state))
        assert went == ["started"]
        asks(await SHIP.answer(on_b, first, True), "Release note?")  # the genuine one, on the other node
    assert went == ["started", "confirmed"]


async def test_a_request_state_sealed_by_another_deployment_is_refused(redis_server: RedisServer) -> None:
    theirs, _ = ship_server(secret="another-deployments-secret-0123456789abcdef")
    async with (
        two_nodes(redis_server.url) as (url_a, _, went),
        serving(theirs) as url_theirs,
        by_hand(url_a) as ours,
        by_hand(url_theirs) as elsewhere,
    ):
        first = await SHIP.start(ours)
        foreign = await SHIP.start(elsewhere)
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await SHIP.answer(ours, first, True, request_state=foreign.request_state)
        assert went == ["started"]
        asks(await SHIP.answer(ours, first, True), "Release note?")
