"""A call whose question goes to a human channel becomes an MCP task, on both eras, across restarts and nodes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation
from elicitkit.channels.base import Responder, Via
from elicitkit.testing import ScriptedHuman, accept
from tests.channels.recording import RecordingChannel
from tests.channels.tasking import TasksExtension, poll_until, raw, start_task

pytestmark = pytest.mark.anyio

SECRET = "tasks-test-secret-0123456789abcdef"
APPROVER = Responder("desk", "U1", "Ada")


def approvals_server(store: str | None = None, node_id: str | None = None) -> tuple[MCPServer, RecordingChannel]:
    server = MCPServer("approvals")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], store=store, secret=SECRET, node_id=node_id, timeout=30)
    steps: list[str] = []

    @server.tool(structured_output=False)  # the test's task client resolves a handle to content-only results
    async def release(version: str, ctx: Context) -> str:
        approved = await hitl.confirm(ctx, f"Release {version}?", via=Via("desk", "#releases"))
        await hitl.step(ctx, "tag", lambda: steps.append("tag") or len(steps))
        env = await hitl.choice(ctx, "Where to?", ["staging", "prod"], via=Via("desk", "#releases"))
        assert isinstance(approved, Accepted)
        assert isinstance(env, Accepted)
        return f"released {version} to {env.data} (approved: {approved.data})"

    server.steps = steps  # type: ignore[attr-defined]
    return server, channel


async def answer(channel: RecordingChannel, count: int, content: dict[str, Any]) -> None:
    prompt = await channel.next_post(count)
    assert channel.desk is not None
    verdict = await channel.desk.reply(prompt.token, APPROVER, "accept", content)
    assert verdict.ok, verdict


@asynccontextmanager
async def legacy_client(server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server, mode="legacy") as client:
        yield client


async def test_a_2025_11_25_client_gets_a_task_at_once_and_its_result_once_people_answered() -> None:
    server, channel = approvals_server()
    async with legacy_client(server) as client:
        assert client.server_capabilities.tasks is not None
        listed = await raw(client, "tools/list", {})
        assert {t["name"]: t.get("execution") for t in listed["tools"]}["release"] == {"taskSupport": "optional"}
        created = await raw(client, "tools/call", {"name": "release", "arguments": {"version": "2.1"}, "task": {}})
        task = created["task"]
        assert task["status"] == "working"
        assert {"taskId", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"} <= set(task)
        assert (await raw(client, "tasks/get", {"taskId": task["taskId"]}))["status"] == "working"
        async with anyio.create_task_group() as tg:
            got: dict[str, Any] = {}

            async def result() -> None:
                got["result"] = await raw(client, "tasks/result", {"taskId": task["taskId"]})

            tg.start_soon(result)
            await answer(channel, 1, {"value": True})
            await answer(channel, 2, {"value": "prod"})
        assert got["result"]["content"][0]["text"] == "released 2.1 to prod (approved: True)"
        assert got["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
        assert (await raw(client, "tasks/get", {"taskId": task["taskId"]}))["status"] == "completed"


async def test_a_2026_07_28_client_that_takes_tasks_gets_one_when_the_question_goes_to_a_channel() -> None:
    server, channel = approvals_server()
    tasks = TasksExtension()
    async with Client(server, mode="auto", extensions=[tasks]) as client:
        handed = await client.call_tool("release", {"version": "2.1"})
        task = handed.meta["task"] if handed.meta else {}
        assert task["resultType"] == "task"
        assert task["status"] == "working"
        assert {"ttlMs", "pollIntervalMs", "createdAt"} <= set(task)
        await answer(channel, 1, {"value": True})
        await answer(channel, 2, {"value": "staging"})
        done = await poll_until(client, task["taskId"], {"completed", "failed"})
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "released 2.1 to staging (approved: True)"


async def test_a_2026_07_28_client_without_tasks_waits_in_its_call() -> None:
    server, channel = approvals_server()
    async with Client(server, mode="auto") as client, anyio.create_task_group() as tg:
        got: dict[str, Any] = {}

        async def call() -> None:
            got["result"] = await client.call_tool("release", {"version": "3"})

        tg.start_soon(call)
        await answer(channel, 1, {"value": False})
        await answer(channel, 2, {"value": "prod"})
    assert got["result"].content[0].text == "released 3 to prod (approved: False)"


async def test_cancelling_a_task_withdraws_its_question_from_the_channel(mode: str) -> None:
    server, channel = approvals_server()
    async with Client(server, mode=mode, extensions=[TasksExtension()]) as client:
        task_id = await start_task(client, mode, "release", {"version": "1"})
        await channel.next_post(1)
        cancelled = await raw(client, "tasks/cancel", {"taskId": task_id})
        # 2025-11-25 answers with the task; the 2026-07-28 extension with an empty acknowledgement.
        assert cancelled == {"resultType": "complete"} if mode == "auto" else cancelled["status"] == "cancelled"
        assert [c.outcome for c in await channel.closings(1)] == ["withdrawn"]
        assert (await raw(client, "tasks/get", {"taskId": task_id}))["status"] == "cancelled"
        with pytest.raises(MCPError, match="already ended"):
            await raw(client, "tasks/cancel", {"taskId": task_id})


async def test_an_unknown_or_foreign_task_id_is_an_error(mode: str) -> None:
    server, _ = approvals_server()
    async with Client(server, mode=mode, extensions=[TasksExtension()]) as client:
        with pytest.raises(MCPError, match="Unknown task"):
            await raw(client, "tasks/get", {"taskId": "not-a-task"})


async def test_a_2026_07_28_client_that_did_not_declare_tasks_is_told_which_capability_is_missing() -> None:
    server, _ = approvals_server()
    async with Client(server, mode="auto") as client:
        with pytest.raises(MCPError, match="Missing required client capability") as raised:
            await raw(client, "tasks/get", {"taskId": "not-a-task"})
    assert raised.value.error.code == -32021
    assert raised.value.error.data == {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


async def test_a_task_survives_a_restart_and_its_answer_replays_the_run_without_repeating_steps(
    tmp_path: Path, mode: str
) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first, first_channel = approvals_server(store, node_id="before")
    async with Client(first, mode=mode, extensions=[TasksExtension()]) as client:
        task_id = await start_task(client, mode, "release", {"version": "9"})
        await answer(first_channel, 1, {"value": True})
        asked_there = await first_channel.next_post(2)
    assert first.steps == ["tag"]  # type: ignore[attr-defined]
    assert first_channel.closed[-1:] == [] or len(first_channel.closed) == 1  # the open question was not closed

    # The server restarts (a new process would build these again from the same store and secret).
    second, second_channel = approvals_server(store, node_id="after")
    async with Client(second, mode=mode, extensions=[TasksExtension()]) as client:
        assert second_channel.desk is not None
        # The person answers the message the first server posted; the answer lands on the new one.
        verdict = await second_channel.desk.reply(asked_there.token, APPROVER, "accept", {"value": "prod"})
        assert verdict.ok
        done = await poll_until(client, task_id, {"completed", "failed"})
        if mode == "legacy":
            result = await raw(client, "tasks/result", {"taskId": task_id})
        else:
            result = done.get("result", done)
    assert done["status"] == "completed", done.get("error")
    assert result["content"][0]["text"] == "released 9 to prod (approved: True)"
    assert second.steps == []  # type: ignore[attr-defined]  # the journaled step was not run again
    # The replay found the answer in the journal and closed the message the first server had posted.
    assert second_channel.posted == []
    assert [c.text for c in await second_channel.closings(1)] == ["Answered by Ada: value: prod"]


def config_server() -> MCPServer:
    server = MCPServer("config")
    hitl = Elicitation(server, timeout=30)

    @server.tool(structured_output=False)
    async def configure(ctx: Context) -> str:
        answer = await hitl.choice(ctx, "Which plan?", ["basic", "pro"])
        plan = await hitl.elicit(ctx, f"Seats for {getattr(answer, 'data', '?')}?", Seats, task=True)
        assert isinstance(plan, Accepted)
        return f"{answer.data} x{plan.data.seats}"  # type: ignore[union-attr]

    return server


class Seats(BaseModel):
    seats: int = Field(ge=1, le=50)


async def test_a_question_asked_with_task_true_hands_a_2026_client_a_task_it_answers_with_tasks_update() -> None:
    human = ScriptedHuman(accept({"value": "pro"}))
    async with Client(
        config_server(), mode="auto", extensions=[TasksExtension()], elicitation_callback=human
    ) as client:
        handed = await client.call_tool("configure", {})
        task = handed.meta["task"] if handed.meta else {}
        assert task["resultType"] == "task"
        waiting = await poll_until(client, task["taskId"], {"input_required"})
        [(key, request)] = waiting["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Seats for pro?"
        # An answer that breaks the schema is refused: the question stays open, with the reason.
        await raw(
            client,
            "tasks/update",
            {"taskId": task["taskId"], "inputResponses": {key: {"action": "accept", "content": {"seats": 99}}}},
        )
        again = await poll_until(client, task["taskId"], {"input_required"})
        assert "The last answer was refused" in again["inputRequests"][key]["params"]["message"]
        ignored = {"not-a-question": {"action": "accept", "content": {"seats": 1}}}
        await raw(client, "tasks/update", {"taskId": task["taskId"], "inputResponses": ignored})
        await raw(
            client,
            "tasks/update",
            {"taskId": task["taskId"], "inputResponses": {key: {"action": "accept", "content": {"seats": 12}}}},
        )
        done = await poll_until(client, task["taskId"], {"completed", "failed"})
    assert done["result"]["content"][0]["text"] == "pro x12"


async def test_task_true_changes_nothing_for_clients_that_do_not_take_tasks(mode: str) -> None:
    human = ScriptedHuman(accept({"value": "basic"}), accept({"seats": 3}))
    async with Client(config_server(), mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("configure", {})
    assert result.content[0].text == "basic x3"  # type: ignore[union-attr]


def asking_server() -> MCPServer:
    server = MCPServer("asking")
    hitl = Elicitation(server, timeout=30)

    @server.tool(structured_output=False)
    async def configure(ctx: Context) -> str:
        seats = await hitl.elicit(ctx, "Seats?", Seats)
        return f"{seats.action}:{getattr(getattr(seats, 'data', None), 'seats', None)}"

    return server


async def test_a_2025_11_25_task_asks_its_client_through_tasks_result_tagged_with_the_task() -> None:
    seen: list[Any] = []

    async def person(context: Any, params: Any) -> Any:
        seen.append(params)
        return accept({"seats": 7})

    async with Client(asking_server(), mode="legacy", elicitation_callback=person) as client:
        created = await raw(client, "tools/call", {"name": "configure", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        assert (await poll_until(client, task_id, {"input_required"}))["status"] == "input_required"
        result = await raw(client, "tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == "accept:7"
    [asked] = seen
    assert asked.message == "Seats?"
    # (Its _meta may also carry a `traceparent` once a tracer is active in the process, e.g. after fastmcp's import.)
    assert asked.meta["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


async def test_two_tasks_result_requests_for_one_task_both_get_its_result() -> None:
    server, channel = approvals_server()
    async with Client(server, mode="legacy") as client:
        created = await raw(client, "tools/call", {"name": "release", "arguments": {"version": "4"}, "task": {}})
        task_id = created["task"]["taskId"]
        results: list[dict[str, Any]] = []
        async with anyio.create_task_group() as tg:

            async def result() -> None:
                results.append(await raw(client, "tasks/result", {"taskId": task_id}))

            tg.start_soon(result)
            tg.start_soon(result)
            await answer(channel, 1, {"value": True})
            await answer(channel, 2, {"value": "prod"})
    assert [r["content"][0]["text"] for r in results] == ["released 4 to prod (approved: True)"] * 2


async def test_a_restarted_task_polled_before_anyone_answers_keeps_its_message_and_takes_the_answer_there(
    tmp_path: Path, mode: str
) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first, first_channel = approvals_server(store, node_id="before")
    async with Client(first, mode=mode, extensions=[TasksExtension()]) as client:
        task_id = await start_task(client, mode, "release", {"version": "5"})
        asked_there = await first_channel.next_post(1)
    assert first_channel.closed == []

    second, second_channel = approvals_server(store, node_id="after")
    async with Client(second, mode=mode, extensions=[TasksExtension()]) as client:
        # The client polls first: the new server takes the task over and replays it up to the open question,
        # which it picks up from the message the first server posted instead of posting it again.
        assert (await raw(client, "tasks/get", {"taskId": task_id}))["status"] == "working"
        await anyio.wait_all_tasks_blocked()
        assert second_channel.posted == []
        assert second_channel.desk is not None
        assert (await second_channel.desk.reply(asked_there.token, APPROVER, "accept", {"value": True})).ok
        await answer(second_channel, 1, {"value": "staging"})
        done = await poll_until(client, task_id, {"completed", "failed"})
    assert done["status"] == "completed"
    closings = await second_channel.closings(2)
    assert [c.text for c in closings] == ["Answered by Ada: value: True", "Answered by Ada: value: staging"]


async def test_a_channel_question_lives_as_long_as_its_timeout_not_the_runs_expiry_between_requests() -> None:
    server = MCPServer("long")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], run_expiry=1, timeout=3600)

    @server.tool()
    async def wait(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Still there?", via=Via("desk", "#ops"))).action

    async with Client(server, mode="auto") as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "wait", {})
        prompt = await channel.next_post(1)
        assert prompt.expires_at > time.time() + 3000  # the person has the hour the tool gave them
        assert channel.desk is not None
        assert (await channel.desk.reply(prompt.token, APPROVER, "accept", {"value": True})).ok


async def test_a_2025_11_25_call_waiting_on_a_channel_gets_progress_keepalives() -> None:
    server = MCPServer("keepalive")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], keepalive=0.01, timeout=30)
    beats = anyio.Event()

    @server.tool()
    async def wait(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Still there?", via=Via("desk", "#ops"))).action

    async def progress(done: float, total: float | None, message: str | None) -> None:
        beats.set()

    async with Client(server, mode="legacy") as client, anyio.create_task_group() as tg:
        tg.start_soon(lambda: client.call_tool("wait", {}, progress_callback=progress))
        prompt = await channel.next_post(1)
        with anyio.fail_after(5):
            await beats.wait()
        assert channel.desk is not None
        assert (await channel.desk.reply(prompt.token, APPROVER, "accept", {"value": True})).ok


def reworded_server(store: str, node_id: str, wording: str) -> tuple[MCPServer, RecordingChannel]:
    server = MCPServer("reworded")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], store=store, secret=SECRET, node_id=node_id, timeout=30)

    @server.tool(structured_output=False)
    async def release(ctx: Context) -> str:
        return (await hitl.confirm(ctx, wording, via=Via("desk", "#releases"))).action

    return server, channel


async def test_a_replay_that_asks_a_reworded_question_withdraws_the_old_message_and_takes_answers_to_the_new(
    tmp_path: Path,
) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first, first_channel = reworded_server(store, "before", "Release?")
    async with Client(first, mode="legacy") as client:
        created = await raw(client, "tools/call", {"name": "release", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        old = await first_channel.next_post(1)

    # The new version of the server words the question differently.
    second, second_channel = reworded_server(store, "after", "Release now?")
    async with Client(second, mode="legacy") as client:
        await raw(client, "tasks/get", {"taskId": task_id})  # takes the task over and replays it
        new = await second_channel.next_post(1)
        assert new.message == "Release now?"
        assert [c.outcome for c in await second_channel.closings(1)] == ["withdrawn"]  # the old message
        assert second_channel.desk is not None
        assert (await second_channel.desk.reply(old.token, APPROVER, "accept", {"value": True})).status == "closed"
        assert (await second_channel.desk.reply(new.token, APPROVER, "accept", {"value": True})).ok
        result = await raw(client, "tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == "accept"


async def test_an_answer_to_an_old_wording_journaled_before_a_restart_does_not_block_the_reworded_question(
    tmp_path: Path,
) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first, first_channel = reworded_server(store, "before", "Release?")
    async with Client(first, mode="legacy") as client:
        created = await raw(client, "tools/call", {"name": "release", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        old = await first_channel.next_post(1)

    second, second_channel = reworded_server(store, "after", "Release now?")
    async with Client(second, mode="legacy") as client:
        assert second_channel.desk is not None
        # Answered while no server held the run: journaled under the old wording.
        assert (await second_channel.desk.reply(old.token, APPROVER, "accept", {"value": False})).ok
        await raw(client, "tasks/get", {"taskId": task_id})  # the replay asks the reworded question anew
        new = await second_channel.next_post(1)
        assert (await second_channel.desk.reply(new.token, APPROVER, "accept", {"value": True})).ok
        result = await raw(client, "tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == "accept"


async def test_a_second_tasks_result_that_leaves_hands_the_tasks_questions_back_to_the_first() -> None:
    server = MCPServer("two-questions")
    hitl = Elicitation(server, timeout=30)

    @server.tool(structured_output=False)
    async def plan(ctx: Context) -> str:
        first = await hitl.text(ctx, "Name?")
        second = await hitl.text(ctx, "Team?")
        return f"{getattr(first, 'data', None)}/{getattr(second, 'data', None)}"

    first_asked, release_first = anyio.Event(), anyio.Event()
    asked: list[str] = []

    async def person(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if params.message == "Name?":
            first_asked.set()
            await release_first.wait()
            return accept({"value": "ada"})
        return accept({"value": "core"})

    async with Client(server, mode="legacy", elicitation_callback=person) as client:
        created = await raw(client, "tools/call", {"name": "plan", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        results: list[dict[str, Any]] = []
        async with anyio.create_task_group() as tg:

            async def result() -> None:
                results.append(await raw(client, "tasks/result", {"taskId": task_id}))

            tg.start_soon(result)
            with anyio.fail_after(5):
                await first_asked.wait()
            with anyio.CancelScope() as second:
                tg.start_soon(result)
                await anyio.wait_all_tasks_blocked()
                second.cancel()
            # The second request is gone (cancelled by its client); the next question goes on the first.
            with anyio.fail_after(5):
                release_first.set()
                while len(results) < 1:
                    await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    assert asked == ["Name?", "Team?"]
    assert results[0]["content"][0]["text"] == "ada/core"


async def test_a_body_that_stops_waiting_withdraws_its_channel_question_and_a_late_click_is_told_it_is_closed(
    mode: str,
) -> None:
    server = MCPServer("impatient")
    channel = RecordingChannel()
    hitl = Elicitation(server, channels=[channel], timeout=30)
    scopes: list[anyio.CancelScope] = []

    @server.tool(structured_output=False)
    async def impatient(ctx: Context) -> str:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await hitl.confirm(ctx, "Quick?", via=Via("desk", "#ops"))
        return "gave up"

    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:
        got: dict[str, Any] = {}

        async def call() -> None:
            got["result"] = await client.call_tool("impatient", {})

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        scopes[0].cancel()  # the body stops waiting (its own timeout, a sibling's failure, ...)
        assert [c.outcome for c in await channel.closings(1)] == ["withdrawn"]
        assert channel.desk is not None
        assert (await channel.desk.reply(prompt.token, APPROVER, "accept", {"value": True})).status == "closed"
    assert got["result"].content[0].text == "gave up"


async def test_an_update_for_a_task_that_has_ended_is_acknowledged_and_ignored() -> None:
    server, channel = approvals_server()
    async with Client(server, mode="auto", extensions=[TasksExtension()]) as client:
        handed = await client.call_tool("release", {"version": "6"})
        task_id = handed.meta["task"]["taskId"] if handed.meta else ""
        await answer(channel, 1, {"value": True})
        await answer(channel, 2, {"value": "prod"})
        await poll_until(client, task_id, {"completed"})
        late = {"x": {"action": "accept", "content": {"value": "staging"}}}
        assert await raw(client, "tasks/update", {"taskId": task_id, "inputResponses": late}) == {
            "resultType": "complete"
        }
