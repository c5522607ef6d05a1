"""fastmcp background tasks (`@server.tool(task=True)`): a task that asks waits for the answer instead of raising.

fastmcp serves a `task=True` tool only when a tasks extension is registered (the `fastmcp-tasks` package runs it
in a Docket worker, where `ctx.elicit` raises and the author must rewrite the tool in the guard pattern).
elicitkit registers itself as that extension and runs the tool as an MCP task in-process: on 2025-11-25 the
client asks for a task (`params.task`) and answers through `tasks/result`; on 2026-07-28 a client that takes tasks
gets one as soon as the tool asks, and answers through `tasks/get` + `tasks/update`. The tools here are written for
fastmcp alone (`ctx.elicit`, fastmcp's result types) and adopted; the SDK's client drives them over streamable HTTP
(it has no tasks API: `tests/channels/tasking.py` brings the raw requests).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")

import mcp
from fastmcp import Client, Context, FastMCP
from fastmcp.server.extensions import ServerExtension
from fastmcp.utilities.tasks import TASKS_EXTENSION_ID

from elicitkit import Elicitation
from elicitkit._fastmcp import FastMCPSeam
from elicitkit.fastmcp import adopt
from elicitkit.testing import ScriptedHuman, accept
from tests.channels.tasking import TasksExtension, poll_until, raw
from tests.fastmcp.scenes import connect, serve
from tests.scenes import settled, text_of

pytestmark = pytest.mark.anyio


def release_server() -> tuple[FastMCP, list[str]]:
    """A fastmcp background task that asks twice with fastmcp's own `ctx.elicit`; `steps` shows what ran."""
    server = FastMCP("releases")
    steps: list[str] = []

    @server.tool(task=True, output_schema=None)
    async def release(version: str, ctx: Context) -> str:
        steps.append("start")
        approved = await ctx.elicit(f"Release {version}?", bool)
        if approved.action != "accept" or not approved.data:
            return f"{version} not released"
        where = await ctx.elicit("Where to?", ["staging", "prod"])
        steps.append("released")
        return f"released {version} to {getattr(where, 'data', None)}"

    return server, steps


@asynccontextmanager
async def sdk_client(hitl: Elicitation, mode: str, **options: Any) -> AsyncIterator[mcp.Client]:
    async with serve(hitl) as url, mcp.Client(url, mode=mode, **options) as client:
        yield client


def test_fastmcp_refuses_to_serve_a_task_tool_without_a_tasks_extension_and_serves_it_with_elicitkit() -> None:
    bare, _ = release_server()
    with pytest.raises(RuntimeError, match="require the tasks extension"):
        anyio.run(bare._validate_task_extension_registered)
    served, _ = release_server()
    adopt(served)
    anyio.run(served._validate_task_extension_registered)  # no error: elicitkit runs it


def test_a_server_that_already_runs_its_tasks_elsewhere_is_refused_by_name() -> None:
    class DocketTasks(ServerExtension):
        identifier = TASKS_EXTENSION_ID

    server, _ = release_server()
    server.add_extension(DocketTasks())
    with pytest.raises(ValueError, match=r"already has a tasks extension \(DocketTasks\)"):
        Elicitation(server)


async def test_a_2025_11_25_background_task_asks_through_tasks_result_and_its_body_runs_once() -> None:
    server, steps = release_server()
    hitl = adopt(server)
    human = ScriptedHuman(accept({"value": True}), accept({"value": "prod"}))
    async with sdk_client(hitl, "legacy", elicitation_callback=human) as client:
        listed = await raw(client, "tools/list", {})
        assert {t["name"]: t.get("execution") for t in listed["tools"]}["release"] == {"taskSupport": "optional"}
        created = await raw(client, "tools/call", {"name": "release", "arguments": {"version": "2.1"}, "task": {}})
        task_id = created["task"]["taskId"]
        assert created["task"]["status"] in {"working", "input_required"}
        result = await raw(client, "tasks/result", {"taskId": task_id})
        assert (await raw(client, "tasks/get", {"taskId": task_id}))["status"] == "completed"
    assert result["content"][0]["text"] == "released 2.1 to prod"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    assert [q.message for q in human.transcript] == ["Release 2.1?", "Where to?"]
    assert steps == ["start", "released"]
    await settled(hitl)


