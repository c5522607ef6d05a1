"""What the client says beside its answer: the `_meta` of its reply reaches the tool, hooks and the audit trail;
and clients that declare elicitation where early clients did (`experimental.elicitation`) are shown forms."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context
from mcp_types import ElicitRequestParams, ElicitResult

from elicitkit import Accepted, Cancelled, Declined, ElicitationResult, Outcome, QuestionInfo
from tests.channels.tasking import TasksExtension, poll_until, raw
from tests.legacy_wire import LegacySession
from tests.scenes import new_server, serve_http, text_of
from tests.test_sessions import asked

pytestmark = pytest.mark.anyio

META = {"com.example/device": "phone", "com.example/answered-in-ms": 1200}


def meta_server() -> tuple[Any, Any, list[ElicitationResult[Any]]]:
    server, hitl = new_server("meta", timeout=10)
    seen: list[ElicitationResult[Any]] = []

    @hitl.after_answer
    def remember(question: QuestionInfo, outcome: Outcome) -> None:
        assert outcome.result is not None
        seen.append(outcome.result)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Deploy?")
        return f"{result.action} {result.meta}"

    return server, hitl, seen


def replying(action: str, meta: dict[str, Any] | None = META) -> Any:
    async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        content = {"value": True} if action == "accept" else None
        return ElicitResult.model_validate({"action": action, "content": content, "_meta": meta})

    return person


@pytest.mark.parametrize(
    ("action", "kind"), [("accept", Accepted), ("decline", Declined), ("cancel", Cancelled)], ids=str
)
async def test_the_reply_s_meta_is_on_every_outcome_and_in_hooks_on_both_eras(
    mode: str, action: str, kind: type
) -> None:
    server, _, seen = meta_server()
    async with Client(server, mode=mode, elicitation_callback=replying(action)) as client:
        result = await client.call_tool("deploy", {})
    assert text_of(result) == f"{action} {META}"
    [outcome] = seen
    assert isinstance(outcome, kind)
    assert outcome.meta == META


async def test_a_reply_without_meta_gives_none_and_results_compare_without_it(mode: str) -> None:
    server, _, seen = meta_server()
    async with Client(server, mode=mode, elicitation_callback=replying("accept", None)) as client:
        result = await client.call_tool("deploy", {})
    assert text_of(result) == "accept None"
    assert seen == [Accepted(data=True, content={"value": True})]
    assert Accepted(data=1, meta={"a": 1}) == Accepted(data=1)


async def test_the_audit_record_of_the_answer_carries_the_reply_s_meta(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="elicitkit.audit")
    server, _, _ = meta_server()
    async with Client(server, mode=mode, elicitation_callback=replying("accept")) as client:
        await client.call_tool("deploy", {})
    [answered] = [r.audit for r in caplog.records if r.name == "elicitkit.audit" and r.audit["event"] == "answer"]  # type: ignore[attr-defined]
    assert answered["meta"] == META


async def test_a_task_update_s_meta_reaches_the_tool() -> None:
    server, hitl = new_server("meta-task", timeout=10)
    schema = {"type": "object", "properties": {"value": {"type": "boolean"}}, "required": ["value"]}

    @server.tool(structured_output=False)  # the test's task client resolves a handle to content-only results
    async def deploy(ctx: Context) -> str:
        result = await hitl.elicit(ctx, "Deploy?", schema, task=True)
        return f"{result.action} {result.meta}"

    nobody: Any = replying("cancel")  # the client shows forms; the task's answer comes with tasks/update
    async with Client(server, mode="auto", extensions=[TasksExtension()], elicitation_callback=nobody) as client:
        handed = await client.call_tool("deploy", {})
        task = handed.meta["task"] if handed.meta else {}
        waiting = await poll_until(client, task["taskId"], {"input_required"})
        [key] = waiting["inputRequests"]
        update = {key: {"action": "accept", "content": {"value": True}, "_meta": META}}
        await raw(client, "tasks/update", {"taskId": task["taskId"], "inputResponses": update})
        done = await poll_until(client, task["taskId"], {"completed"})
    assert done["result"]["content"][0]["text"] == f"accept {META}"


async def test_a_client_declaring_experimental_elicitation_is_shown_the_form() -> None:
    server, _, _ = meta_server()
    async with serve_http(server) as url, httpx.AsyncClient(timeout=10) as http:
        early = LegacySession(http, url, capabilities={"experimental": {"elicitation": {}}})
        await early.open()
        async with early.call("deploy", {}) as call:
            request = await asked(call)
            assert request["params"]["message"] == "Deploy?"
            assert request["params"]["requestedSchema"]["properties"]["value"]["type"] == "boolean"
            await early.reply(request, {"action": "accept", "content": {"value": True}})
            with anyio.fail_after(5):
                while (message := await call.next_message()) is not None and "result" not in message:
                    pass
        assert message is not None
        assert message["result"]["content"][0]["text"] == "accept None"
        await early.close()
