"""The `app` route with durable stores, several nodes, restarts and hibernation, on both eras.

A host that renders MCP Apps answers through elicitkit's view, which calls `sendElicitationResult` through the
host: the answer may reach a node that does not hold the run (it goes to the owner, or the run is taken over
and replayed from its journal), a restarted node, or a run that hibernated. Each time the body resumes at its
`await`, its journaled step runs once, and the next question is still shown in the view (the route `"app"`,
which hooks and the audit trail see), not handed to the model.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, Outcome, QuestionInfo
from elicitkit.stores.redis import RedisBroker, RedisStore
from elicitkit.testing import serve_http
from tests.redis_server import RedisServer
from tests.scenes import APPS, answer_in_view, in_view, settled, text_of

pytestmark = pytest.mark.anyio

SECRET = "apps-nodes-test-secret-0123456789abcdef01234567"


class Plan(BaseModel):
    region: Literal["eu", "us"] = Field(title="Region")
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")


class Desk:
    """One node: `release` asks for a plan in the view, journals a side effect, then asks whether to tell the team.

    Nodes share `effects` (the side effects, with the node that performed them) and `routes` (each question's
    outcome as hooks see it: `(node, route, replayed)`, from an `after_answer` hook).
    """

    def __init__(self, node: str, effects: list[str], routes: list[tuple[str, str | None, bool, str]], **options: Any):
        self.server = MCPServer("apps-nodes")  # one name on every node: each opens the others' state
        self.hitl = hitl = Elicitation(self.server, secret=SECRET, node_id=node, timeout=30, **options)
        self.bodies: list[str] = []
        self.effects, self.routes = effects, routes

        @hitl.after_answer
        def seen(question: QuestionInfo, outcome: Outcome) -> None:
            routes.append((node, question.route, question.replayed, outcome.name))

        @self.server.tool()
        async def release(service: str, ctx: Context) -> str:
            self.bodies.append(service)
            plan = await hitl.elicit(ctx, f"Release {service}?", Plan)
            if not isinstance(plan, Accepted):
                return f"{service} was not released"
            done = await hitl.step(ctx, "roll out", lambda: effects.append(f"{service} on {node}") or node)
            told = await hitl.confirm(ctx, f"Tell the team about {service}?")
            return f"{service}: {plan.data.replicas} in {plan.data.region}, rolled out on {done}, told={told.action}"


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.db'}"


def connect(target: MCPServer | str, mode: str) -> Client:
    """A host that renders MCP Apps and shows no elicitation forms: its questions go to elicitkit's view."""
    return Client(target, mode=mode, extensions=[APPS])


async def test_on_sqlite_another_node_replays_the_run_and_asks_its_next_question_in_the_view(
    mode: str, tmp_path: Path
) -> None:
    effects: list[str] = []
    routes: list[tuple[str, str | None, bool, str]] = []
    a = Desk("node-a", effects, routes, store=sqlite(tmp_path))
    b = Desk("node-b", effects, routes, store=sqlite(tmp_path))
    async with connect(a.server, mode) as on_a, connect(b.server, mode) as on_b:
        asked = await on_a.call_tool("release", {"service": "api"})
        then = await answer_in_view(on_a, asked, "accept", {"region": "eu", "replicas": 4})
        assert (in_view(then) or {}).get("message") == "Tell the team about api?"
        done = await answer_in_view(on_b, then, "accept", {"value": True})  # node-b does not hold the run
    assert text_of(done) == "api: 4 in eu, rolled out on node-a, told=accept"
    assert effects == ["api on node-a"]
    # node-b took the answer into the journal and ran the body again: the journal answered both questions, each
    # reported on the view's route, as replayed.
    assert routes == [
        ("node-a", "app", False, "accept"),
        ("node-b", "app", True, "accept"),
        ("node-b", "app", True, "accept"),
    ]
    assert b.bodies == ["api"]


async def test_an_answer_from_the_view_after_a_restart_is_taken_and_the_next_question_shown_in_the_view(
    mode: str, tmp_path: Path
) -> None:
    effects: list[str] = []
    routes: list[tuple[str, str | None, bool, str]] = []
    before = Desk("node-1", effects, routes, store=sqlite(tmp_path))
    async with connect(before.server, mode) as client:
        asked = await client.call_tool("release", {"service": "web"})
        assert in_view(asked) is not None
    # The first server shut down with the question open; the answer from the view reaches its restarted twin.
    after = Desk("node-2", effects, routes, store=sqlite(tmp_path))
    async with connect(after.server, mode) as client:
        refused = await answer_in_view(client, asked, "accept", {"region": "mars"})
        assert refused.is_error and refused.meta == {"elicitationProblems": [{"path": "region", "said": None}]}
        then = await answer_in_view(client, asked, "accept", {"region": "us"})
        assert (in_view(then) or {}).get("message") == "Tell the team about web?"
        done = await answer_in_view(client, then, "decline")
        again = await answer_in_view(client, then, "accept", {"value": True})
    assert text_of(done) == "web: 3 in us, rolled out on node-2, told=decline"
    assert again.is_error  # answered already: its elicitId is spent
    assert effects == ["web on node-2"]
    assert routes == [("node-2", "app", True, "accept"), ("node-2", "app", False, "decline")]
    await settled(after.hitl)


