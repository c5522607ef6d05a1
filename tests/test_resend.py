"""A resent answer is answered as the first was: networks drop, clients retry, nothing is lost or done twice.

A 2026-07-28 retry whose response never reached the client (its connection dropped) is sent again with the
same `requestState` and the same answers: the run has moved on, and the resend gets its next outcome, not
"requestState already used". The same `requestState` with other answers is still refused. The model's
`sendElicitationResult`, a page and a channel behave alike.
"""

from __future__ import annotations

import gc
import json
import uuid
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation
from elicitkit._engine.ended import Ended, EndedRuns, frozen
from elicitkit.channels.base import Responder, Via
from elicitkit.stores.memory import MemoryStore
from elicitkit.stores.redis import RedisBroker, RedisStore
from elicitkit.testing import serve_http
from tests.channels.recording import RecordingChannel
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, pending_id, send_answer, text_of

pytestmark = pytest.mark.anyio

SECRET = "resend-secret-0123456789abcdef0123456789abcdef"


def provisioner(**options: Any) -> tuple[MCPServer, Elicitation, list[str]]:
    """`provision` asks, performs one side effect, asks again; `effects` records each time the effect ran."""
    server = MCPServer("resend")
    hitl = Elicitation(server, **options)
    effects: list[str] = []

    @server.tool()
    async def provision(vm: str, ctx: Context) -> str:
        go = await hitl.text(ctx, f"Code word for {vm}?")
        assert isinstance(go, Accepted)
        made = await hitl.step(ctx, "create", lambda: effects.append(vm) or f"vm-{vm}")
        size = await hitl.choice(ctx, f"Size for {vm}?", ["small", "large"])
        assert isinstance(size, Accepted)
        return f"{made} {size.data} code={go.data}"

    return server, hitl, effects


PROVISION = Rounds("provision", {"vm": "web-1"})


def only_key(result: CallToolResult | InputRequiredResult) -> str:
    assert isinstance(result, InputRequiredResult), result
    [key] = (result.input_requests or {}).keys()
    return key


async def test_a_retry_sent_again_after_its_answer_was_taken_gets_the_runs_next_outcome() -> None:
    server, hitl, effects = provisioner()
    async with by_hand(server) as client:
        first = await PROVISION.start(client)
        second = await PROVISION.answer(client, first, "alpha")
        again = await PROVISION.answer(client, first, "alpha")  # its response was lost: the client sends it again
        assert isinstance(again, InputRequiredResult)
        assert only_key(again) == only_key(second)
        done = await PROVISION.answer(client, again, "large")
        assert isinstance(done, CallToolResult)
        assert text_of(done) == "vm-web-1 large code=alpha"
    assert effects == ["web-1"]
    assert hitl.active_runs == 0


async def test_the_last_retry_sent_again_after_the_run_finished_gets_the_same_result() -> None:
    server, hitl, effects = provisioner()
    async with by_hand(server) as client:
        first = await PROVISION.start(client)
        second = await PROVISION.answer(client, first, "alpha")
        assert isinstance(second, InputRequiredResult)
        done = await PROVISION.answer(client, second, "large")
        # Its response was lost on the way (the run finished and handed it out): the client sends it again.
        again = await PROVISION.answer(client, second, "large")
        assert isinstance(done, CallToolResult) and isinstance(again, CallToolResult)
        assert text_of(again) == text_of(done) == "vm-web-1 large code=alpha"
        with pytest.raises(MCPError) as refused:
            await PROVISION.answer(client, second, "small")
        assert refused.value.error.data == {"reason": "request_state_reused"}
    assert effects == ["web-1"]
    assert hitl.active_runs == 0


