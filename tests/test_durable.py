"""Durable state in one process: replay from the journal, tampering, outages, secrets and steps."""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit import Accepted, Elicitation
from elicitkit._crypto import SECRET_VARIABLES
from elicitkit._engine import records as records_module
from elicitkit.stores import FencedStore, Store
from elicitkit.stores.memory import MemoryStore
from elicitkit.testing import ScriptedHuman, accept
from tests.examples import load_example
from tests.scenes import Rounds, SharedBroker, by_hand, pending_id, send_answer, settled

pytestmark = pytest.mark.anyio

SECRET = "durable-test-secret-0123456789abcdef01234567"


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def node(store: Any, effects: list[str], **options: Any) -> tuple[MCPServer, Elicitation]:
    """One "node": a server named like every other, so requestState opens on each of them."""
    server = MCPServer("durable")
    hitl = Elicitation(server, store=store, **options)

    @server.tool()
    async def order(item: str, ctx: Context) -> str:
        first = await hitl.text(ctx, f"Quantity of {item}?")
        assert isinstance(first, Accepted)
        receipt = await hitl.step(ctx, "charge", lambda: effects.append(f"charged {item}") or f"r-{item}")
        second = await hitl.confirm(ctx, f"Ship {first.data} {item}?")
        return f"{receipt}: {first.data} {item}, shipped={second.action == 'accept' and second.data}"

    return server, hitl


def connect(server: MCPServer) -> Client:
    return Client(server, mode="auto", elicitation_callback=ScriptedHuman())


async def round_trip(client: Client, previous: InputRequiredResult, value: Any) -> CallToolResult | InputRequiredResult:
    answers = {key: accept({"value": value}) for key in previous.input_requests or {}}
    return await client.session.call_tool(
        "order",
        {"item": "tea"},
        input_responses=answers,
        request_state=previous.request_state,
        allow_input_required=True,
    )