async def test_a_run_that_hibernated_is_replayed_by_its_answer_from_the_view(mode: str) -> None:
    effects: list[str] = []
    routes: list[tuple[str, str | None, bool, str]] = []
    desk = Desk("node-a", effects, routes, max_suspended=1)
    async with connect(desk.server, mode) as client:
        first = await client.call_tool("release", {"service": "one"})
        second = await client.call_tool("release", {"service": "two"})  # "one" hibernates
        assert desk.hitl.active_runs == 1
        then = await answer_in_view(client, first, "accept", {"region": "eu", "replicas": 1})
        assert (in_view(then) or {}).get("message") == "Tell the team about one?"
        done = await answer_in_view(client, then, "accept", {"value": False})
        other = await answer_in_view(client, second, "cancel")
    assert text_of(done) == "one: 1 in eu, rolled out on node-a, told=accept"
    assert text_of(other) == "two was not released"
    assert effects == ["one on node-a"]
    assert desk.bodies == ["one", "two", "one", "two"]  # "one" back in memory sent "two" to the store in turn
    assert {route for _, route, _, _ in routes} == {"app"}


@asynccontextmanager
async def on_redis(redis_server: RedisServer, *names: str, **options: Any) -> AsyncIterator[list[Desk]]:
    """Nodes sharing one Redis (a key prefix of their own), each closed on the way out."""
    prefix = f"test-{uuid.uuid4().hex}:"
    effects: list[str] = []
    routes: list[tuple[str, str | None, bool, str]] = []
    desks = [
        Desk(
            name,
            effects,
            routes,
            store=RedisStore(redis_server.url, prefix=prefix),
            broker=RedisBroker(redis_server.url, prefix=prefix),
            forward_timeout=1,
            **options,
        )
        for name in names
    ]
    try:
        yield desks
    finally:
        for desk in desks:
            await desk.hitl.aclose()


async def test_with_redis_an_answer_from_the_view_on_the_other_node_reaches_the_owner(
    redis_server: RedisServer, mode: str
) -> None:
    async with (
        on_redis(redis_server, "node-a", "node-b") as (a, b),
        serve_http(a.server) as url_a,
        serve_http(b.server) as url_b,
        connect(url_a, mode) as on_a,
        connect(url_b, mode) as on_b,
    ):
        asked = await on_a.call_tool("release", {"service": "db"})
        with anyio.fail_after(10):
            # Refused by the owner: the view still hears which field to fix, and the question stays open.
            refused = await answer_in_view(on_b, asked, "accept", {"region": "eu", "replicas": 99})
            assert refused.is_error and refused.meta == {"elicitationProblems": [{"path": "replicas", "said": None}]}
            then = await answer_in_view(on_b, asked, "accept", {"region": "eu", "replicas": 2})
            assert (in_view(then) or {}).get("message") == "Tell the team about db?"
            done = await answer_in_view(on_b, then, "accept", {"value": True})
    assert text_of(done) == "db: 2 in eu, rolled out on node-a, told=accept"
    assert a.bodies == ["db"] and b.bodies == []  # the owner resumed its body; nothing ran twice
    assert a.routes == [("node-a", "app", False, "accept")] * 2


async def test_with_redis_the_other_node_takes_over_a_stopped_owners_run_answered_in_the_view(
    redis_server: RedisServer, mode: str
) -> None:
    async with on_redis(redis_server, "node-a", "node-b") as (a, b), serve_http(b.server) as url_b:
        async with serve_http(a.server) as url_a, connect(url_a, mode) as on_a:
            asked = await on_a.call_tool("release", {"service": "cache"})
            then = await answer_in_view(on_a, asked, "accept", {"region": "us", "replicas": 5})
        await a.hitl.aclose()  # node-a stops with the second question open
        async with connect(url_b, mode) as on_b:
            with anyio.fail_after(10):
                done = await answer_in_view(on_b, then, "accept", {"value": True})
    assert text_of(done) == "cache: 5 in us, rolled out on node-a, told=accept"
    assert b.bodies == ["cache"]  # replayed on node-b from the journal: its step was not run again
    assert b.effects == ["cache on node-a"]
    # node-a stopped with its question open (kept for a restart: no outcome); node-b's replay reports the view's route.
    assert b.routes == [("node-a", "app", False, "accept"), *[("node-b", "app", True, "accept")] * 2]
