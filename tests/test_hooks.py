"""Hooks on every route, on both eras: the order they run in, what they may change, and how they fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import (
    Accepted,
    Ask,
    Declined,
    Elicitation,
    ElicitationResult,
    ElicitationVetoed,
    Outcome,
    QuestionInfo,
)
from elicitkit.testing import ScriptedHuman, accept
from tests.hook_scenes import ROUTE_IDS, ROUTES, Approval, ask, scene

pytestmark = pytest.mark.anyio


def record_every_point(hitl: Elicitation) -> list[tuple[str, Any]]:
    """Register one hook at each point; each writes down where it ran and what it saw."""
    events: list[tuple[str, Any]] = []

    @hitl.around
    async def around(question: QuestionInfo, call_next: Any) -> ElicitationResult[Any]:
        events.append(("around", question.route))
        result = await call_next()
        events.append(("around done", result.action))
        return result

    @hitl.before_ask
    def before_ask(question: QuestionInfo) -> None:
        events.append(("before_ask", question.route))

    @hitl.after_ask
    async def after_ask(question: QuestionInfo, stage: str) -> None:
        events.append((f"after_ask {stage}", question.route))

    @hitl.before_answer
    async def before_answer(question: QuestionInfo, result: ElicitationResult[Any]) -> None:
        events.append(("before_answer", (question.route, result.action)))

    @hitl.after_answer
    def after_answer(question: QuestionInfo, outcome: Outcome) -> None:
        events.append(("after_answer", (question.route, outcome.name)))

    return events


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_every_hook_point_runs_once_in_order_on_every_route(route: str, mode: str, reported: str) -> None:
    s = scene(route, mode)
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
async def test_a_before_ask_hook_rewrites_the_message_the_person_reads(route: str, mode: str, reported: str) -> None:
    s = scene(route, mode)

    @s.hitl.before_ask
    async def add_ticket(question: QuestionInfo) -> Ask:
        return Ask(message=f"{question.message} (change CHG-42)")

    assert await ask(s) == "accepted True"
    assert s.person.seen == ["Deploy v2? (change CHG-42)"]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_a_before_answer_hook_turns_an_accept_into_a_decline_the_tool_sees(
    route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode)

    @s.hitl.before_answer
    def four_eyes(question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any] | None:
        if isinstance(result, Accepted) and question.principal is None:
            return Declined(reason="a second approver is required")
        return None

    assert await ask(s) == "declined a second approver is required"
    assert s.outcomes == ["declined a second approver is required"]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_a_raising_before_answer_hook_fails_closed_and_the_body_resumes_once(
    route: str, mode: str, reported: str, caplog: pytest.LogCaptureFixture
) -> None:
    s = scene(route, mode)
    seen: list[str] = []

    @s.hitl.before_answer
    def broken(question: QuestionInfo, result: ElicitationResult[Any]) -> None:
        raise KeyError("policy table missing")

    @s.hitl.after_answer
    def audit(question: QuestionInfo, outcome: Outcome) -> None:
        seen.append(outcome.name)

    assert await ask(s) == "vetoed: A policy check failed, so the answer was withheld"
    assert s.outcomes == ["vetoed: A policy check failed, so the answer was withheld"]  # resumed exactly once
    assert seen == ["vetoed"]
    assert "before_answer hook" in caplog.text
    assert "policy table missing" in caplog.text  # the cause is in the server's log, not in the tool's error


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_a_raising_observer_is_logged_and_never_loses_the_answer(
    route: str, mode: str, reported: str, caplog: pytest.LogCaptureFixture
) -> None:
    s = scene(route, mode)

    @s.hitl.after_ask
    def flaky_sink(question: QuestionInfo, stage: str) -> None:
        raise ConnectionError("audit sink down")

    @s.hitl.after_answer
    async def also_flaky(question: QuestionInfo, outcome: Outcome) -> None:
        raise ConnectionError("audit sink down")

    assert await ask(s) == "accepted True"
    assert s.outcomes == ["accepted True"]
    assert caplog.text.count("audit sink down") >= 2


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_before_ask_veto_asks_nothing_and_the_tool_reads_the_reason(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)

    @s.hitl.before_ask
    def ticket_required(question: QuestionInfo) -> None:
        raise ElicitationVetoed("Production deploys need a change ticket")

    assert await ask(s) == "vetoed: Production deploys need a change ticket"
    assert s.person.seen == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_before_ask_hook_may_replace_the_schema_of_an_elicit_question(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode, {"approved": True, "ticket": "CHG-1"})

    class WithTicket(Approval):
        ticket: str

    @s.hitl.before_ask(tools={"deploy"})
    def ask_for_a_ticket(question: QuestionInfo) -> Ask:
        return Ask(schema=WithTicket)

    captured: list[ElicitationResult[Any]] = []

    @s.hitl.before_answer
    def keep(question: QuestionInfo, result: ElicitationResult[Any]) -> None:
        assert question.schema["required"] == ["approved", "ticket"]
        captured.append(result)

    assert await ask(s) == "accepted True"
    [result] = captured
    assert isinstance(result, Accepted)
    assert isinstance(result.data, WithTicket)
    assert result.data.ticket == "CHG-1"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_filters_choose_which_questions_a_hook_sees(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    route = "native" if mode == "legacy" else "mrtr"
    other = "mrtr" if mode == "legacy" else "native"
    seen: list[str] = []
    s.hitl.after_answer(tools={"deploy"})(lambda q, o: seen.append("tool"))
    s.hitl.after_answer(tools={"other"})(lambda q, o: seen.append("other tool"))
    s.hitl.after_answer(modes={"url"})(lambda q, o: seen.append("url mode"))
    s.hitl.after_answer(routes={route})(lambda q, o: seen.append("route"))
    s.hitl.after_answer(routes={other})(lambda q, o: seen.append("other route"))
    s.hitl.after_answer(when=lambda q: q.message.startswith("Deploy"))(lambda q, o: seen.append("when"))
    s.hitl.after_ask(stages={"sent"})(lambda q, stage: seen.append(f"stage {stage}"))
    assert await ask(s) == "accepted True"
    assert seen == ["stage sent", "tool", "route", "when"]


def test_hooks_that_cannot_filter_by_route_say_so_when_registered() -> None:
    s = scene("native", "legacy")
    with pytest.raises(TypeError, match="routes"):  # before_ask runs before the route is chosen
        s.hitl.before_ask(routes={"native"})(lambda q: None)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="collection of names"):
        s.hitl.after_answer(tools="deploy")(lambda q, o: None)
    with pytest.raises(TypeError, match="callable"):
        s.hitl.after_answer(42)  # type: ignore[call-overload]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_around_hooks_nest_first_registered_outermost(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    order: list[str] = []

    def layer(name: str) -> Any:
        async def around(question: QuestionInfo, call_next: Any) -> ElicitationResult[Any]:
            order.append(f"{name} in")
            result = await call_next()
            order.append(f"{name} out")
            return result

        return around

    s.hitl.around(layer("outer"))
    s.hitl.around(layer("inner"))
    s.hitl.before_ask(lambda q: order.append("before_ask"))
    assert await ask(s) == "accepted True"
    assert order == ["outer in", "inner in", "before_ask", "inner out", "outer out"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_hook_can_ask_a_follow_up_question_and_hooks_do_not_run_for_it(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode, {"approved": True}, {"value": True})
    checked: list[str] = []

    @s.hitl.before_answer
    async def confirm_twice(question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any] | None:
        checked.append(question.message)
        again = await s.hitl.confirm(question.ctx, "Really deploy v2?")
        return None if isinstance(again, Accepted) and again.data else Declined(reason="not confirmed")

    assert await ask(s) == "accepted True"
    assert s.person.seen == ["Deploy v2?", "Really deploy v2?"]
    assert checked == ["Deploy v2?"]  # the hook did not run for its own question


async def order_across_two_nodes(one: MCPServer, two: MCPServer) -> CallToolResult | InputRequiredResult:
    """Call `order` (Name?, then Sure?) on node one, answer Name? there and Sure? on node two, which replays."""
    forms = ScriptedHuman()  # declares that the client shows forms; the test answers through the retries itself
    async with (
        Client(one, mode="auto", elicitation_callback=forms) as first,
        Client(two, mode="auto", elicitation_callback=forms) as second,
    ):
        asked = await first.session.call_tool("order", {}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        answers = {key: accept({"value": "Ada"}) for key in asked.input_requests or {}}
        then = await first.session.call_tool(
            "order", {}, input_responses=answers, request_state=asked.request_state, allow_input_required=True
        )
        assert isinstance(then, InputRequiredResult)
        answers = {key: accept({"value": True}) for key in then.input_requests or {}}
        return await second.session.call_tool(  # the second node does not hold the run: it replays it
            "order", {}, input_responses=answers, request_state=then.request_state, allow_input_required=True
        )


async def test_hooks_run_again_for_journaled_answers_when_another_node_replays_the_run(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    logs: list[list[str]] = []

    def node() -> MCPServer:
        server = MCPServer("replay")  # every node has the same name, so requestState opens on each
        hitl = Elicitation(server, store=store, secret="hooks-replay-secret-0123456789abcdef0123")
        log: list[str] = []
        logs.append(log)

        @server.tool()
        async def order(ctx: Context) -> str:
            name = await hitl.text(ctx, "Name?")
            sure = await hitl.confirm(ctx, "Sure?")
            return f"{name.action} {sure.action}"

        hitl.after_ask(stages={"sent"})(lambda q, stage: log.append(f"asked {q.message}"))
        hitl.before_answer(lambda q, r: log.append(f"answer {q.message} replayed={q.replayed}"))
        return server

    final = await order_across_two_nodes(node(), node())
    assert isinstance(final, CallToolResult)
    assert logs[0] == ["asked Name?", "answer Name? replayed=False", "asked Sure?"]
    assert logs[1] == ["answer Name? replayed=True", "answer Sure? replayed=True"]


async def test_a_route_filtered_veto_holds_when_another_node_replays_the_run(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"

    def node() -> MCPServer:
        server = MCPServer("replay")
        hitl = Elicitation(server, store=store, secret="hooks-replay-secret-0123456789abcdef0123")

        @server.tool()
        async def order(ctx: Context) -> str:
            name = await hitl.text(ctx, "Name?")
            sure = await hitl.confirm(ctx, "Sure?")
            return f"{name.action} {sure.action}"

        @hitl.before_answer(routes={"mrtr"})
        def no_names(question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any] | None:
            return Declined(reason="names are not kept") if question.message == "Name?" else None

        return server

    final = await order_across_two_nodes(node(), node())
    assert isinstance(final, CallToolResult)
    assert final.content[0].text == "decline accept"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_filter_that_raises_fails_closed_where_hooks_veto_and_is_skipped_where_they_observe(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    s.hitl.after_answer(when=lambda q: 1 / 0 > 0)(lambda q, o: None)
    s.hitl.after_ask(when=lambda q: 1 / 0 > 0)(lambda q, stage: None)
    assert await ask(s) == "accepted True"  # broken observers' filters lose nothing
    assert "ZeroDivisionError" in caplog.text

    vetoing = scene("native" if mode == "legacy" else "mrtr", mode)
    vetoing.hitl.before_answer(when=lambda q: 1 / 0 > 0)(lambda q, r: None)
    assert await ask(vetoing) == "vetoed: A policy check failed, so the answer was withheld"


def test_an_async_filter_is_refused_when_registered() -> None:
    s = scene("native", "legacy")

    async def when(question: QuestionInfo) -> bool:
        return True

    with pytest.raises(TypeError, match="not async"):
        s.hitl.after_answer(when=when)(lambda q, o: None)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_what_hooks_are_handed_cannot_be_changed_through_it(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    tried: list[str] = []

    @s.hitl.before_ask
    def meddle(question: QuestionInfo) -> None:
        for mapping in (question.schema, question.arguments):
            assert mapping is not None
            with pytest.raises(TypeError):
                mapping["approved"] = "x"  # type: ignore[index]
            tried.append("refused")
        with pytest.raises(AttributeError):
            question.message = "changed"  # type: ignore[misc]

    assert await ask(s) == "accepted True"
    assert tried == ["refused", "refused"]
    assert s.person.seen == ["Deploy v2?"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_around_hook_that_returns_no_result_or_asks_twice_fails_closed(mode: str) -> None:
    forgetful = scene("native" if mode == "legacy" else "mrtr", mode)

    @forgetful.hitl.around
    async def forgets_to_return(question: QuestionInfo, call_next: Any) -> None:
        await call_next()

    assert await ask(forgetful) == "vetoed: A policy check failed, so the answer was withheld"

    greedy = scene("native" if mode == "legacy" else "mrtr", mode)

    @greedy.hitl.around
    async def asks_twice(question: QuestionInfo, call_next: Any) -> ElicitationResult[Any]:
        await call_next()
        return await call_next()

    assert await ask(greedy) == "vetoed: A policy check failed, so the answer was withheld"
    assert greedy.person.seen == ["Deploy v2?"]  # the person was asked once


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_around_hook_lets_an_error_of_the_asking_itself_through_unchanged(mode: str) -> None:
    async def broken_handler(ctx: Any, question: Any) -> Any:
        raise ConnectionError("approval service unreachable")

    s = scene("handler", mode, fallback=broken_handler)

    @s.hitl.around
    async def timing(question: QuestionInfo, call_next: Any) -> ElicitationResult[Any]:
        return await call_next()

    async with Client(s.server, mode=mode) as client:
        result = await client.call_tool("deploy", {})
    assert result.is_error
    assert "policy check" not in result.content[0].text  # type: ignore[union-attr]
