"""No question's schema is larger than a person could fill in, however it was asked.

The limits are checked where every schema is checked, so a raw schema, a
Python type, a helper's choices and an agent's schema through the `elicit`
tool all meet them, and the refusal names the limit.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import create_model
from starlette.requests import Request

from elicitkit import Elicitation, SchemaError
from elicitkit._schema import compile_schema
from elicitkit.channels import WebInbox
from elicitkit.testing import ScriptedHuman
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio

USER = "X-Test-User"


def raw(properties: dict[str, Any], **root: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **root}


def choices(count: int) -> list[str]:
    return [f"option {n}" for n in range(count)]


def text(characters: int) -> str:
    return "x" * characters


PAST_A_LIMIT = {
    "fields": (raw({f"f{n}": {"type": "boolean"} for n in range(101)}), "101 fields, over elicitkit's limit of 100"),
    "enum": (
        raw({"env": {"type": "string", "enum": choices(501)}}),
        "'env': 501 choices, over elicitkit's limit of 500",
    ),
    "enumNames": (
        raw({"env": {"type": "string", "enum": choices(600), "enumNames": choices(600)}}),
        "600 choices, over elicitkit's limit of 500",
    ),
    "oneOf": (
        raw({"env": {"oneOf": [{"const": c, "title": c} for c in choices(501)]}}),
        "'env': 501 choices, over elicitkit's limit of 500",
    ),
    "items.enum": (
        raw({"tags": {"type": "array", "items": {"type": "string", "enum": choices(501)}}}),
        "'tags': 501 choices",
    ),
    "items.anyOf": (
        raw({"tags": {"type": "array", "items": {"anyOf": [{"const": c, "title": c} for c in choices(501)]}}}),
        "'tags': 501 choices",
    ),
    "field name": (
        raw({text(1001): {"type": "boolean"}}),
        "a field name is 1,001 characters, over elicitkit's limit of 1,000",
    ),
    "title": (raw({"ok": {"type": "boolean", "title": text(1001)}}), "'ok': 'title' is 1,001 characters"),
    "description": (
        raw({"ok": {"type": "boolean", "description": text(10_001)}}),
        "'ok': 'description' is 10,001 characters, over elicitkit's limit of 10,000",
    ),
    "default": (raw({"note": {"type": "string", "default": text(10_001)}}), "'note': 'default' is 10,001 characters"),
    "choice": (raw({"env": {"type": "string", "enum": ["a", text(1001)]}}), "'env': a choice is 1,001 characters"),
    "choice title": (
        raw({"env": {"oneOf": [{"const": "a", "title": text(1001)}]}}),
        "'env': a choice's title is 1,001 characters",
    ),
    "root description": (raw({}, description=text(10_001)), "Raw schema: 'description' is 10,001 characters"),
    "$schema": (raw({}, **{"$schema": text(1001)}), "Raw schema: '$schema' is 1,001 characters"),
    "bytes": (
        raw({f"f{n}": {"type": "boolean", "description": text(700)} for n in range(100)}),
        "bytes as JSON, over elicitkit's limit of 65,536 bytes for one question",
    ),
}


@pytest.mark.parametrize("case", PAST_A_LIMIT)
def test_a_raw_schema_past_a_limit_is_refused_with_the_limit_named(case: str) -> None:
    schema, named = PAST_A_LIMIT[case]
    with pytest.raises(SchemaError) as refused:
        compile_schema(schema)
    assert named in str(refused.value)
    assert len(str(refused.value)) < 200  # the message names the limit; it never repeats what was too long


def test_a_schema_at_every_limit_is_taken() -> None:
    fields = {f"f{n}": {"type": "boolean"} for n in range(98)}
    fields["env"] = {"type": "string", "enum": [f"{n}" for n in range(500)], "title": text(1000)}
    fields["note"] = {"type": "string", "description": text(10_000), "default": text(100)}
    assert len(compile_schema(raw(fields, **{"$schema": text(1000)})).properties) == 100


def test_a_python_type_past_a_limit_is_refused_naming_the_type_and_the_field() -> None:
    wide = create_model("Wide", **{f"f{n}": (bool, False) for n in range(101)})  # type: ignore[call-overload]
    with pytest.raises(SchemaError, match=r"^Cannot ask with 'Wide': 101 fields, over elicitkit's limit of 100$"):
        compile_schema(wide)
    region = Literal[tuple(choices(600))]  # type: ignore[valid-type]
    deploy = create_model("Deploy", region=(region, ...))
    with pytest.raises(SchemaError, match=r"^Field 'Deploy.region': 600 choices, over elicitkit's limit of 500$"):
        compile_schema(deploy)


# -- over real HTTP, on both eras ------------------------------------------------------------------------------


async def header_identity(request: Request) -> str | None:
    return request.headers.get(USER)


async def test_the_elicit_tool_refuses_a_twenty_thousand_field_schema_and_nobody_is_asked(mode: str) -> None:
    server = MCPServer("agent-desk")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity)
    hitl.install_elicit_tool()
    asked: list[object] = []
    hitl.after_ask(lambda question, stage: asked.append(question))
    huge = raw({f"field_{n}": {"type": "string", "title": f"Field {n}"} for n in range(20_000)})
    async with serving(hitl) as url, Client(url, mode=mode) as client:
        result = await client.call_tool("elicit", {"message": "Fill this in", "schema": huge, "uiType": "web"})
        async with httpx.AsyncClient(headers={USER: "anonymous"}) as browser:
            inbox = await browser.get(url.removesuffix("/mcp") + "/elicit/inbox")
    assert result.is_error
    assert text_of(result) == (
        "The schema cannot be shown as a form: Raw schema: 20,000 fields, over elicitkit's limit of 100"
    )
    assert asked == []
    assert hitl.pending_questions == 0
    assert inbox.status_code == 200
    assert 'class="question"' not in inbox.text and len(inbox.content) < 20_000


async def test_a_tool_asking_past_a_limit_gets_a_schema_error_before_anyone_is_asked(mode: str) -> None:
    server = MCPServer("tool-desk")
    hitl = Elicitation(server)

    @server.tool()
    async def pick(ctx: Context) -> str:
        try:
            await hitl.choice(ctx, "Which build?", [f"build {n}" for n in range(501)])
        except SchemaError as exc:
            return str(exc)
        return "asked"

    @server.tool()
    async def describe(ctx: Context) -> str:
        try:
            await hitl.elicit(ctx, "Notes?", raw({"note": {"type": "string", "description": text(20_000)}}))
        except SchemaError as exc:
            return str(exc)
        return "asked"

    nobody = ScriptedHuman()  # asked at all, it fails the test
    async with serving(hitl) as url, Client(url, mode=mode, elicitation_callback=nobody) as client:
        picked = text_of(await client.call_tool("pick", {}))
        described = text_of(await client.call_tool("describe", {}))
    assert picked == "Raw schema property 'value': 501 choices, over elicitkit's limit of 500"
    assert described == (
        "Raw schema property 'note': 'description' is 20,000 characters, over elicitkit's limit of 10,000"
    )
    assert hitl.pending_questions == 0


async def test_a_message_longer_than_a_person_would_read_is_refused_before_anyone_is_asked(mode: str) -> None:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    from elicitkit import Elicitation

    server = MCPServer("long-message")
    hitl = Elicitation(server)

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "x" * 20_001)
        except ValueError as exc:
            return f"refused: {exc}"
        return "asked"

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("ask", {})
    assert result.content[0].text == "refused: An elicitation's message may have at most 20,000 characters, not 20,001"  # type: ignore[union-attr]
