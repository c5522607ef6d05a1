"""Elicitation over real streamable HTTP (uvicorn on 127.0.0.1), on both protocol eras."""

from __future__ import annotations

import re

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, ErrorData, TextContent
from pydantic import BaseModel, Field

from elicitkit import Accepted, Cancelled, Declined
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline, serve_app, serve_http
from tests.scenes import ERAS, assert_idle, mounted, new_server, text_of

pytestmark = pytest.mark.anyio

ENVIRONMENTS = {"staging": "Staging", "prod-eu": "Production (EU)"}
CHECKS = ["lint", "unit tests", "canary"]


class Crew(BaseModel):
    callsign: str = Field(min_length=2, max_length=6)
    age: int = Field(ge=18, le=99)


def all_open(count: int, human: ScriptedHuman) -> ElicitationFnT:
    """An elicitation callback that lets `human` answer only once `count` questions are open at once."""
    asked: list[str] = []
    everyone_asked = anyio.Event()

    async def callback(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        asked.append(params.message)
        if len(asked) == count:
            everyone_asked.set()
        await everyone_asked.wait()
        return await human(context, params)

    return callback


async def test_a_three_question_tool_gets_typed_answers_and_runs_its_body_once(mode: str) -> None:
    server, hitl = new_server("http-test", timeout=10)
    bodies: list[str] = []

    @server.tool()
    async def enlist(version: str, ctx: Context) -> str:
        bodies.append(version)
        crew = await hitl.elicit(ctx, f"Who ships {version}?", Crew)
        target = await hitl.titled_choice(ctx, "Where to?", ENVIRONMENTS)
        checks = await hitl.choices(ctx, "Which checks?", CHECKS, min_items=1)
        assert isinstance(crew, Accepted)
        assert isinstance(target, Accepted)
        assert isinstance(checks, Accepted)
        assert isinstance(crew.data, Crew)
        assert isinstance(crew.data.age, int)
        return f"{crew.data.callsign}/{crew.data.age} -> {ENVIRONMENTS[target.data]} after {'+'.join(checks.data)}"

    human = ScriptedHuman(
        accept({"callsign": "ada", "age": 36}),
        accept({"value": "prod-eu"}),
        accept({"value": ["lint", "canary"]}),
    )
    async with serve_http(server) as url, Client(url, mode=mode, elicitation_callback=human) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("enlist", {"version": "2.1"})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "ada/36 -> Production (EU) after lint+canary"
        assert bodies == ["2.1"]
        assert [x.message for x in human.transcript] == ["Who ships 2.1?", "Where to?", "Which checks?"]
        target_schema = human.transcript[1].schema
        assert target_schema is not None
        assert target_schema["properties"]["value"]["oneOf"] == [
            {"const": "staging", "title": "Staging"},
            {"const": "prod-eu", "title": "Production (EU)"},
        ]
        assert_idle(hitl)


@pytest.mark.parametrize(("reply", "outcome"), [(decline(), "Declined"), (cancel(), "Cancelled")])
async def test_decline_and_cancel_come_back_as_outcomes(mode: str, reply: ElicitResult, outcome: str) -> None:
    server, hitl = new_server("http-test", timeout=10)

    @server.tool()
    async def release(ctx: Context) -> str:
        match await hitl.elicit(ctx, "Release?", Crew):
            case Declined():
                return "Declined"
            case Cancelled():
                return "Cancelled"
            case Accepted():
                return "Accepted"

    async with serve_http(server) as url, Client(url, mode=mode, elicitation_callback=ScriptedHuman(reply)) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("release", {})
        assert not result.is_error, text_of(result)
        assert text_of(result) == outcome
        assert_idle(hitl)


async def test_questions_asked_concurrently_inside_one_tool_are_open_at_once_and_both_answered(mode: str) -> None:
    server, hitl = new_server("http-test", timeout=10)
    bodies: list[None] = []

    @server.tool()
    async def outfit(ctx: Context) -> str:
        bodies.append(None)
        answers: dict[str, str] = {}

        async def ask(what: str, options: list[str]) -> None:
            result = await hitl.choice(ctx, f"Pick a {what}", options)
            assert isinstance(result, Accepted)
            answers[what] = result.data

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "color", ["red", "blue"])
            tg.start_soon(ask, "size", ["S", "L"])
        return f"{answers['color']} {answers['size']}"

    def person(params: ElicitRequestParams) -> ElicitResult:
        return accept({"value": {"Pick a color": "blue", "Pick a size": "L"}[params.message]})

    human = ScriptedHuman(person, repeat_last=True)
    async with serve_http(server) as url, Client(url, mode=mode, elicitation_callback=all_open(2, human)) as client:
        assert client.protocol_version == ERAS[mode]
        with anyio.fail_after(5):
            result = await client.call_tool("outfit", {})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "blue L"
        assert sorted(x.message for x in human.transcript) == ["Pick a color", "Pick a size"]
        assert len(bodies) == 1
        assert_idle(hitl)


async def test_parallel_tool_calls_from_one_client_each_get_their_own_answers(mode: str) -> None:
    server, hitl = new_server("http-test", timeout=10)
    bodies: list[int] = []

    @server.tool()
    async def ticket(n: int, ctx: Context) -> str:
        bodies.append(n)
        answer = await hitl.text(ctx, f"Label for ticket {n}?")
        assert isinstance(answer, Accepted)
        return f"{n}:{answer.data}"

    def person(params: ElicitRequestParams) -> ElicitResult:
        match = re.fullmatch(r"Label for ticket (\d+)\?", params.message)
        assert match is not None
        return accept({"value": f"label-{match[1]}"})

    human = ScriptedHuman(person, repeat_last=True)
    results: dict[int, CallToolResult] = {}
    async with serve_http(server) as url, Client(url, mode=mode, elicitation_callback=all_open(5, human)) as client:
        assert client.protocol_version == ERAS[mode]

        async def call(n: int) -> None:
            results[n] = await client.call_tool("ticket", {"n": n})

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(call, n)

        assert {n: text_of(r) for n, r in results.items()} == {n: f"{n}:label-{n}" for n in range(5)}
        assert not any(r.is_error for r in results.values())
        assert sorted(bodies) == list(range(5))
        assert len(human.transcript) == 5
        assert_idle(hitl)


async def test_a_server_mounted_in_another_asgi_app_works_on_both_eras(mode: str) -> None:
    server, hitl = new_server("mounted")

    @server.tool()
    async def greet(ctx: Context) -> str:
        name = await hitl.text(ctx, "Your name?")
        return f"hello {name.data}" if isinstance(name, Accepted) else "hello nobody"

    async with serve_app(mounted(server, "/api", server.streamable_http_app())) as base:
        url = f"{base}/api/mcp"
        human = ScriptedHuman(accept({"value": "Ada"}))
        async with Client(url, mode=mode, elicitation_callback=human) as with_forms:
            native = await with_forms.call_tool("greet", {})
        async with Client(url, mode=mode) as without_forms:
            relayed = await call_through_model(without_forms, "greet", {}, ScriptedHuman(accept({"value": "Bo"})))
    assert [c.text for c in native.content if isinstance(c, TextContent)] == ["hello Ada"]
    assert [c.text for c in relayed.content if isinstance(c, TextContent)] == ["hello Bo"]
    assert hitl.active_runs == 0
