"""Hooks on a fastmcp server, on every route and both eras: the scenes tests/test_hooks.py runs on `MCPServer`.

The client's own form, the model fallback, the server's fallback handler and elicitkit's page (served by the
fastmcp server's own HTTP app, with a real page POST), each reported as the route the SDK scenes report.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastmcp")

from elicitkit import Accepted, Ask, Declined, ElicitationResult, Outcome, QuestionInfo
from tests.hook_scenes import ROUTE_IDS, ROUTES, ask, scene
from tests.test_hooks import record_every_point

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_every_hook_point_runs_once_in_order_on_every_route(route: str, mode: str, reported: str) -> None:
    s = scene(route, mode, framework="fastmcp")
    events = record_every_point(s.hitl)
    assert await ask(s) == "accepted True"
    stored = [("after_ask stored", reported)] if reported in ("mrtr", "llm", "app") else []
    assert events == [
        ("around", None),
        ("before_ask", None),
        *stored,
        ("after_ask sent", reported),
        ("before_answer", (reported, "accept")),
        ("around done", "accept"),
        ("after_answer", (reported, "accept")),
    ]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_a_before_ask_hook_rewrites_the_message_and_a_before_answer_hook_the_answer(
    route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode, framework="fastmcp")
    tools: list[str] = []

    @s.hitl.before_ask
    async def add_ticket(question: QuestionInfo) -> Ask:
        tools.append(question.tool)
        return Ask(message=f"{question.message} (change CHG-42)")

    @s.hitl.before_answer
    def four_eyes(question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any] | None:
        if isinstance(result, Accepted) and question.principal is None:
            return Declined(reason="a second approver is required")
        return None

    seen: list[str] = []

    @s.hitl.after_answer
    def audit(question: QuestionInfo, outcome: Outcome) -> None:
        seen.append(outcome.name)

    assert await ask(s) == "declined a second approver is required"
    assert s.person.seen == ["Deploy v2? (change CHG-42)"]
    assert s.outcomes == ["declined a second approver is required"]  # the body resumed once
    assert tools == ["deploy"]
    assert seen == ["decline"]
