"""A replayed run that asks a reworded question takes its new answer whichever way that answer arrives.

Three nodes share one SQLite file and one secret. `before` runs the old
version: it asks "Plan for v1?", gets an answer, and waits on "Go ahead?".
`before` reaches no other node, so when the client's answer to "Go ahead?"
lands on `after`, `after` takes the run over and replays the body, which now
asks "Plan for v2?" at the place in the journal that still holds the old
wording's answer. The answer to the new wording then arrives through a page, a
channel, a 2026-07-28 retry or the model, on `after` itself or on `peer`, which
shares a broker with `after` (as nodes behind one address do) and must forward
it. Every way must hand the tool the new answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit.channels.base import Desk, Responder, Via
from elicitkit.stores import Broker
from tests.channels.recording import RecordingChannel
from tests.scenes import Rounds, SharedBroker, by_hand, pending_id, send_answer, serving, text_of
from tests.test_urlmode import open_form, press

pytestmark = pytest.mark.anyio

SECRET = "one-door-replay-secret-0123456789abcdef0123"
APPROVER = Responder("desk", "U1", "Ada")
PLAN = Rounds("plan")

Where = Literal["the-replaying-node", "another-node"]
WHERE = pytest.mark.parametrize("where", ["the-replaying-node", "another-node"])


class Plan(BaseModel):
    name: str


Ask = Callable[[Elicitation, Context, str], Awaitable[str]]


async def on_the_client(hitl: Elicitation, ctx: Context, message: str) -> str:
    answer = await hitl.text(ctx, message)
    assert isinstance(answer, Accepted), answer
    return answer.data


async def on_the_page(hitl: Elicitation, ctx: Context, message: str) -> str:
    answer = await hitl.secure_form(ctx, message, Plan)
    assert isinstance(answer, Accepted), answer
    return answer.data.name


async def on_the_desk(hitl: Elicitation, ctx: Context, message: str) -> str:
    answer = await hitl.text(ctx, message, via=Via("desk", "#ops"))
    assert isinstance(answer, Accepted), answer
    return answer.data


@dataclass(frozen=True)
class Node:
    server: MCPServer
    hitl: Elicitation
    channel: RecordingChannel

    @property
    def desk(self) -> Desk:
        assert self.channel.desk is not None
        return self.channel.desk


def node(tmp_path: Path, version: str, ask: Ask, node_id: str, broker: Broker | None = None) -> Node:
    """`plan` asks for a plan for `version` (as `ask` does), then whether to go ahead.

    Every node is named alike and shares the SQLite file and the secret, so a `requestState` opens on each.
    """
    server = MCPServer("planner")
    channel = RecordingChannel("desk")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    options = {"broker": broker} if broker is not None else {}
    hitl = Elicitation(server, store=store, secret=SECRET, node_id=node_id, channels=[channel], timeout=30, **options)

    @server.tool()
    async def plan(ctx: Context) -> str:
        name = await ask(hitl, ctx, f"Plan for {version}?")
        go = await hitl.confirm(ctx, "Go ahead?")
        assert isinstance(go, Accepted), go
        return f"{name}, go={go.data}"

    return Node(server, hitl, channel)


@dataclass(frozen=True)
class Nodes:
    before: Node
    """The old version, on a broker of its own: once its run is taken over, nobody forwards to it."""
    after: Node
    """The new version: takes the run over and replays it."""
    peer: Node
    """The new version too, sharing `after`'s broker: an answer landing here is forwarded to `after`."""

    def landing(self, where: Where) -> Node:
        return self.after if where == "the-replaying-node" else self.peer


def nodes(tmp_path: Path, ask: Ask) -> Nodes:
    shared = SharedBroker()
    return Nodes(
        before=node(tmp_path, "v1", ask, "before"),
        after=node(tmp_path, "v2", ask, "after", shared),
        peer=node(tmp_path, "v2", ask, "peer", shared),
    )


def asked(result: CallToolResult | InputRequiredResult) -> list[ElicitRequestFormParams | ElicitRequestURLParams]:
    """The questions a 2026-07-28 result hands the client."""
    assert isinstance(result, InputRequiredResult), result
    return [request.params for request in (result.input_requests or {}).values()]


def asked_message(result: CallToolResult | InputRequiredResult) -> str:
    [params] = asked(result)
    return params.message


def asked_link(result: CallToolResult | InputRequiredResult) -> ElicitRequestURLParams:
    [params] = asked(result)
    assert isinstance(params, ElicitRequestURLParams), params
    return params


def for_the_model(result: CallToolResult) -> str:
    """The question a result hands the model (for a client that cannot show forms)."""
    assert not result.is_error, text_of(result)
    message: str = (result.meta or {})["elicitationPending"]["message"]
    return message


async def went_to_the_link(client: Client, previous: InputRequiredResult) -> CallToolResult | InputRequiredResult:
    """The client opened the link it was handed: it retries with an accept that carries nothing."""
    responses = {key: ElicitResult(action="accept") for key in previous.input_requests or {}}
    return await PLAN.answer(client, previous, input_responses=responses)


