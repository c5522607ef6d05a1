"""`elicitkit.fastmcp.adopt`: tools written for fastmcp alone, with fastmcp's own `ctx.elicit`, ask on both eras.

No tool here mentions elicitkit: each asks with `await ctx.elicit(message, response_type)` and reads fastmcp's
result types, exactly as fastmcp documents them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client, Context, FastMCP
from fastmcp.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import BaseModel

from elicitkit import Elicitation
from elicitkit.fastmcp import adopt
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.fastmcp.scenes import FASTMCP_MODERN_ERROR, connect, fastmcp_handler, unmodified_server
from tests.scenes import ERAS, settled, text_of

pytestmark = pytest.mark.anyio

SECRET = "fastmcp-adopt-test-secret-0123456789abcdef"


class Approval(BaseModel):
    approved: bool
    replicas: int = 2


@dataclass
class Target:
    env: Literal["staging", "prod"]


async def test_an_unmodified_tool_completes_on_both_eras_after_adopt(driver: str, mode: str) -> None:
    server = unmodified_server()
    hitl = adopt(server)
    human = ScriptedHuman(accept({"value": True}))
    async with connect(hitl, driver, mode, human) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call("deploy")
    assert not result.is_error, text_of(result)
    assert text_of(result) == "AcceptedElicitation[Any] accept True"
    assert [q.message for q in human.transcript] == ["Deploy?"]
    await settled(hitl)


async def test_fastmcp_s_response_types_come_back_as_fastmcp_s_results(driver: str, mode: str) -> None:
    server = FastMCP("shapes")
    hitl = adopt(server)
    runs: list[str] = []

    @server.tool
    async def shapes(ctx: Context) -> str:
        runs.append("started")
        got: list[Any] = []
        for message, response_type in (
            ("Sure?", bool),
            ("Name?", str),
            ("Size?", ["small", "large"]),
            ("Priority?", {"lo": {"title": "Low"}, "hi": {"title": "High"}}),
            ("Checks?", [["lint", "tests", "canary"]]),
            ("Approve?", Approval),
            ("Target?", Target),
            ("Really?", bool),
            ("Still there?", bool),
        ):
            result = await ctx.elicit(message, response_type)
            got.append(result.data if result.action == "accept" else type(result).__name__)
        return repr(got)

    human = ScriptedHuman(
        accept({"value": True}),
        accept({"value": "ada"}),
        accept({"value": "large"}),
        accept({"value": "hi"}),
        accept({"value": ["lint", "canary"]}),
        accept({"approved": True}),  # `replicas` keeps its default
        accept({"env": "prod"}),
        decline(),
        cancel(),
    )
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("shapes")
    assert text_of(result) == repr(
        [
            True,
            "ada",
            "large",
            "hi",
            ["lint", "canary"],
            Approval(approved=True, replicas=2),
            Target(env="prod"),
            "DeclinedElicitation",
            "CancelledElicitation",
        ]
    )
    assert runs == ["started"]  # on 2026-07-28 the body waited between the nine rounds; it never ran again
    # The schema that went out is fastmcp's own, for the same response type.
    assert human.transcript[2].schema == {
        "type": "object",
        "properties": {"value": {"type": "string", "enum": ["small", "large"], "title": "Value"}},
        "required": ["value"],
    }
    await settled(hitl)


async def test_a_client_without_forms_is_asked_through_the_model(driver: str, mode: str) -> None:
    server = unmodified_server()
    hitl = adopt(server)
    human = ScriptedHuman(accept({"value": True}))
    async with connect(hitl, driver, mode, None) as client:
        result = await call_through_model(client.client, "deploy", {}, human)
    assert text_of(result) == "AcceptedElicitation[Any] accept True"
    assert [q.message for q in human.transcript] == ["Deploy?"]


async def test_adopting_one_server_leaves_fastmcp_s_own_ctx_elicit_on_every_other() -> None:
    adopted, plain = unmodified_server("adopted"), unmodified_server("plain")
    adopt(adopted)
    human = ScriptedHuman(accept({"value": True}), repeat_last=True)
    async with Client(adopted, elicitation_handler=fastmcp_handler(human)) as client:
        assert text_of(await client.call_tool("deploy", {})) == "AcceptedElicitation[Any] accept True"
    async with Client(plain, elicitation_handler=fastmcp_handler(human)) as client:
        with pytest.raises(ToolError, match=FASTMCP_MODERN_ERROR.replace(".", r"\.")):
            await client.call_tool("deploy", {})


def test_adopt_uses_the_elicitation_already_attached_or_attaches_one_with_the_options_given() -> None:
    server = unmodified_server()
    hitl = Elicitation(server, timeout=30)
    assert adopt(server) is hitl
    assert adopt(server) is hitl  # adopting twice changes nothing
    with pytest.raises(ValueError, match="already has an Elicitation attached"):
        adopt(server, timeout=5)
    fresh = unmodified_server()
    assert adopt(fresh, timeout=5).timeout == 5


def durable_node(store: str, effects: list[str]) -> FastMCP:
    """A fastmcp server (named like its twin, so `requestState` opens on both) whose tool asks twice."""
    server = FastMCP("durable")
    adopt(server, store=store, secret=SECRET)

    @server.tool
    async def order(item: str, ctx: Context) -> str:
        quantity = await ctx.elicit(f"Quantity of {item}?", int)
        effects.append(f"asked for {quantity.data}")
        ship = await ctx.elicit(f"Ship {quantity.data} {item}?", bool)
        return f"{quantity.data} {item}, shipped={ship.data}"

    return server


async def answer_round(client: Client, asked: InputRequiredResult, log: list[str]) -> Any:
    """Answer every question in `asked` by its message, as a person would, and send the retry."""
    replies = {"Quantity of tea?": 3, "Ship 3 tea?": True}
    answers = {}
    for key, request in (asked.input_requests or {}).items():
        message = request.params.message  # type: ignore[union-attr]
        log.append(message)
        answers[key] = accept({"value": replies[message]})
    return await client.session.call_tool(
        "order", {"item": "tea"}, input_responses=answers, request_state=asked.request_state, allow_input_required=True
    )


async def test_a_restarted_server_on_the_same_sqlite_file_goes_on_from_the_journal(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    effects: list[str] = []
    asked_messages: list[str] = []
    before, after = durable_node(store, effects), durable_node(store, effects)
    async with Client(before, elicitation_handler=fastmcp_handler(ScriptedHuman())) as one:
        first = await one.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        second = await answer_round(one, first, asked_messages)
        assert isinstance(second, InputRequiredResult)
    assert effects == ["asked for 3"]
    # The first server has stopped (its lifespan ended) with "Ship 3 tea?" open; the client's answer reaches its
    # restarted twin, which replays the run from the journal and takes that answer.
    async with Client(after, elicitation_handler=fastmcp_handler(ScriptedHuman())) as two:
        result = await answer_round(two, second, asked_messages)
    assert isinstance(result, CallToolResult)
    assert text_of(result) == "3 tea, shipped=True"
    assert asked_messages == ["Quantity of tea?", "Ship 3 tea?"]  # nobody was asked anything twice
    assert effects == ["asked for 3", "asked for 3"]  # the replay went on past the journaled quantity at once


async def test_an_answer_sent_with_the_first_call_is_not_taken_the_question_is_asked() -> None:
    # fastmcp's guard pattern as documented reads `ctx.input_responses` alone, so a client that sends an answer
    # with its first call skips the question. An adopted `ctx.elicit` takes an answer only with the sealed
    # requestState of the round that asked it.
    server = unmodified_server()
    adopt(server)
    unasked = {key: accept({"value": True}) for key in ("deploy", "value", "approval", "0")}
    async with Client(server, mode="auto", elicitation_handler=fastmcp_handler(ScriptedHuman())) as client:
        first = await client.session.call_tool("deploy", {}, input_responses=unasked, allow_input_required=True)
        assert isinstance(first, InputRequiredResult), first
        assert [r.params.message for r in (first.input_requests or {}).values()] == ["Deploy?"]  # type: ignore[union-attr]
        answers = {key: accept({"value": False}) for key in first.input_requests or {}}
        done = await client.session.call_tool(
            "deploy", {}, input_responses=answers, request_state=first.request_state, allow_input_required=True
        )
    assert isinstance(done, CallToolResult) and not done.is_error, done
    assert text_of(done) == "AcceptedElicitation[Any] accept False"  # the answer given when asked, not the unasked one
