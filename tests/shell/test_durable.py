"""A shell tool's run on a durable store: another node (or a restarted one) runs the script again, asking nothing twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult

from elicitkit.testing import ScriptedHuman, accept
from tests.shell.scenes import EXAMPLE, shell_server

pytestmark = pytest.mark.anyio

SECRET = "shell-durable-secret-0123456789abcdef0123456"


def messages(result: InputRequiredResult) -> list[str]:
    return [request.params.message for request in (result.input_requests or {}).values()]  # type: ignore[union-attr]


async def answer(
    client: Client, previous: InputRequiredResult, content: dict[str, Any]
) -> CallToolResult | InputRequiredResult:
    replies: dict[str, ElicitResult] = {key: accept(content) for key in previous.input_requests or {}}
    return await client.session.call_tool(
        "release",
        {"version": "2.1"},
        input_responses=replies,  # type: ignore[arg-type]
        request_state=previous.request_state,
        allow_input_required=True,
    )


def node(store: str) -> MCPServer:
    server, _ = shell_server(EXAMPLE, store=store, secret=SECRET)  # named alike: requestState opens on both
    return server


async def test_a_retry_on_another_node_reruns_the_script_and_answers_its_earlier_questions_from_the_journal(
    tmp_path: Path,
) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    one, two = node(store), node(store)
    with anyio.fail_after(30):
        async with (
            Client(one, mode="auto", elicitation_callback=ScriptedHuman()) as first,
            Client(two, mode="auto", elicitation_callback=ScriptedHuman()) as second,
        ):
            asked = await first.session.call_tool("release", {"version": "2.1"}, allow_input_required=True)
            assert isinstance(asked, InputRequiredResult) and messages(asked) == ["Release 2.1?"]
            then = await answer(first, asked, {"confirmed": True})
            assert isinstance(then, InputRequiredResult) and messages(then) == ["Which channel?"]
            # The second node does not hold the run: its script starts again, and "Release 2.1?" is answered
            # from the journal; the person is asked the next question, not the first one again.
            moved = await answer(second, then, {"choice": "beta"})
            assert isinstance(moved, InputRequiredResult) and messages(moved) == ["Which build?"]
            moved = await answer(second, moved, {"choice": "slim"})
            assert isinstance(moved, InputRequiredResult) and messages(moved) == ["Which checks must pass?"]
            done = await answer(second, moved, {"choices": ["lint"]})
    assert isinstance(done, CallToolResult) and not done.is_error
    assert done.structured_content == {
        "success": True,
        "result": {"message": "Released 2.1", "channel": "beta", "build": "slim", "checks": "lint"},
    }