def assert_new_answer(result: CallToolResult | InputRequiredResult) -> None:
    assert isinstance(result, CallToolResult), result
    assert not result.is_error, text_of(result)
    assert "old plan" not in text_of(result)
    assert text_of(result) == "new plan, go=True"


@WHERE
async def test_a_reworded_question_on_replay_takes_the_answer_given_on_elicitkits_page(
    tmp_path: Path, where: Where
) -> None:
    cluster = nodes(tmp_path, on_the_page)
    async with (
        serving(cluster.before.hitl) as before_url,
        serving(cluster.after.hitl) as after_url,
        serving(cluster.peer.hitl),
        by_hand(before_url) as one,
        by_hand(after_url) as two,
        httpx.AsyncClient() as browser,
    ):
        started = await PLAN.start(one)
        link = asked_link(started)
        assert link.message == "Plan for v1?"
        page = await open_form(browser, link.url)
        assert (await press(browser, link.url, page, "accept", {"name": "old plan"})).status_code == 200
        waiting = await went_to_the_link(one, started)
        assert asked_message(waiting) == "Go ahead?"

        replayed = await PLAN.answer(two, waiting, True)
        link = asked_link(replayed)
        assert link.message == "Plan for v2?"
        # Nodes behind one address: the person's browser may reach either with the same link.
        path = link.url.removeprefix(cluster.after.hitl.public_url or "")
        opened = f"{cluster.landing(where).hitl.public_url}{path}"
        page = await open_form(browser, opened)
        sent = await press(browser, opened, page, "accept", {"name": "new plan"})
        assert sent.status_code == 200, sent.text
        assert "Your answer was sent" in sent.text
        with anyio.fail_after(10):
            final = await went_to_the_link(two, replayed)
    assert_new_answer(final)


@WHERE
async def test_a_reworded_question_on_replay_takes_the_answer_given_on_a_channel(tmp_path: Path, where: Where) -> None:
    cluster = nodes(tmp_path, on_the_desk)
    got: dict[str, CallToolResult | InputRequiredResult] = {}
    async with (
        by_hand(cluster.before.server) as one,
        by_hand(cluster.after.server) as two,
        by_hand(cluster.peer.server),
    ):
        async with anyio.create_task_group() as tg:

            async def start() -> None:
                got["waiting"] = await PLAN.start(one)

            tg.start_soon(start)
            prompt = await cluster.before.channel.next_post(1)
            assert prompt.message == "Plan for v1?"
            assert (await cluster.before.desk.reply(prompt.token, APPROVER, "accept", {"value": "old plan"})).ok
        waiting = got["waiting"]
        assert asked_message(waiting) == "Go ahead?"

        async with anyio.create_task_group() as tg:

            async def go_ahead() -> None:
                got["final"] = await PLAN.answer(two, waiting, True)

            tg.start_soon(go_ahead)
            prompt = await cluster.after.channel.next_post(1)
            assert prompt.message == "Plan for v2?"
            desk = cluster.landing(where).desk
            verdict = await desk.reply(prompt.token, APPROVER, "accept", {"value": "new plan"})
            assert verdict.ok, verdict
    assert_new_answer(got["final"])


@WHERE
async def test_a_reworded_question_on_replay_takes_the_answer_given_with_a_2026_07_28_retry(
    tmp_path: Path, where: Where
) -> None:
    cluster = nodes(tmp_path, on_the_client)
    async with (
        by_hand(cluster.before.server) as one,
        by_hand(cluster.after.server) as two,
        by_hand(cluster.peer.server) as three,
    ):
        started = await PLAN.start(one)
        assert asked_message(started) == "Plan for v1?"
        waiting = await PLAN.answer(one, started, "old plan")
        assert asked_message(waiting) == "Go ahead?"

        replayed = await PLAN.answer(two, waiting, True)
        assert asked_message(replayed) == "Plan for v2?"
        assert isinstance(replayed, InputRequiredResult)
        with anyio.fail_after(10):
            final = await PLAN.answer(two if where == "the-replaying-node" else three, replayed, "new plan")
    assert_new_answer(final)


@WHERE
async def test_a_reworded_question_on_replay_takes_the_answer_the_model_sends(
    tmp_path: Path, mode: str, where: Where
) -> None:
    cluster = nodes(tmp_path, on_the_client)
    # No client shows forms: the model asks the person and answers through the system tool.
    async with (
        Client(cluster.before.server, mode=mode) as one,
        Client(cluster.after.server, mode=mode) as two,
        Client(cluster.peer.server, mode=mode) as three,
    ):
        started = await one.call_tool("plan", {})
        assert for_the_model(started) == "Plan for v1?"
        waiting = await send_answer(one, pending_id(started), "accept", {"value": "old plan"})
        assert for_the_model(waiting) == "Go ahead?"

        replayed = await send_answer(two, pending_id(waiting), "accept", {"value": True})
        assert for_the_model(replayed) == "Plan for v2?"
        answering = two if where == "the-replaying-node" else three
        with anyio.fail_after(10):
            final = await send_answer(answering, pending_id(replayed), "accept", {"value": "new plan"})
    assert_new_answer(final)
