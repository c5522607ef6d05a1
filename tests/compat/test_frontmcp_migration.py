"""FrontMCP's documented elicitation examples, rewritten with elicitkit, give the same results on the wire.

Each tool below is one of FrontMCP's own examples (docs/frontmcp/servers/elicitation.mdx): the form
(`delete-account`), the URL flow (`connect-github`), the model fallback ("Universal LLM Support"), the
timeout and not-supported handlers, and schema validation's `InvalidInputError` with its `path` list.
They run on both eras where the flow exists there, through the SDK's own client.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation
from elicitkit.compat.frontmcp import (
    ElicitationNotSupportedError,
    ElicitationTimeoutError,
    InvalidInputError,
    supports_elicitation,
)
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.scenes import text_of

pytestmark = pytest.mark.anyio


class DeleteConfirmation(BaseModel):
    confirmed: bool = Field(description="Confirm deletion")
    reason: str | None = Field(default=None, description="Reason for deletion")


class Confirm(BaseModel):
    confirmed: bool


class Details(BaseModel):
    name: str
    age: float


def delete_account_server(**options: Any) -> tuple[MCPServer, list[str]]:
    """FrontMCP's `DeleteAccountTool`, in elicitkit."""
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server, timeout=10, **options)
    deleted: list[str] = []

    @server.tool(name="delete-account")
    async def delete_account(user_id: str, ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit(
            ctx,
            f"Are you sure you want to permanently delete account {user_id}? This cannot be undone.",
            DeleteConfirmation,
        )
        if result.status != "accept":
            return {"cancelled": True, "reason": f"User {result.status}d the request"}
        assert isinstance(result, Accepted)
        if not result.data.confirmed:
            return {"cancelled": True, "reason": "User did not confirm deletion"}
        deleted.append(user_id)
        return {"deleted": True, "userId": user_id}

    return server, deleted


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (accept({"confirmed": True, "reason": "closing"}), {"deleted": True, "userId": "u-42"}),
        (accept({"confirmed": False}), {"cancelled": True, "reason": "User did not confirm deletion"}),
        (decline(), {"cancelled": True, "reason": "User declined the request"}),
        (cancel(), {"cancelled": True, "reason": "User canceld the request"}),  # FrontMCP's own `${status}d`
    ],
    ids=["accept", "not-confirmed", "decline", "cancel"],
)
async def test_the_form_example_gives_frontmcps_results(mode: str, reply: ElicitResult, expected: Any) -> None:
    server, deleted = delete_account_server()
    person = ScriptedHuman(reply)
    async with Client(server, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("delete-account", {"user_id": "u-42"})
    assert not result.is_error, text_of(result)
    assert result.structured_content == expected
    assert deleted == (["u-42"] if expected.get("deleted") else [])
    [asked] = person.transcript
    assert asked.message == "Are you sure you want to permanently delete account u-42? This cannot be undone."
    assert asked.schema is not None
    assert asked.schema["properties"]["confirmed"] == {"type": "boolean", "description": "Confirm deletion"}
    assert asked.schema["properties"]["reason"]["type"] == "string"
    assert asked.schema["properties"]["reason"]["description"] == "Reason for deletion"
    assert asked.schema.get("required") == ["confirmed"]


async def test_the_url_example_carries_your_own_elicitation_id(mode: str) -> None:
    """FrontMCP's `connect-github`: an opaque id you generate, mapped to the session on your side."""
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server, timeout=10)
    states: dict[str, str] = {}

    @server.tool(name="connect-github")
    async def connect_github(ctx: Context) -> dict[str, Any]:
        elicitation_id = "gh-3f2a9c"  # FrontMCP's example: randomUUID(); any 1-128 letters, digits, - and _
        states[elicitation_id] = "github"
        result = await hitl.elicit_url(
            ctx,
            "Click the link to authorize FrontMCP to access your GitHub account",
            f"https://github.example/login/oauth/authorize?state={elicitation_id}",
            elicitation_id=elicitation_id,
        )
        if result.status != "accept":
            return {"connected": False, "reason": f"Authorization {result.status}d"}
        return {"connected": True}

    seen: list[ElicitRequestURLParams] = []

    async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        seen.append(params)
        return ElicitResult(action="accept" if len(seen) == 1 else "decline")

    async with Client(server, mode=mode, elicitation_callback=person) as client:
        connected = await client.call_tool("connect-github", {})
        refused = await client.call_tool("connect-github", {})
    assert connected.structured_content == {"connected": True}
    assert refused.structured_content == {"connected": False, "reason": "Authorization declined"}
    assert [p.mode for p in seen] == ["url", "url"]
    assert seen[0].url == "https://github.example/login/oauth/authorize?state=gh-3f2a9c"
    if mode == "legacy":  # 2025-11-25 carries the id; 2026-07-28 has no elicitationId on the wire
        assert [p.elicitation_id for p in seen] == ["gh-3f2a9c", "gh-3f2a9c"]


