"""`hitl.elicit` and the helpers inside fastmcp tools, on both eras, through fastmcp's client and the SDK's.

The same scenes as tests/test_elicit.py and tests/test_fallback.py cover on the SDK's `MCPServer`.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastmcp")

from fastmcp import Context
from pydantic import BaseModel, Field

from elicitkit import Accepted, Cancelled, Declined
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.fastmcp.scenes import connect, new_server
from tests.scenes import ERAS, assert_idle, settled, text_of

pytestmark = pytest.mark.anyio


class Approval(BaseModel):
    approved: bool
    reason: str | None = None


class Enlistment(BaseModel):
    callsign: str = Field(min_length=2, max_length=6)
    age: int = Field(ge=18, le=99)
    approved: bool


async def test_an_accepted_answer_arrives_as_an_instance_of_the_model(driver: str, mode: str) -> None:
    server, hitl = new_server()

    @server.tool
    async def deploy(version: str, ctx: Context) -> str:
        result = await hitl.elicit(ctx, f"Deploy {version}?", Approval)
        assert isinstance(result, Accepted)
        assert isinstance(result.data, Approval)
        return f"{result.data.approved} {result.data.reason}"

    human = ScriptedHuman(accept({"approved": True, "reason": "green"}))
    async with connect(hitl, driver, mode, human) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call("deploy", {"version": "2.1"})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "True green"
    assert human.transcript[0].message == "Deploy 2.1?"
    assert human.transcript[0].schema == {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["approved"],
    }
    await settled(hitl)


async def test_decline_and_cancel_are_outcomes_the_tool_matches_on(driver: str, mode: str) -> None:
    server, hitl = new_server()

    @server.tool
    async def deploy(ctx: Context) -> str:
        outcomes = []
        for _ in range(3):
            match await hitl.elicit(ctx, "Deploy?", Approval):
                case Accepted(data=Approval(approved=True)):
                    outcomes.append("yes")
                case Accepted():
                    outcomes.append("no")
                case Declined() | Cancelled() as other:
                    outcomes.append(other.action)
        return " ".join(outcomes)

    human = ScriptedHuman(accept({"approved": True}), decline(), cancel())
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("deploy")
    assert text_of(result) == "yes decline cancel"
    await settled(hitl)


async def test_the_helpers_return_bare_values_with_defaults_and_multi_select(driver: str, mode: str) -> None:
    server, hitl = new_server()
    seen: list[Any] = []

    @server.tool
    async def helpers(ctx: Context) -> str:
        for result in (
            await hitl.confirm(ctx, "Sure?", title="Sure"),
            await hitl.text(ctx, "Email?", format="email", max_length=50),
            await hitl.choice(ctx, "Env?", ["staging", "prod"], default="staging"),
            await hitl.titled_choice(ctx, "Region?", {"eu": "Europe", "us": "America"}),
            await hitl.choices(ctx, "Checks?", ["lint", "tests"], min_items=1),
            await hitl.titled_choices(ctx, "Notify?", {"ops": "Ops team", "dev": "Developers"}, max_items=1),
        ):
            assert isinstance(result, Accepted)
            seen.append(result.data)
        return "ok"

    human = ScriptedHuman(
        accept({"value": True}),
        accept({"value": "a@example.com"}),
        accept({}),  # the default stands
        accept({"value": "eu"}),
        accept({"value": ["lint", "tests"]}),
        accept({"value": ["ops"]}),
    )
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("helpers")
    assert text_of(result) == "ok", text_of(result)
    assert seen == [True, "a@example.com", "staging", "eu", ["lint", "tests"], ["ops"]]
    schemas = [exchange.schema["properties"]["value"] for exchange in human.transcript if exchange.schema]
    assert schemas[2] == {"type": "string", "enum": ["staging", "prod"], "default": "staging"}
    assert schemas[4] == {"type": "array", "items": {"type": "string", "enum": ["lint", "tests"]}, "minItems": 1}


async def test_a_two_question_tool_runs_its_body_once_whatever_the_era(driver: str, mode: str) -> None:
    server, hitl = new_server()
    counts = {"started": 0, "finished": 0}

    @server.tool
    async def ship(version: str, ctx: Context) -> str:
        counts["started"] += 1
        first = await hitl.confirm(ctx, f"Ship {version}?")
        second = await hitl.text(ctx, "Release note?")
        counts["finished"] += 1
        assert isinstance(first, Accepted) and isinstance(second, Accepted)
        return f"{version} shipped={first.data} note={second.data}"

    human = ScriptedHuman(accept({"value": True}), accept({"value": "fast"}))
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("ship", {"version": "2.1"})
    assert text_of(result) == "2.1 shipped=True note=fast"
    # On 2026-07-28 the body waited, suspended, between the rounds: it was never run again.
    assert counts == {"started": 1, "finished": 1}
    await settled(hitl)


@pytest.mark.parametrize("driver", ["sdk-http"])  # fastmcp's client checks an answer against the schema itself
async def test_an_answer_that_keeps_breaking_the_schema_fails_the_call_naming_every_offending_field(
    driver: str, mode: str
) -> None:
    server, hitl = new_server(timeout=10)
    body: list[object] = []

    @server.tool
    async def enlist(ctx: Context) -> str:
        body.append("asked")
        body.append(await hitl.elicit(ctx, "Who are you?", Enlistment))
        return "enlisted"

    bad = {"callsign": "zebra-secret-value", "age": 7, "approved": "yes", "colour": "red"}
    human = ScriptedHuman(accept(bad), repeat_last=True)
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("enlist")
        assert_idle(hitl)
    assert result.is_error
    message = text_of(result)
    assert "callsign" in message
    assert "age" in message
    assert "approved: must be true or false" in message
    assert "colour: unknown field" in message
    assert "zebra-secret-value" not in message
    assert body == ["asked"]
    assert len(human.transcript) == 3
    assert human.transcript[1].message.startswith("Who are you?\n\n(The last answer was refused: ")


async def test_a_client_without_forms_gets_the_question_through_the_model(driver: str, mode: str) -> None:
    server, hitl = new_server()
    bodies: list[str] = []

    @server.tool
    async def deploy(version: str, ctx: Context) -> str:
        bodies.append(version)
        approval = await hitl.elicit(ctx, f"Deploy {version}?", Approval)
        target = await hitl.titled_choice(ctx, "Where to?", {"eu": "Europe", "us": "America"})
        checks = await hitl.choices(ctx, "Which checks?", ["lint", "tests", "canary"], min_items=1)
        assert isinstance(approval, Accepted) and isinstance(target, Accepted) and isinstance(checks, Accepted)
        return f"{version} to {target.data} after {'+'.join(checks.data)} ({approval.data.reason})"

    human = ScriptedHuman(
        accept({"approved": True, "reason": "ok"}), accept({"value": "eu"}), accept({"value": ["lint", "canary"]})
    )
    async with connect(hitl, driver, mode, None) as client:
        inner: Any = client.client
        result = await call_through_model(inner, "deploy", {"version": "2.1"}, human)
    assert text_of(result) == "2.1 to eu after lint+canary (ok)"
    assert [q.message for q in human.transcript] == ["Deploy 2.1?", "Where to?", "Which checks?"]
    assert bodies == ["2.1"]
    await settled(hitl)


async def test_the_fallback_tool_is_listed_only_to_clients_that_need_it(driver: str, mode: str) -> None:
    server, hitl = new_server()

    @server.tool
    async def deploy(ctx: Context) -> str:
        return "ok"

    for human, listed in ((ScriptedHuman(), False), (None, True)):
        async with connect(hitl, driver, mode, human) as client:
            inner: Any = client.client
            tools = await inner.list_tools()
            names = {tool.name for tool in (tools.tools if hasattr(tools, "tools") else tools)}
        assert ("sendElicitationResult" in names) is listed, names
        assert "deploy" in names


@pytest.mark.parametrize(("reply", "outcome"), [(accept(), "agreed to open it"), (decline(), "declined")])
async def test_an_external_link_returns_once_the_person_agrees_or_declines_to_open_it(
    driver: str, mode: str, reply: Any, outcome: str
) -> None:
    server, hitl = new_server(timeout=10)
    checkout = "https://pay.example.com/checkout/42"

    @server.tool
    async def pay(ctx: Context) -> str:
        match await hitl.elicit_url(ctx, "Pay the invoice", checkout):
            case Accepted(data=None):
                return "agreed to open it"
            case Declined():
                return "declined"
            case other:
                return f"unexpected {other!r}"

    human = ScriptedHuman(reply)
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("pay")
    assert text_of(result) == outcome
    assert [(q.message, q.schema) for q in human.transcript] == [("Pay the invoice", None)]
    await settled(hitl)