async def test_another_node_on_the_same_sqlite_file_replays_the_run_and_the_step_runs_once(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    effects: list[str] = []
    first_server, _ = node(store, effects, secret=SECRET)
    second_server, second = node(store, effects, secret=SECRET)
    async with connect(first_server) as one, connect(second_server) as two:
        asked = await one.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        then = await round_trip(one, asked, "3")
        assert isinstance(then, InputRequiredResult)
        final = await round_trip(two, then, True)  # the second node does not hold the run: it replays it
    assert isinstance(final, CallToolResult)
    assert text(final) == "r-tea: 3 tea, shipped=True"
    assert effects == ["charged tea"]
    assert second.active_runs == 0


async def test_an_answer_sent_after_a_clean_restart_is_taken_and_the_person_is_not_asked_again(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    effects: list[str] = []
    before, _ = node(store, effects, secret=SECRET)
    after, restarted = node(store, effects, secret=SECRET)
    async with connect(before) as one:
        asked = await one.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
    # The first server shut down (its lifespan ended) with the question open; the client's answer reaches its
    # restarted twin, which replays the run with that answer instead of asking for it again.
    async with connect(after) as two:
        then = await round_trip(two, asked, "3")
        assert isinstance(then, InputRequiredResult)
        assert [r.params.message for r in (then.input_requests or {}).values()] == ["Ship 3 tea?"]  # type: ignore[union-attr]
        final = await round_trip(two, then, True)
    assert isinstance(final, CallToolResult)
    assert text(final) == "r-tea: 3 tea, shipped=True"
    assert effects == ["charged tea"]
    await settled(restarted)


async def test_a_tampered_journal_fails_closed_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    effects: list[str] = []
    first_server, _ = node(f"sqlite:///{path}", effects, secret=SECRET)
    second_server, _ = node(f"sqlite:///{path}", effects, secret=SECRET)
    async with connect(first_server) as one, connect(second_server) as two:
        asked = await one.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        then = await round_trip(one, asked, "3")
        assert isinstance(then, InputRequiredResult)
        db = sqlite3.connect(path)
        try:
            (entry,) = db.execute("SELECT entry FROM journal LIMIT 1").fetchone()
            flipped = bytes([entry[0]]) + bytes([entry[1] ^ 1]) + entry[2:]
            db.execute("UPDATE journal SET entry = ? WHERE entry = ?", (flipped, entry))
            db.commit()
        finally:
            db.close()
        with pytest.raises(MCPError, match="failed authentication") as info:
            await round_trip(two, then, True)
    assert info.value.error.data == {"reason": "tampered_state"}


class FlakyStore(MemoryStore):
    """A memory store whose backend can be switched off: then runs, questions and steps cannot be written (a round
    of answers still can)."""

    down = False

    def _reach(self) -> None:
        if self.down:
            raise ConnectionError("backend unreachable")

    async def put_run(self, *args: Any, **kwargs: Any) -> None:
        self._reach()
        await super().put_run(*args, **kwargs)

    async def put_question(self, *args: Any, **kwargs: Any) -> None:
        self._reach()
        await super().put_question(*args, **kwargs)

    async def put_run_with_question(self, *args: Any, **kwargs: Any) -> None:
        self._reach()
        await super().put_run_with_question(*args, **kwargs)

    async def append_journal(self, *args: Any, **kwargs: Any) -> bool:
        self._reach()
        return await super().append_journal(*args, **kwargs)


async def test_an_unreachable_store_gets_a_clear_retryable_error() -> None:
    store = FlakyStore()
    server, hitl = node(store, [])
    store.down = True
    async with connect(server) as client:
        with pytest.raises(MCPError, match="store is unavailable") as info:
            await client.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert info.value.error.data == {"reason": "store_unavailable"}
        await settled(hitl)  # the refused call left no run behind
        store.down = False
        asked = await client.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        assert hitl.active_runs == 1


async def test_a_body_whose_step_cannot_be_recorded_ends_the_call_with_the_same_retryable_refusal() -> None:
    # The store fails under the body (the answer is taken, the step's result cannot be journaled): the client is
    # told to retry, as a call refused at its start is, instead of being told the tool failed.
    store = FlakyStore()
    server, hitl = node(store, [])
    async with connect(server) as client:
        asked = await client.session.call_tool("order", {"item": "tea"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        store.down = True
        with pytest.raises(MCPError, match="store is unavailable") as info:
            await round_trip(client, asked, "2")
        assert info.value.error.data == {"reason": "store_unavailable"}
        await settled(hitl)


async def test_a_shared_store_kept_in_plaintext_on_purpose_still_warns_loudly(
    redis_server: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ELICITKIT_SECRET", raising=False)
    for variable in SECRET_VARIABLES[1:]:
        monkeypatch.delenv(variable, raising=False)
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("a"), store=redis_server.url, plaintext_store=True)
    assert "WITHOUT a secret" in caplog.text
    caplog.clear()
    monkeypatch.setenv("MCP_ELICITATION_SECRET", SECRET)
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("b"), store=redis_server.url, plaintext_store=True)  # the secret still seals
    assert "WITHOUT a secret" not in caplog.text


def step_server() -> MCPServer:
    server = MCPServer("t")
    hitl = Elicitation(server)

    async def fetch() -> dict[str, int]:
        await anyio.lowlevel.checkpoint()
        return {"id": 7}

    @server.tool()
    async def work(ctx: Context) -> str:
        value = await hitl.step(ctx, "fetch", fetch)
        try:
            await hitl.step(ctx, "bad", lambda: object())
        except TypeError as exc:
            return f"{value['id']} / {exc}"
        return f"{value['id']} / not journaled"

    return server


async def test_a_journaled_step_returns_its_value_and_refuses_what_cannot_be_journaled(mode: str) -> None:
    # Without forms the run is hosted on both eras (it may need the fallback route), so it is journaled.
    async with Client(step_server(), mode=mode) as client:
        result = await client.call_tool("work", {})
    assert text(result) == "7 / step 'bad' must return JSON-serializable data, got object"


async def test_a_step_in_a_run_that_cannot_be_replayed_just_runs() -> None:
    # A 2025-11-25 client that shows forms: the body runs inside its request and nothing is journaled.
    async with Client(step_server(), mode="legacy", elicitation_callback=ScriptedHuman()) as client:
        result = await client.call_tool("work", {})
    assert text(result) == "7 / not journaled"


async def test_the_provisioner_example_runs_on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELICITKIT_STORE", f"sqlite:///{tmp_path / 'p.db'}")
    monkeypatch.setenv("ELICITKIT_SECRET", SECRET)
    module = load_example("provisioner")
    human = ScriptedHuman(accept({"value": "large"}), accept({"value": True}))
    async with Client(module.server, mode="auto", elicitation_callback=human) as client:
        result = await client.call_tool("provision", {"name": "web"})
    assert text(result) == "vm-web (large) is up and public."


class CountingStore(MemoryStore):
    """Counts the run-record operations a call costs."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def put_run(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append("put_run")
        await super().put_run(*args, **kwargs)

    async def get_run(self, run_id: str) -> tuple[str, bytes] | None:
        self.calls.append("get_run")
        return await super().get_run(run_id)

    async def delete_run(self, run_id: str) -> None:
        self.calls.append("delete_run")
        await super().delete_run(run_id)

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        self.calls.append("delete_owned_run")
        return await super().delete_owned_run(run_id, owner)

    async def put_owned_run(self, *args: Any, **kwargs: Any) -> str | None:
        self.calls.append("put_owned_run")
        return await super().put_owned_run(*args, **kwargs)

    async def put_run_with_question(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append("put_run_with_question")
        await super().put_run_with_question(*args, **kwargs)

    async def put_question(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append("put_question")
        await super().put_question(*args, **kwargs)

    async def delete_question(self, question_id: str) -> None:
        self.calls.append("delete_question")
        await super().delete_question(question_id)

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        self.calls.append("append_journal")
        return await super().append_journal(run_id, seq, entry)

    async def use_once(self, token: str, expires_at: float, value: bytes = b"1") -> bool:
        self.calls.append("use_once")
        return await super().use_once(token, expires_at, value)

    async def take_round(self, *args: Any, **kwargs: Any) -> set[int] | None:
        self.calls.append("take_round")
        return await super().take_round(*args, **kwargs)


class UnfencedStore:
    """A store of the user's own that implements `Store` and nothing more (no fenced delete)."""

    def __init__(self) -> None:
        self.inner = CountingStore()


def _delegate(name: str) -> Any:
    async def method(self: UnfencedStore, *args: Any, **kwargs: Any) -> Any:
        return await getattr(self.inner, name)(*args, **kwargs)

    return method


for _name in (name for name in dir(Store) if not name.startswith("_")):
    setattr(UnfencedStore, _name, _delegate(_name))


async def test_a_call_that_asks_nothing_costs_the_store_nothing_and_a_step_leaves_no_record_behind() -> None:
    store = CountingStore()
    server = MCPServer("t")
    hitl = Elicitation(server, store=store)

    @server.tool()
    async def plain(n: int) -> int:
        return n + 1

    @server.tool()
    async def charge(ctx: Context) -> str:
        return str(await hitl.step(ctx, "charge", lambda: "r-1"))

    async with Client(server, mode="auto") as client:
        assert text(await client.call_tool("plain", {"n": 1})) == "2"
        assert store.calls == []
        assert text(await client.call_tool("charge", {})) == "r-1"
        await settled(hitl)
    assert "put_run" in store.calls  # its journal had a record to belong to
    # The end of the run costs one round trip: the store deletes it only while this node owns it.
    assert store.calls[-2:] == ["delete_owned_run", "delete_run"]
    assert "get_run" not in store.calls
    assert store._runs == {}
    assert store._journals == {}


class QuestionCountingStore(MemoryStore):
    """Counts the reads of a run's question records (what a finished run's end may cost)."""

    def __init__(self) -> None:
        super().__init__()
        self.question_reads = 0

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        self.question_reads += 1
        return await super().run_questions(run_id)


def two_questions(store: MemoryStore, **options: Any) -> tuple[MCPServer[Any], Elicitation]:
    server = MCPServer("t")
    hitl = Elicitation(server, store=store, secret="durable-test-secret-0123456789abcdef0123", **options)

    @server.tool()
    async def order(n: int, ctx: Context) -> str:
        size = await hitl.text(ctx, f"Size for order {n}?")
        ship = await hitl.confirm(ctx, f"Ship order {n}?")
        return f"{n}: {getattr(size, 'data', None)} {getattr(ship, 'data', None)}"

    return server, hitl


async def test_a_finished_run_whose_questions_were_answered_leaves_no_question_record_and_reads_none() -> None:
    # Each retry's answer takes its question's record with it: the run's end knows none is left.
    store = QuestionCountingStore()
    server, hitl = two_questions(store)
    human = ScriptedHuman(accept({"value": "L"}), accept({"value": True}))
    async with Client(server, mode="auto", elicitation_callback=human) as client:
        assert text(await client.call_tool("order", {"n": 1})) == "1: L True"
        await settled(hitl)
    assert len(store._questions) == 0
    assert store.question_reads == 0


async def test_through_the_model_on_both_eras_a_finished_runs_question_records_are_all_gone(mode: str) -> None:
    store = QuestionCountingStore()
    server, hitl = two_questions(store)
    async with Client(server, mode=mode) as client:  # no elicitation callback: the model relays the person
        first = await client.call_tool("order", {"n": 2})
        then = await send_answer(client, pending_id(first), "accept", {"value": "M"})
        done = await send_answer(client, pending_id(then), "accept", {"value": False})
        await settled(hitl)
    assert text(done) == "2: M False"
    assert len(store._questions) == 0


async def test_a_run_replayed_after_hibernating_has_its_earlier_copys_question_records_deleted_at_its_end() -> None:
    # The replay cannot know what the copy it replaced wrote: its end asks the store.
    store = QuestionCountingStore()
    server, hitl = two_questions(store, max_suspended=1)

    async def answer(previous: Any, value: Any) -> Any:
        assert isinstance(previous, InputRequiredResult)
        (key,) = previous.input_requests or {}
        responses = {key: accept({"value": value})}
        return await client.session.call_tool(
            "order",
            {"n": 1},
            input_responses=responses,
            request_state=previous.request_state,
            allow_input_required=True,
        )

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        first = await client.session.call_tool("order", {"n": 1}, allow_input_required=True)
        await client.session.call_tool("order", {"n": 2}, allow_input_required=True)  # order 1 hibernates
        done = await answer(await answer(first, "S"), True)
        assert text(done) == "1: S True"
        await settled(hitl)
        assert store.question_reads >= 1
        assert len(store._questions) == 1  # order 2's question, still waiting


class Clock:
    """The time the engine's records are written by, which a test can move on (`later`)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def time(self) -> float:
        return time.time() + self.ahead

    def later(self, seconds: float) -> None:
        self.ahead += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(records_module, "time", clock)
    return clock


async def deploy_once(store: Any, broker: Any = None, *, waited: Clock | None = None) -> None:
    """One 2026-07-28 call of a tool that asks one question, answered yes on the retry, through `store`; `waited`:
    the answer comes two thirds of `run_expiry` later (its run's first record had half of it to spare)."""
    server = MCPServer("t")
    # (A store of one's own may keep records anywhere: a secret seals them.)
    hitl = Elicitation(server, store=store, broker=broker, secret=SECRET)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        if waited is not None:
            waited.later(hitl._engine.policy.run_expiry * 2 / 3)
        return "deployed" if isinstance(answer, Accepted) and answer.data else "kept"

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman(accept({"value": True}))) as client:
        assert text(await client.call_tool("deploy", {})) == "deployed"
        await settled(hitl)


async def test_an_answer_costs_the_store_one_round_trip_and_a_prompt_end_of_its_run_none() -> None:
    store = CountingStore()
    await deploy_once(store)
    # The first round stores the run with its question in one step, for half as long again as the run may wait;
    # the retry journals its answer, spends its round and forgets the question in one step. The run's end has
    # nothing to write: its record (and journal) still last `run_expiry`, so that its last retry sent again (its
    # response lost) reaches this node from any other until then.
    assert store.calls == ["put_run_with_question", "take_round"]
    assert store._questions._records == {}
    assert list(store._runs) == list(store._journals)


async def test_the_end_of_a_run_whose_record_would_expire_sooner_renews_it_for_a_resend(clock: Clock) -> None:
    store = CountingStore()
    await deploy_once(store, waited=clock)
    assert store.calls == ["put_run_with_question", "take_round", "put_run"]
    assert list(store._runs) == list(store._journals)


async def test_between_nodes_the_end_of_a_run_renews_its_record_in_one_fenced_write(clock: Clock) -> None:
    # Nodes share the store: the end must not take back a run another node took over (a thawed stale copy), and
    # the store checks the owner as it writes, without a read first.
    store = CountingStore()
    await deploy_once(store, SharedBroker(), waited=clock)
    assert store.calls == ["put_run_with_question", "take_round", "put_owned_run"]
    assert list(store._runs) == list(store._journals)


async def test_between_nodes_a_store_without_the_fenced_write_reads_the_owner_before_renewing_the_record(
    clock: Clock,
) -> None:
    store = UnfencedStore()
    await deploy_once(store, SharedBroker(), waited=clock)
    assert store.inner.calls[-2:] == ["get_run", "put_run"]
    assert len(store.inner._runs) == 1


async def test_a_store_without_rounds_journals_first_and_spends_the_round_last() -> None:
    store = UnfencedStore()
    await deploy_once(store)
    calls = store.inner.calls
    assert calls[2:] == ["append_journal", "use_once", "delete_question"]
    assert store.inner._questions._records == {}


async def test_a_store_without_the_fenced_delete_still_forgets_a_finished_run() -> None:
    store = UnfencedStore()
    assert isinstance(store, Store) and not isinstance(store, FencedStore)
    server = MCPServer("t")
    hitl = Elicitation(server, store=store, secret=SECRET)  # a store of one's own may keep records anywhere

    @server.tool()
    async def charge(ctx: Context) -> str:
        return str(await hitl.step(ctx, "charge", lambda: "r-1"))

    async with Client(server, mode="auto") as client:
        assert text(await client.call_tool("charge", {})) == "r-1"
        await settled(hitl)
    assert store.inner.calls[-2:] == ["get_run", "delete_run"]  # read the owner, then delete
    assert store.inner._runs == {}
    assert store.inner._journals == {}


def deploy_node(store: Any, broker: Any, name: str, **options: Any) -> tuple[MCPServer[Any], Elicitation]:
    server = MCPServer("t")  # alike on every node, so requestState opens on each
    hitl = Elicitation(server, store=store, broker=broker, secret=SECRET, node_id=name, **options)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        return f"deployed on {name}" if isinstance(answer, Accepted) and answer.data else "kept"

    return server, hitl


DEPLOY = Rounds("deploy")


async def retry_elsewhere(one: MCPServer[Any], two: MCPServer[Any], *, crowded: bool = False) -> str:
    """Start `deploy` on node one, and send its retry (yes) to node two; `crowded`: another call waits on node one
    meanwhile."""
    async with by_hand(one) as first, by_hand(two) as second:
        asked = await DEPLOY.start(first)
        if crowded:
            await DEPLOY.start(first)
        done = await DEPLOY.answer(second, asked, True)
        assert isinstance(done, CallToolResult)
        return text(done)


async def test_a_retry_landing_on_another_node_goes_to_the_node_its_round_names_without_reading_the_run() -> None:
    # The round's requestState names the node that held the run: the answer goes there at once, and the owner
    # checks it. Between nodes, an answer costs the store what it costs on one node (no `get_run`).
    store, broker = CountingStore(), SharedBroker()
    (one, hitl_one), (two, hitl_two) = deploy_node(store, broker, "one"), deploy_node(store, broker, "two")
    assert await retry_elsewhere(one, two) == "deployed on one"
    await settled(hitl_one)
    await settled(hitl_two)
    assert store.calls == ["put_run_with_question", "take_round"]


async def test_a_retry_whose_round_names_a_node_no_longer_holding_the_run_still_reaches_it() -> None:
    # Node one let its run hibernate for a newer one (its records stay; any node replays it): told "not held
    # here", node two reads the run's record, which still names node one, and takes the run over.
    store, broker = CountingStore(), SharedBroker()
    (one, hitl_one), (two, hitl_two) = (
        deploy_node(store, broker, "one", max_suspended=1),
        deploy_node(store, broker, "two"),
    )
    assert await retry_elsewhere(one, two, crowded=True) == "deployed on two"
    await settled(hitl_one)
    await settled(hitl_two)
    assert "get_run" in store.calls