async def test_the_fallback_example_hands_the_model_frontmcps_pending_shape(mode: str) -> None:
    """FrontMCP's "Universal LLM Support": `_meta.elicitationPending`, then `sendElicitationResult`."""
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server, timeout=10)

    @server.tool(name="delete-file")
    async def delete_file(path: str, ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit(ctx, f'Delete "{path}"? This cannot be undone.', Confirm)
        if not isinstance(result, Accepted) or not result.data.confirmed:
            return {"deleted": False, "reason": "User did not confirm"}
        return {"deleted": True, "path": path}

    async with Client(server, mode=mode) as client:  # no elicitation capability: the model asks
        first = await client.call_tool("delete-file", {"path": "/tmp/report.txt"})
        pending = (first.meta or {})["elicitationPending"]
        assert set(pending) >= {"elicitId", "message", "schema", "instructions"}
        assert pending["message"] == 'Delete "/tmp/report.txt"? This cannot be undone.'
        assert pending["schema"]["properties"]["confirmed"]["type"] == "boolean"
        assert "sendElicitationResult" in pending["instructions"]
        final = await client.call_tool(
            "sendElicitationResult",
            {"elicitId": pending["elicitId"], "action": "accept", "content": {"confirmed": True}},
        )
    assert final.structured_content == {"deleted": True, "path": "/tmp/report.txt"}


async def test_the_fallback_example_through_a_model_that_declines(mode: str) -> None:
    server, deleted = delete_account_server()
    async with Client(server, mode=mode) as client:
        result = await call_through_model(client, "delete-account", {"user_id": "u-7"}, ScriptedHuman(decline()))
    assert result.structured_content == {"cancelled": True, "reason": "User declined the request"}
    assert deleted == []


async def test_the_timeout_example_catches_elicitation_timeout_error_with_ttl_and_elicit_id() -> None:
    """FrontMCP's `approval-tool`: `error.ttl` in milliseconds, `error.elicitId`."""
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server)
    ids: list[str] = []
    hitl.after_ask(stages={"sent"})(lambda question, stage: ids.append(question.id))

    @server.tool(name="approval-tool")
    async def approval(action: str, ctx: Context) -> str:
        try:
            await hitl.elicit(ctx, f"Approve {action}?", Confirm, timeout=0.3)
        except ElicitationTimeoutError as error:
            return f"Elicitation timed out after {error.ttl}ms ({error.elicit_id})"
        return "answered"

    async def nobody(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        await anyio.Event().wait()  # nobody ever answers; the server withdraws the request at its timeout
        raise AssertionError("unreachable")

    with anyio.fail_after(10):
        async with Client(server, mode="legacy", elicitation_callback=nobody) as client:
            result = await client.call_tool("approval-tool", {"action": "deploy"})
    assert text_of(result) == f"Elicitation timed out after 300ms ({ids[0]})"


async def test_the_not_supported_example_catches_elicitation_not_supported_error(mode: str) -> None:
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server, fallback="error")

    @server.tool(name="question")
    async def question(ctx: Context) -> dict[str, Any]:
        try:
            await hitl.elicit(ctx, "Question?", Confirm)
        except ElicitationNotSupportedError as error:
            return {"skippedConfirmation": True, "reason": str(error)}
        return {"skippedConfirmation": False}

    async with Client(server, mode=mode) as client:  # declares no elicitation
        result = await client.call_tool("question", {})
    assert result.structured_content is not None
    assert result.structured_content["skippedConfirmation"] is True


async def test_invalid_content_raises_invalid_input_error_with_list_paths(mode: str) -> None:
    """FrontMCP: `Details: [{"path": ["age"], "message": ...}]` — `Problem.to_json()` gives that shape."""
    server = MCPServer("frontmcp-examples")
    hitl = Elicitation(server, timeout=10)

    @server.tool()
    async def details(ctx: Context) -> dict[str, Any]:
        try:
            await hitl.elicit(ctx, "Enter your details", Details)
        except InvalidInputError as error:
            return {"details": [problem.to_json() for problem in error.problems]}
        return {"details": []}

    person = ScriptedHuman(accept({"name": "John", "age": "thirty"}), repeat_last=True)
    async with Client(server, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("details", {})
    assert result.structured_content == {"details": [{"path": ["age"], "message": "must be a number"}]}


def test_supports_elicitation_reads_capabilities_as_frontmcp_does() -> None:
    assert supports_elicitation({"elicitation": {"form": {}, "url": {}}}, "url")
    assert supports_elicitation({"elicitation": {}}, "form")  # a bare {} is form only
    assert not supports_elicitation({"elicitation": {}}, "url")
    assert not supports_elicitation({"elicitation": {"url": {}}}, "form")
    assert supports_elicitation({"elicitation": {"url": {}}})
    assert supports_elicitation({"experimental": {"elicitation": {}}}, "form")
    assert not supports_elicitation({}, "form")
    assert not supports_elicitation(None)