async def test_a_2026_07_28_background_task_becomes_a_task_when_it_asks_and_takes_answers_by_tasks_update() -> None:
    server, steps = release_server()
    hitl = adopt(server)
    nobody = ScriptedHuman()  # the client shows forms, but the task's questions are answered with tasks/update
    async with sdk_client(hitl, "auto", extensions=[TasksExtension()], elicitation_callback=nobody) as client:
        handed = await client.call_tool("release", {"version": "2.2"})
        task = handed.meta["task"] if handed.meta else {}
        assert task["resultType"] == "task"
        for message, answer in [("Release 2.2?", True), ("Where to?", "staging")]:
            waiting = await poll_until(client, task["taskId"], {"input_required"})
            [(key, request)] = waiting["inputRequests"].items()
            assert request["method"] == "elicitation/create"
            assert request["params"]["message"] == message
            responses = {key: {"action": "accept", "content": {"value": answer}}}
            await raw(client, "tasks/update", {"taskId": task["taskId"], "inputResponses": responses})
        done = await poll_until(client, task["taskId"], {"completed", "failed"})
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == "released 2.2 to staging"
    assert steps == ["start", "released"]  # suspended between rounds, never run again
    await settled(hitl)


async def test_a_tool_without_task_true_stays_an_ordinary_call_for_a_client_that_takes_tasks() -> None:
    server = FastMCP("plain")
    hitl = adopt(server)

    @server.tool(output_schema=None)
    async def deploy(ctx: Context) -> str:
        answer = await ctx.elicit("Deploy?", bool)
        return f"{answer.action} {getattr(answer, 'data', None)}"

    human = ScriptedHuman(accept({"value": True}))
    async with sdk_client(hitl, "auto", extensions=[TasksExtension()], elicitation_callback=human) as client:
        result = await client.call_tool("deploy", {})
    assert result.meta is None or "task" not in result.meta
    assert text_of(result) == "accept True"


async def test_a_background_task_called_without_a_task_simply_waits_for_its_answers(driver: str, mode: str) -> None:
    server, steps = release_server()
    hitl = adopt(server)
    human = ScriptedHuman(accept({"value": True}), accept({"value": "prod"}))
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("release", {"version": "2.3"})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "released 2.3 to prod"
    assert steps == ["start", "released"]
    await settled(hitl)


async def test_fastmcp_s_own_client_completes_a_background_task_on_both_eras(mode: str) -> None:
    server, _ = release_server()
    hitl = adopt(server)
    human = ScriptedHuman(accept({"value": False}))
    async with connect(hitl, "fastmcp", mode, human) as client:
        assert isinstance(client.client, Client)
        result = await client.call("release", {"version": "2.4"})
    assert text_of(result) == "2.4 not released"
    await settled(hitl)


def test_which_tools_run_as_tasks_is_read_off_each_tool_versioned_or_not() -> None:
    """Asked for every 2026-07-28 question: an unversioned tool is found by its key, a versioned one by its name
    (any of its versions that supports tasks counts), and a name that is no tool runs as no task."""
    server = FastMCP("versions")

    @server.tool(task=True, output_schema=None)
    async def backup() -> str:
        return "done"

    @server.tool(output_schema=None)
    async def status() -> str:
        return "ok"

    @server.tool(version="1", output_schema=None)
    async def migrate() -> str:
        return "v1"

    @server.tool(task=True, version="2", output_schema=None, name="migrate")
    async def migrate_v2() -> str:
        return "v2"

    @server.tool(version="1", output_schema=None)
    async def report() -> str:
        return "r"

    task_tool = FastMCPSeam(server).run_tasks()
    assert task_tool("backup") and task_tool("migrate")
    assert not task_tool("status") and not task_tool("report") and not task_tool("nothing")
