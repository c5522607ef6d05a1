"""Stage hooks (FrontMCP's `.Stage` and `.Did`): a question's id, the pending lookup, validation and publishing."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation, Problem, QuestionInfo, StageEvent
from elicitkit.channels.base import Responder, Via
from elicitkit.testing import ScriptedHuman, accept
from tests.channels.recording import RecordingChannel
from tests.hook_scenes import ROUTE_IDS, ROUTES, ask, scene
from tests.scenes import text_of
from tests.test_one_door_replay import SharedBroker

pytestmark = pytest.mark.anyio

# Routes where a refused answer is asked again through the same route (the page re-renders its form instead).
ASKED_AGAIN = [r for r in ROUTES if r[0] in ("native", "mrtr")]
ASKED_AGAIN_IDS = [f"{route}-{mode}" for route, mode, _ in ASKED_AGAIN]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_a_replaced_generate_id_names_the_question_on_every_route(route: str, mode: str, reported: str) -> None:
    s = scene(route, mode)
    made: list[tuple[str, str]] = []
    seen: list[str] = []
    watched: list[str | None] = []

    @s.hitl.stage("generate_id")
    def ticket_ids(message: str, mode: str) -> str:
        made.append((message, mode))
        return f"ticket-{len(made)}"

    s.hitl.after_ask(stages={"sent"})(lambda question, stage: seen.append(question.id))
    s.hitl.after_stage("generate_id")(lambda event: watched.append(event.question_id))
    assert await ask(s) == "accepted True"
    assert made == [("Deploy v2?", "url" if route == "page" else "form")]
    assert seen == watched == ["ticket-1"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_generate_id_watchers_hear_elicitkits_own_ids_too(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    events: list[StageEvent] = []
    s.hitl.after_stage("generate_id")(events.append)
    ids: list[str] = []
    s.hitl.after_ask(stages={"sent"})(lambda question, stage: ids.append(question.id))
    assert await ask(s) == "accepted True"
    assert [(e.stage, e.question_id) for e in events] == [("generate_id", ids[0])]
    assert len(ids[0]) >= 22  # 128 random bits


@pytest.mark.parametrize("made", ["", "has space", "x" * 129, 42, None])
async def test_a_generate_id_that_makes_no_usable_id_fails_closed(made: Any, caplog: pytest.LogCaptureFixture) -> None:
    s = scene("mrtr", "auto")
    s.hitl.stage("generate_id")(lambda message, mode: made)
    with caplog.at_level(logging.ERROR, logger="elicitkit"):
        assert await ask(s) == "vetoed: A policy check failed, so the question was not asked"
    assert "generate_id stage made" in caplog.text
    assert s.person.seen == []


async def test_a_generate_id_that_raises_fails_closed_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    s = scene("native", "legacy")

    @s.hitl.stage("generate_id")
    def broken(message: str, mode: str) -> str:
        raise RuntimeError("id service down")

    with caplog.at_level(logging.ERROR, logger="elicitkit"):
        assert await ask(s) == "vetoed: A policy check failed, so the question was not asked"
    assert "id service down" in caplog.text
    assert s.person.seen == []


@pytest.mark.parametrize(("route", "mode", "reported"), ASKED_AGAIN, ids=ASKED_AGAIN_IDS)
async def test_a_replaced_validate_refuses_an_answer_and_the_person_is_asked_again(
    route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode, {"approved": False}, {"approved": True})
    verdicts: list[tuple[Problem, ...]] = []

    @s.hitl.stage("validate")
    def must_approve(question: QuestionInfo, content: dict[str, Any]) -> list[Problem]:
        assert question.message == "Deploy v2?"
        return [] if content["approved"] else [Problem(["approved"], "must be approved to go on")]

    s.hitl.after_stage("validate")(lambda event: verdicts.append(event.problems))
    assert await ask(s) == "accepted True"
    assert len(s.person.seen) == 2
    assert verdicts == [(Problem(["approved"], "must be approved to go on"),), ()]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_replaced_validates_problems_reach_the_model_that_answered(mode: str) -> None:
    s = scene("llm", mode)
    s.hitl.stage("validate")(lambda question, content: [Problem(["approved"], "must be approved to go on")])
    async with Client(s.server, mode=mode) as client:
        asked = await client.call_tool("deploy", {})
        pending = (asked.meta or {})["elicitationPending"]
        told = await client.call_tool(
            "sendElicitationResult",
            {"elicitId": pending["elicitId"], "action": "accept", "content": {"approved": False}},
        )
    assert told.is_error
    assert "approved: must be approved to go on" in text_of(told)
    assert "The question is still open" in text_of(told)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_replaced_validate_cannot_let_through_what_the_schema_refuses(mode: str) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode, {"approved": "yes"}, {"approved": True})
    s.hitl.stage("validate")(lambda question, content: [])
    verdicts: list[list[str]] = []
    s.hitl.after_stage("validate")(lambda event: verdicts.append([p.dotted for p in event.problems]))
    assert await ask(s) == "accepted True"
    assert verdicts == [["approved"], []]  # the tool's type could not hold "yes": refused whatever the stage said


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_validate_that_raises_refuses_the_answer(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode)
    s.hitl.stage("validate")(lambda question, content: 1 / 0)
    with caplog.at_level(logging.ERROR, logger="elicitkit"):
        async with Client(s.server, mode=mode, elicitation_callback=s.person) as client:
            result = await client.call_tool("deploy", {})
    assert result.is_error
    assert "the answer could not be checked" in text_of(result)
    assert "the validate stage failed" in caplog.text


@pytest.mark.parametrize(
    ("route", "mode"), [("mrtr", "auto"), ("llm", "legacy"), ("llm", "auto"), ("app", "legacy"), ("app", "auto")]
)
async def test_lookup_pending_watchers_hear_each_arriving_answer_and_whether_its_question_was_open(
    route: str, mode: str
) -> None:
    s = scene(route, mode)
    events: list[StageEvent] = []
    s.hitl.after_stage("lookup_pending")(events.append)
    ids: list[str] = []
    s.hitl.after_ask(stages={"sent"})(lambda question, stage: ids.append(question.id))
    assert await ask(s) == "accepted True"
    source = "retry" if route == "mrtr" else "model"  # elicitkit's view answers through the model's door
    assert [(e.question_id, e.found, e.source) for e in events] == [(ids[0], True, source)]


async def test_a_lookup_for_an_answer_to_no_open_question_is_heard_as_not_found() -> None:
    s = scene("llm", "legacy")
    events: list[StageEvent] = []
    s.hitl.after_stage("lookup_pending")(events.append)
    async with Client(s.server, mode="legacy") as client:
        answered = await client.call_tool(
            "sendElicitationResult", {"elicitId": "no-such-question", "action": "accept", "content": {}}
        )
    assert answered.is_error
    assert "no open question has elicitId 'no-such-question'" in text_of(answered)
    assert [(e.question_id, e.found, e.source) for e in events] == [("no-such-question", False, "model")]


async def test_a_lookup_pending_watcher_that_raises_is_logged_and_the_answer_still_taken(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = scene("mrtr", "auto")

    @s.hitl.after_stage("lookup_pending")
    def broken(event: StageEvent) -> None:
        raise RuntimeError("audit log down")

    with caplog.at_level(logging.ERROR, logger="elicitkit"):
        assert await ask(s) == "accepted True"
    assert "lookup_pending stage watcher" in caplog.text


async def test_publish_watchers_hear_an_answer_sent_to_the_node_that_holds_its_run(tmp_path: Path) -> None:
    broker = SharedBroker()
    published: list[StageEvent] = []
    looked_up: dict[str, list[StageEvent]] = {"one": [], "two": []}

    def node(name: str) -> MCPServer:
        server = MCPServer("stages")  # alike on every node, so requestState opens on each
        hitl = Elicitation(
            server,
            store=f"sqlite:///{tmp_path / 'state.db'}",
            broker=broker,
            secret="stages-publish-secret-0123456789abcdef0123",
            node_id=name,
        )

        @server.tool()
        async def deploy(ctx: Context) -> str:
            return (await hitl.confirm(ctx, "Deploy?")).action

        hitl.after_stage("publish")(published.append)
        hitl.after_stage("lookup_pending")(looked_up[name].append)
        return server

    one, two = node("one"), node("two")
    async with (
        Client(one, mode="auto", elicitation_callback=ScriptedHuman()) as first,
        Client(two, mode="auto", elicitation_callback=ScriptedHuman()) as second,
    ):
        asked = await first.session.call_tool("deploy", {}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        [key] = asked.input_requests or {}
        done = await second.session.call_tool(
            "deploy",
            {},
            input_responses={key: accept({"value": True})},
            request_state=asked.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, CallToolResult) and text_of(done) == "accept"
    assert [(e.question_id, e.node, e.delivered, e.source) for e in published] == [(key, "one", True, "retry")]
    assert [(e.question_id, e.found) for e in looked_up["one"]] == [(key, True)]  # the owner's door took it
    assert looked_up["two"] == []


def test_only_generate_id_and_validate_can_be_replaced_and_each_once() -> None:
    hitl = Elicitation(MCPServer("stages"))
    with pytest.raises(ValueError, match="cannot be replaced"):
        hitl.stage("publish")(lambda event: None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown stage 'parseInput'"):
        hitl.stage("parseInput")(lambda message, mode: "x")  # type: ignore[arg-type]
    hitl.stage("generate_id")(lambda message, mode: "x")
    with pytest.raises(ValueError, match="replaced already"):
        hitl.stage("generate_id")(lambda message, mode: "y")


def test_stage_hooks_are_plain_functions() -> None:
    hitl = Elicitation(MCPServer("stages"))

    async def later(event: StageEvent) -> None: ...

    with pytest.raises(TypeError, match="plain function"):
        hitl.after_stage("publish")(later)
    with pytest.raises(TypeError, match="callable"):
        hitl.after_stage("publish")(42)  # type: ignore[arg-type]


async def test_a_channels_verdict_lists_every_problem_of_a_field_under_its_name(mode: str) -> None:
    """`Verdict.problems` is by field name: a field with two problems (the schema's and a stage's) keeps both."""
    server = MCPServer("stages")
    channel = RecordingChannel("slack")
    hitl = Elicitation(server, channels=[channel])
    schema = {"type": "object", "properties": {"note": {"type": "string", "maxLength": 20}}, "required": ["note"]}

    @hitl.stage("validate")
    def no_prod(question: QuestionInfo, content: dict[str, Any]) -> list[Problem]:
        if "prod" not in content["note"]:
            return []
        return [Problem(["note"], "must not mention prod"), Problem(["note"], "must name a change ticket")]

    @server.tool()
    async def ship(ctx: Context) -> str:
        return (await hitl.elicit(ctx, "Ship?", schema, via=Via("slack", "#ops"))).status

    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "ship", {})
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        too_long = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"note": "prod " * 5})
        mentions = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"note": "prod now"})
        assert (await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"note": "ok"})).ok
    assert too_long.problems == {"note": "must be at most 20 characters"}  # the type refused it: no stage verdict
    assert mentions.problems == {"note": "must not mention prod; must name a change ticket"}


async def test_a_replaced_validate_holds_for_an_answer_taken_from_a_stored_question(tmp_path: Path) -> None:
    """The run is not live on the node the answer reaches (its node is gone, or it hibernated): the answer is
    taken from the question's record, and the stage rules on it there as it would on a live question."""
    verdicts: list[tuple[str, tuple[str, ...]]] = []

    def node() -> MCPServer:
        server = MCPServer("stages")  # alike on every node, so requestState opens on each
        hitl = Elicitation(
            server, store=f"sqlite:///{tmp_path / 'state.db'}", secret="stages-record-secret-0123456789ab"
        )

        @server.tool()
        async def ship(ctx: Context) -> str:
            ticket = await hitl.text(ctx, "Change ticket?")
            return ticket.data if isinstance(ticket, Accepted) else ticket.status

        @hitl.stage("validate")
        def change_tickets_only(question: QuestionInfo, content: dict[str, Any]) -> list[Problem]:
            assert question.message == "Change ticket?"
            return [] if content["value"].startswith("CHG-") else [Problem(["value"], "must be a change ticket")]

        hitl.after_stage("validate")(
            lambda e: verdicts.append((e.question_id or "", tuple(p.message for p in e.problems)))
        )
        return server

    one, two = node(), node()  # no broker between them: the second takes the run over from the store
    async with (
        Client(one, mode="auto", elicitation_callback=ScriptedHuman()) as first,
        Client(two, mode="auto", elicitation_callback=ScriptedHuman()) as second,
    ):
        asked = await first.session.call_tool("ship", {}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        [key] = asked.input_requests or {}
        again = await second.session.call_tool(
            "ship",
            {},
            input_responses={key: accept({"value": "tomorrow"})},
            request_state=asked.request_state,
            allow_input_required=True,
        )
        assert isinstance(again, InputRequiredResult)  # refused: asked again, not handed to the tool
        [key_again] = again.input_requests or {}
        done = await second.session.call_tool(
            "ship",
            {},
            input_responses={key_again: accept({"value": "CHG-7"})},
            request_state=again.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, CallToolResult) and text_of(done) == "CHG-7"
    assert verdicts[0] == (key, ("must be a change ticket",))
    assert verdicts[-1][1] == ()
