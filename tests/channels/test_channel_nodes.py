"""A channel answer that lands on another node reaches the run where it waits, on both eras (real Redis)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Elicitation
from elicitkit.channels.base import Responder, Via
from elicitkit.testing import ScriptedHuman
from tests.channels.recording import RecordingChannel
from tests.channels.tasking import TasksExtension, poll_until, raw, start_task
from tests.redis_server import RedisServer
from tests.scenes import text_of

pytestmark = pytest.mark.anyio

SECRET = "channel-nodes-secret-0123456789abcdef"
SEATS = {"type": "object", "properties": {"seats": {"type": "integer", "minimum": 1}}, "required": ["seats"]}


def node(url: str, name: str) -> tuple[MCPServer, RecordingChannel, Elicitation]:
    server = MCPServer(f"node-{name}")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], store=url, secret=SECRET, node_id=name, timeout=20)

    @server.tool(structured_output=False)  # the test's task client resolves a handle to content-only results
    async def deploy(ctx: Context) -> str:
        first = await hitl.confirm(ctx, "Deploy?", via=Via("desk", "#ops", frozenset({"U1"})))
        second = await hitl.choice(ctx, "Region?", ["eu", "us"], via=Via("desk", "#ops"))
        return f"{first.action}:{getattr(first, 'data', None)} {getattr(second, 'data', None)} on {name}"

    return server, channel, hitl


async def test_answers_given_on_the_other_node_reach_the_run_on_both_eras(redis_server: RedisServer, mode: str) -> None:
    asking, asking_channel, asking_hitl = node(redis_server.url, "a")
    other, other_channel, other_hitl = node(redis_server.url, "b")
    got: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asking_hitl.aclose)
        stack.push_async_callback(other_hitl.aclose)
        await stack.enter_async_context(Client(other, mode=mode))
        client = await stack.enter_async_context(Client(asking, mode=mode))
        tg = await stack.enter_async_context(anyio.create_task_group())

        async def call() -> None:
            got["result"] = await client.call_tool("deploy", {})

        tg.start_soon(call)
        assert other_channel.desk is not None
        first = await asking_channel.next_post(1)
        # The channel's webhook reaches node b, which does not hold the run.
        refused = await other_channel.desk.reply(first.token, Responder("desk", "U2"), "accept", {"value": True})
        assert refused.status == "not_approver"
        assert (await other_channel.desk.reply(first.token, Responder("desk", "U1"), "accept", {"value": True})).ok
        again = await other_channel.desk.reply(first.token, Responder("desk", "U1"), "accept", {"value": False})
        assert again.status == "closed"
        second = await asking_channel.next_post(2)
        assert (
            await other_channel.desk.reply(second.token, Responder("desk", "U7", "Lin"), "accept", {"value": "eu"})
        ).ok
    assert text_of(got["result"]) == "accept:True eu on a"
    closings = await asking_channel.closings(2)
    assert [c.text for c in closings] == ["Answered by U1: value: True", "Answered by Lin: value: eu"]


async def test_a_task_started_on_one_node_is_answered_and_polled_on_the_other(
    redis_server: RedisServer, mode: str
) -> None:
    asking, asking_channel, asking_hitl = node(redis_server.url, "a")
    other, other_channel, other_hitl = node(redis_server.url, "b")
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asking_hitl.aclose)
        stack.push_async_callback(other_hitl.aclose)
        polling = await stack.enter_async_context(Client(other, mode=mode, extensions=[TasksExtension()]))
        client = await stack.enter_async_context(Client(asking, mode=mode, extensions=[TasksExtension()]))
        task_id = await start_task(client, mode, "deploy")
        assert other_channel.desk is not None
        for count, content in ((1, {"value": True}), (2, {"value": "us"})):
            prompt = await asking_channel.next_post(count)
            assert (await other_channel.desk.reply(prompt.token, Responder("desk", "U1"), "accept", content)).ok
        # The client's next poll reaches the other node, which reads the task's outcome from the store.
        done = await poll_until(polling, task_id, {"completed", "failed"})
        result = await raw(polling, "tasks/result", {"taskId": task_id}) if mode == "legacy" else done["result"]
    assert done["status"] == "completed"
    assert result["content"][0]["text"] == "accept:True us on a"


async def test_tasks_result_on_the_other_node_returns_as_soon_as_the_task_ends_there(redis_server: RedisServer) -> None:
    asking, asking_channel, asking_hitl = node(redis_server.url, "a")
    other, other_channel, other_hitl = node(redis_server.url, "b")
    got: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asking_hitl.aclose)
        stack.push_async_callback(other_hitl.aclose)
        polling = await stack.enter_async_context(Client(other, mode="legacy"))
        client = await stack.enter_async_context(Client(asking, mode="legacy"))
        created = await raw(client, "tools/call", {"name": "deploy", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        async with anyio.create_task_group() as tg:

            async def result() -> None:
                got["result"] = await raw(polling, "tasks/result", {"taskId": task_id})

            tg.start_soon(result)  # waits on node b, which does not hold the run
            for count, content in ((1, {"value": True}), (2, {"value": "eu"})):
                prompt = await asking_channel.next_post(count)
                assert other_channel.desk is not None
                assert (await other_channel.desk.reply(prompt.token, Responder("desk", "U1"), "accept", content)).ok
    assert got["result"]["content"][0]["text"] == "accept:True eu on a"
    assert got["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


async def test_cancelling_a_task_on_the_other_node_withdraws_its_question_where_it_runs(
    redis_server: RedisServer, mode: str
) -> None:
    asking, asking_channel, asking_hitl = node(redis_server.url, "a")
    other, _, other_hitl = node(redis_server.url, "b")
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asking_hitl.aclose)
        stack.push_async_callback(other_hitl.aclose)
        polling = await stack.enter_async_context(Client(other, mode=mode, extensions=[TasksExtension()]))
        client = await stack.enter_async_context(Client(asking, mode=mode, extensions=[TasksExtension()]))
        task_id = await start_task(client, mode, "deploy")
        await asking_channel.next_post(1)
        acknowledged = await raw(polling, "tasks/cancel", {"taskId": task_id})
        assert acknowledged == {"resultType": "complete"} if mode == "auto" else acknowledged["status"] == "cancelled"
        assert [c.outcome for c in await asking_channel.closings(1)] == ["withdrawn"]
        assert (await raw(client, "tasks/get", {"taskId": task_id}))["status"] == "cancelled"


async def test_tasks_update_on_the_other_node_answers_the_question_where_the_run_waits(
    redis_server: RedisServer,
) -> None:
    def seats_node(name: str) -> tuple[MCPServer, Elicitation]:
        server = MCPServer(f"seats-{name}")
        hitl = Elicitation(server, store=redis_server.url, secret=SECRET, node_id=f"seats-{name}", timeout=20)

        @server.tool(structured_output=False)
        async def seats(ctx: Context) -> str:
            answer = await hitl.elicit(ctx, "How many seats?", SEATS, task=True)
            return f"{answer.action}:{getattr(answer, 'data', {}).get('seats')} on {name}"

        return server, hitl

    asking, asking_hitl = seats_node("a")
    other, other_hitl = seats_node("b")
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asking_hitl.aclose)
        stack.push_async_callback(other_hitl.aclose)
        polling = await stack.enter_async_context(Client(other, mode="auto", extensions=[TasksExtension()]))
        # It shows forms (its person is never asked directly: the question goes out in the task).
        shows_forms = ScriptedHuman()
        client = await stack.enter_async_context(
            Client(asking, mode="auto", extensions=[TasksExtension()], elicitation_callback=shows_forms)
        )
        handed = await client.call_tool("seats", {})
        task_id = handed.meta["task"]["taskId"] if handed.meta else ""
        waiting = await poll_until(client, task_id, {"input_required"})
        [key] = waiting["inputRequests"]
        answer = {key: {"action": "accept", "content": {"seats": 12}}}
        await raw(polling, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        done = await poll_until(polling, task_id, {"completed", "failed"})
    assert done["result"]["content"][0]["text"] == "accept:12 on a"


async def test_a_decline_and_its_reason_given_on_the_other_node_reach_the_elicit_tool(
    redis_server: RedisServer, mode: str
) -> None:
    nodes = []
    for name in ("a", "b"):
        server = MCPServer(f"node-{name}")
        channel = RecordingChannel("slack")
        hitl = Elicitation(server, channels=[channel], store=redis_server.url, secret=SECRET, node_id=name)
        hitl.install_elicit_tool({"slack": Via("slack", "#ops", frozenset({"U1"}))})
        nodes.append((server, channel, hitl))
    (asking, asking_channel, _), (_, other_channel, _) = nodes
    got: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        for _, _, hitl in nodes:
            stack.push_async_callback(hitl.aclose)
        client = await stack.enter_async_context(Client(asking, mode=mode))
        tg = await stack.enter_async_context(anyio.create_task_group())

        async def call() -> None:
            got["result"] = await client.call_tool("elicit", {"message": "Deploy?", "schema": SEATS})

        tg.start_soon(call)
        prompt = await asking_channel.next_post(1)
        assert other_channel.desk is not None
        declined = await other_channel.desk.reply(
            prompt.token, Responder("slack", "U1"), "decline", None, reason="Freeze until Monday"
        )
        assert declined.ok
    assert text_of(got["result"]) == "User declined: Freeze until Monday"
    assert got["result"].is_error
    assert [c.text for c in await asking_channel.closings(1)] == ["Declined by U1: Freeze until Monday"]
