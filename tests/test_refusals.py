"""One rule on every route: an answer that breaks the schema never reaches the tool or the journal.

The question stays open and is put again, saying what was wrong (without quoting the answer), up to
three attempts; after that `elicit` raises `InvalidElicitationContent` naming every field.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitResult
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, InvalidElicitationContent, PendingQuestion
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import Transport, connect, new_server, pending_id, send_answer, text_of

pytestmark = pytest.mark.anyio

BAD = {"replicas": 99}
GOOD = {"replicas": 3}
NOTE = "(The last answer was refused: replicas: must be at most 5. Please answer again.)"
SECRET = "refusals-test-secret-0123456789abcdef0123"


class Scale(BaseModel):
    replicas: int = Field(ge=1, le=5)


def scale_server(**options: Any) -> tuple[MCPServer, Elicitation, list[str]]:
    server, hitl = new_server("refusals", **options)
    seen: list[str] = []

    @server.tool()
    async def scale(ctx: Context) -> str:
        try:
            result = await hitl.elicit(ctx, "How many replicas?", Scale)
        except InvalidElicitationContent as exc:
            seen.append("gave up")
            return f"gave up: {exc}"
        assert isinstance(result, Accepted)
        seen.append(str(result.data.replicas))
        return f"scaled to {result.data.replicas}"

    return server, hitl, seen


async def test_a_client_that_shows_forms_is_asked_again_saying_why(mode: str, transport: Transport) -> None:
    server, hitl, seen = scale_server()
    human = ScriptedHuman(accept(BAD), accept(GOOD))
    async with connect(server, transport, mode, elicitation_callback=human) as client:
        result = await client.call_tool("scale", {})
    assert text_of(result) == "scaled to 3"
    assert [e.message for e in human.transcript] == ["How many replicas?", f"How many replicas?\n\n{NOTE}"]
    assert seen == ["3"]
    assert hitl.active_runs == 0


async def test_a_client_that_keeps_sending_bad_answers_gets_three_tries(mode: str) -> None:
    server, _, seen = scale_server()
    human = ScriptedHuman(accept(BAD), repeat_last=True)
    async with Client(server, mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("scale", {})
    assert text_of(result).startswith("gave up: ") and "replicas: must be at most 5" in text_of(result)
    assert len(human.transcript) == 3
    assert seen == ["gave up"]


async def test_the_model_is_told_the_question_is_still_open_until_its_tries_are_used(mode: str) -> None:
    server, _, seen = scale_server()
    async with Client(server, mode=mode) as client:  # no forms: the model relays the person
        elicit_id = pending_id(await client.call_tool("scale", {}))
        for _ in range(2):
            refused = await send_answer(client, elicit_id, "accept", BAD)
            assert refused.is_error
            assert "replicas: must be at most 5" in text_of(refused) and "still open" in text_of(refused)
            assert "99" not in text_of(refused)
        last = await send_answer(client, elicit_id, "accept", BAD)
    assert text_of(last).startswith("gave up: ")
    assert seen == ["gave up"]


async def test_a_fallback_handler_is_asked_again_saying_why(mode: str) -> None:
    asked: list[str] = []
    replies = iter([BAD, GOOD])

    async def handler(ctx: Context, question: PendingQuestion) -> ElicitResult:
        asked.append(question.message)
        return ElicitResult(action="accept", content=next(replies))

    server, _, seen = scale_server(fallback=handler)
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("scale", {})
    assert text_of(result) == "scaled to 3"
    assert asked == ["How many replicas?", f"How many replicas?\n\n{NOTE}"]
    assert seen == ["3"]


async def test_a_refused_answer_is_never_journaled(tmp_path: Any) -> None:
    """A retry on 2026-07-28 with a bad answer leaves the journal empty, so a replay asks again."""
    server, hitl, _ = scale_server(store=f"sqlite:///{tmp_path / 'state.db'}", secret=SECRET)
    human = ScriptedHuman(accept(BAD), accept(GOOD))
    entries: list[int] = []
    store = hitl._engine.store
    append, take = store.append_journal, store.take_round  # type: ignore[attr-defined]

    async def appending(run_id: str, seq: int, sealed: bytes) -> bool:
        entries.append(seq)
        return await append(run_id, seq, sealed)

    async def taking(
        run_id: str, token: str, expires_at: float, journaled: dict[int, bytes], *rest: Any, **options: Any
    ) -> Any:
        entries.extend(journaled)  # a retry's answers are journaled with its round, in one step
        return await take(run_id, token, expires_at, journaled, *rest, **options)

    store.append_journal = appending  # type: ignore[method-assign]
    store.take_round = taking  # type: ignore[attr-defined]
    async with Client(server, mode="auto", elicitation_callback=human) as client:
        assert text_of(await client.call_tool("scale", {})) == "scaled to 3"
    assert entries == [1]  # only the good answer, once