def test_a_finished_run_is_kept_for_its_resend_only_until_it_expires() -> None:
    ended = EndedRuns()
    first = Ended(None, "provision", "round-1", b"answers", b'{"content": []}', expires_at=10.0)
    later = Ended(None, "provision", "round-2", b"answers", b'{"content": []}', expires_at=12.0)
    ended.add("run-1", first, now=0.0)
    ended.add("run-2", later, now=2.0)
    assert ended.get("run-1", now=9.9) == first
    assert ended.get("run-1", now=10.0) is None
    assert ended.get("run-2", now=10.0) == later
    assert ended.get("run-2", now=12.0) is None


class SlowToWrite(MemoryStore):
    """A store that holds each round it has spent, with its answers journaled, until `go` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.written, self.go = anyio.Event(), anyio.Event()

    async def take_round(self, *args: Any, **kwargs: Any) -> Any:
        taken = await super().take_round(*args, **kwargs)
        self.written.set()
        await self.go.wait()
        return taken


async def test_a_retry_dropped_while_its_answer_is_written_is_delivered_and_its_resend_moves_on() -> None:
    store = SlowToWrite()
    server, _, effects = provisioner(store=store, secret=SECRET)
    async with by_hand(server) as client:
        first = await PROVISION.start(client)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(PROVISION.answer, client, first, "alpha")
                await store.written.wait()
                tg.cancel_scope.cancel()  # the connection drops while the store writes the answer
                store.go.set()
            second = await PROVISION.answer(client, first, "alpha")  # the client sends it again
            assert isinstance(second, InputRequiredResult)
            [asked] = (second.input_requests or {}).values()
            assert asked.params.message == "Size for web-1?"  # type: ignore[union-attr]
            done = await PROVISION.answer(client, second, "large")
    assert text_of(done) == "vm-web-1 large code=alpha"
    assert effects == ["web-1"]


async def test_the_same_request_state_with_other_answers_is_still_refused() -> None:
    server, _, effects = provisioner()
    async with by_hand(server) as client:
        first = await PROVISION.start(client)
        await PROVISION.answer(client, first, "alpha")
        with pytest.raises(MCPError) as refused:
            await PROVISION.answer(client, first, "beta")
        assert refused.value.error.data == {"reason": "request_state_reused"}
    assert effects == ["web-1"]


async def test_a_retry_sent_twice_at_once_moves_the_run_once_and_both_get_the_same_round() -> None:
    server = MCPServer("doubled")
    hitl = Elicitation(server)
    effects: list[str] = []
    release = anyio.Event()

    @server.tool()
    async def provision(vm: str, ctx: Context) -> str:
        go = await hitl.text(ctx, f"Code word for {vm}?")
        assert isinstance(go, Accepted)

        async def create() -> str:
            await release.wait()  # the body works while both copies of the retry wait
            effects.append(vm)
            return f"vm-{vm}"

        made = await hitl.step(ctx, "create", create)
        size = await hitl.choice(ctx, f"Size for {vm}?", ["small", "large"])
        assert isinstance(size, Accepted)
        return f"{made} {size.data}"

    got: list[CallToolResult | InputRequiredResult] = []
    async with by_hand(server) as client:
        first = await PROVISION.start(client)

        async def retry() -> None:
            got.append(await PROVISION.answer(client, first, "alpha"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(retry)
                tg.start_soon(retry)
                await anyio.wait_all_tasks_blocked()
                release.set()
        assert len(got) == 2
        assert only_key(got[0]) == only_key(got[1])
        assert isinstance(got[0], InputRequiredResult) and isinstance(got[1], InputRequiredResult)
        done = await PROVISION.answer(client, got[1], "small")
        assert text_of(done) == "vm-web-1 small"
    assert effects == ["web-1"]


async def test_the_models_answer_sent_again_gets_the_runs_next_outcome(mode: str) -> None:
    server, _, effects = provisioner()
    async with Client(server, mode=mode) as client:  # no forms: the model asks and answers
        asked = await client.call_tool("provision", {"vm": "web-1"})
        elicit_id = pending_id(asked)
        then = await send_answer(client, elicit_id, "accept", {"value": "alpha"})
        again = await send_answer(client, elicit_id, "accept", {"value": "alpha"})
        assert not again.is_error, text_of(again)
        assert pending_id(again) == pending_id(then)
        other = await send_answer(client, elicit_id, "accept", {"value": "beta"})
        assert other.is_error and "no open question" in text_of(other)
        done = await send_answer(client, pending_id(again), "accept", {"value": "small"})
        assert text_of(done) == "vm-web-1 small code=alpha"
    assert effects == ["web-1"]


async def test_a_channel_reply_sent_again_is_told_it_was_recorded(mode: str) -> None:
    server = MCPServer("channel-resend")
    channel = RecordingChannel("desk")
    hitl = Elicitation(server, channels=[channel])

    @server.tool()
    async def approve(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Ship?", via=Via("desk", "#ops"))).action

    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:
        results: list[Any] = []

        async def call() -> None:
            results.append(await client.call_tool("approve", {}))

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        who = Responder("desk", "U1", "Ada")
        assert (await channel.desk.reply(prompt.token, who, "accept", {"value": True})).ok
        again = await channel.desk.reply(prompt.token, who, "accept", {"value": True})
        assert again.status in ("answered", "closed")  # recorded once; a second click never takes another answer
    assert text_of(results[0]) == "accept"


async def test_a_retry_sent_again_to_another_node_is_answered_by_the_owner(redis_server: RedisServer) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    effects: list[str] = []

    def node(name: str) -> Elicitation:
        server = MCPServer("resend-nodes")  # one name: the requestState audience of both nodes
        store, broker = RedisStore(redis_server.url, prefix=prefix), RedisBroker(redis_server.url, prefix=prefix)
        hitl = Elicitation(server, store=store, broker=broker, secret=SECRET, node_id=name)

        @server.tool()
        async def provision(vm: str, ctx: Context) -> str:
            go = await hitl.text(ctx, f"Code word for {vm}?")
            assert isinstance(go, Accepted)
            made = await hitl.step(ctx, "create", lambda: effects.append(f"{vm} on {name}") or f"vm-{vm}")
            size = await hitl.choice(ctx, f"Size for {vm}?", ["small", "large"])
            assert isinstance(size, Accepted)
            return f"{made} {size.data} finished on {name}"

        return hitl

    a, b = node("a"), node("b")
    try:
        async with (
            serve_http(a.server) as url_a,
            serve_http(b.server) as url_b,
            by_hand(url_a) as on_a,
            by_hand(url_b) as on_b,
        ):
            first = await PROVISION.start(on_a)
            second = await PROVISION.answer(on_a, first, "alpha")
            again = await PROVISION.answer(on_b, first, "alpha")  # the resend lands on the other node
            assert isinstance(again, InputRequiredResult)
            assert only_key(again) == only_key(second)
            done = await PROVISION.answer(on_b, again, "large")
            assert isinstance(done, CallToolResult)
            assert text_of(done) == "vm-web-1 large finished on a"
            # The run has finished; its last retry sent again, to either node, gets the same result.
            for client in (on_b, on_a):
                resent = await PROVISION.answer(client, again, "large")
                assert isinstance(resent, CallToolResult)
                assert text_of(resent) == text_of(done)
    finally:
        await a.aclose()
        await b.aclose()
    assert effects == ["web-1 on a"]


def test_what_a_finished_run_keeps_for_its_resend_is_nothing_the_garbage_collector_walks() -> None:
    # A busy node keeps thousands for `run_expiry`: as objects, every full collection would walk them all.
    ended = EndedRuns()
    kept = Ended(None, "provision", "round-1", b"answers", frozen(CallToolResult(content=[])), expires_at=10.0)
    ended.add("run-1", kept, now=0.0)
    gc.collect()
    assert not any(gc.is_tracked(value) for value in ended._runs.values())
    assert ended.get("run-1", now=1.0) == kept
    assert json.loads(kept.result) == {"content": [], "isError": False, "resultType": "complete"}
