"""Hibernation: past `max_suspended` waiting bodies, the longest waiting ones leave memory and replay on their answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation
from elicitkit.stores.memory import MemoryStore
from elicitkit.testing import ScriptedHuman, accept, serve_http
from tests.scenes import pending_id, send_answer, text_of

pytestmark = pytest.mark.anyio

SECRET = "hibernation-test-secret-0123456789abcdef0123"


class Shop:
    """A tool that asks twice around a side effect; it counts how often its body starts and charges."""

    def __init__(self, **options: Any) -> None:
        self.server = MCPServer("hibernation")
        self.hitl = Elicitation(self.server, secret=SECRET, **options)
        self.bodies: list[int] = []
        self.charged: list[int] = []
        hitl = self.hitl

        @self.server.tool()
        async def order(n: int, ctx: Context) -> str:
            self.bodies.append(n)
            quantity = await hitl.text(ctx, f"Quantity for order {n}?")
            if not isinstance(quantity, Accepted):
                return f"order {n} not placed"
            receipt = await hitl.step(ctx, "charge", lambda: self.charged.append(n) or f"r{n}")
            ship = await hitl.confirm(ctx, f"Ship {quantity.data} for order {n}?")
            return f"{receipt}: {quantity.data} shipped={ship.action == 'accept' and ship.data}"


async def start(client: Client, n: int) -> InputRequiredResult:
    asked = await client.session.call_tool("order", {"n": n}, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult), asked
    return asked


async def answer(client: Client, n: int, previous: InputRequiredResult, value: Any) -> Any:
    (key,) = previous.input_requests or {}
    return await client.session.call_tool(
        "order",
        {"n": n},
        input_responses={key: accept({"value": value})},
        request_state=previous.request_state,
        allow_input_required=True,
    )


async def finish(client: Client, n: int, asked: InputRequiredResult) -> str:
    then = await answer(client, n, asked, f"{n}kg")
    assert isinstance(then, InputRequiredResult), then
    assert f"Ship {n}kg for order {n}?" in str(then.input_requests)
    done = await answer(client, n, then, True)
    assert isinstance(done, CallToolResult), done
    return text_of(done)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_past_the_limit_the_longest_waiting_runs_hibernate_and_their_answers_replay_them(
    store: str, tmp_path: Path
) -> None:
    shop = Shop(max_suspended=2, store=f"sqlite:///{tmp_path / 'state.db'}" if store == "sqlite" else None)
    async with Client(shop.server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        asked = [await start(client, n) for n in range(5)]
        assert shop.hitl.active_runs == 2  # orders 0, 1 and 2 left memory; 3 and 4 wait in it
        assert shop.hitl.pending_questions == 2
        results = [await finish(client, n, asked[n]) for n in reversed(range(5))]  # the ones in memory first
    assert results == [f"r{n}: {n}kg shipped=True" for n in reversed(range(5))]
    assert sorted(shop.charged) == [0, 1, 2, 3, 4]  # each side effect once, replayed or not
    # Hibernated bodies ran again up to their question, which their journal answered at once.
    assert sorted(shop.bodies) == [0, 0, 1, 1, 2, 2, 3, 4]
    assert shop.hitl.active_runs == 0


async def test_a_run_answered_after_hibernating_takes_the_answer_once() -> None:
    shop = Shop(max_suspended=1)
    async with Client(shop.server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        first = await start(client, 1)
        await start(client, 2)  # order 1 hibernates
        then = await answer(client, 1, first, "3kg")
        assert isinstance(then, InputRequiredResult)
        with pytest.raises(MCPError) as reused:
            await answer(client, 1, first, "999kg")  # the same round again, now that the run is back
        assert reused.value.error.data["reason"] == "request_state_reused"
        done = await answer(client, 1, then, False)
    assert text_of(done) == "r1: 3kg shipped=False"


async def test_through_the_model_on_both_eras_a_hibernated_question_is_answered_by_its_elicit_id(mode: str) -> None:
    shop = Shop(max_suspended=1)
    async with Client(shop.server, mode=mode) as client:  # no elicitation callback: the model relays the person
        first = await client.call_tool("order", {"n": 1})
        second = await client.call_tool("order", {"n": 2})  # order 1 hibernates
        assert shop.hitl.active_runs == 1
        then = await send_answer(client, pending_id(first), "accept", {"value": "2kg"})
        assert "Ship 2kg for order 1?" in text_of(then)
        done = await send_answer(client, pending_id(then), "accept", {"value": True})
        assert text_of(done) == "r1: 2kg shipped=True"
        stale = await send_answer(client, pending_id(first), "accept", {"value": "9kg"})
        assert stale.is_error  # answered already: its elicitId is spent
        other = await send_answer(client, pending_id(second), "decline")
    assert text_of(other) == "order 2 not placed"
    assert shop.charged == [1]
    assert shop.bodies == [1, 2, 1, 2]  # order 1 back in memory sent order 2 to the store in turn


async def test_over_http_with_sqlite_many_runs_hibernate_and_all_complete(tmp_path: Path) -> None:
    shop = Shop(max_suspended=3, store=f"sqlite:///{tmp_path / 'state.db'}")
    async with serve_http(shop.server) as url, Client(url, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        asked = [await start(client, n) for n in range(10)]
        assert shop.hitl.active_runs == 3
        results: dict[int, str] = {}

        async def one(n: int) -> None:
            results[n] = await finish(client, n, asked[n])

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for n in range(10):
                    tg.start_soon(one, n)
    assert results == {n: f"r{n}: {n}kg shipped=True" for n in range(10)}
    assert sorted(shop.charged) == list(range(10))
    assert shop.hitl.active_runs == 0


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_max_suspended_must_be_a_positive_whole_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_suspended"):
        Elicitation(MCPServer("bad"), max_suspended=bad)


class SlowJournal(MemoryStore):
    """Holds the first journal write until told to go on, so another run can park meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = anyio.Event()
        self.go_on = anyio.Event()

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        if not self.writing.is_set():
            self.writing.set()
            await self.go_on.wait()
        return await super().append_journal(run_id, seq, entry)


async def test_a_run_whose_answer_is_being_journaled_is_not_hibernated_meanwhile() -> None:
    store = SlowJournal()
    shop = Shop(max_suspended=1, store=store)
    async with Client(shop.server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        first = await start(client, 1)
        results: list[Any] = []

        async def answer_first() -> None:
            results.append(await answer(client, 1, first, "4kg"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_first)
            with anyio.fail_after(5):
                await store.writing.wait()
            await start(client, 2)  # parks order 2, past the limit: order 1 is taken, so order 2 is the one left
            store.go_on.set()
        (then,) = results
        assert isinstance(then, InputRequiredResult)
        assert "Ship 4kg for order 1?" in str(then.input_requests)
    assert shop.bodies == [1, 2]  # nothing replayed: order 1 stayed in memory
