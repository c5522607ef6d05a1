"""Clients that cannot show forms: the model asks the person and answers through `sendElicitationResult`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult, Implementation
from pydantic import BaseModel, Field

from elicitkit import Accepted, ClientOverride, Elicitation, Titles
from elicitkit.testing import ScriptedHuman, accept, call_through_model, decline, serve_http
from tests.examples import load_example
from tests.scenes import ERAS, new_server, pending_id, reached, send_answer, text_of, watched_server

pytestmark = pytest.mark.anyio


class Approval(BaseModel):
    approved: bool = Field(description="Ship it?")
    note: str | None = Field(default=None, max_length=20)


class Report(BaseModel):
    summary: str


def deploy_server(**options: Any) -> tuple[MCPServer, Elicitation, list[str]]:
    """A three-question tool: a model, a titled choice and a multi-select."""
    server, hitl = new_server("fallback-server", **options)
    bodies: list[str] = []

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        bodies.append(version)
        approval = await hitl.elicit(ctx, f"Deploy {version}?", Approval)
        if not (isinstance(approval, Accepted) and approval.data.approved):
            return f"{version} not deployed"
        target = await hitl.titled_choice(ctx, "Where to?", {"eu": "Europe", "us": "America"})
        checks = await hitl.choices(ctx, "Which checks?", ["lint", "tests", "canary"], min_items=1)
        assert isinstance(target, Accepted)
        assert isinstance(checks, Accepted)
        return f"{version} to {target.data} after {'+'.join(checks.data)} ({approval.data.note})"

    return server, hitl, bodies


def three_answers() -> ScriptedHuman:
    return ScriptedHuman(
        accept({"approved": True, "note": "ok"}), accept({"value": "eu"}), accept({"value": ["lint", "canary"]})
    )


async def test_a_client_without_forms_completes_a_three_question_tool_through_the_model(mode: str) -> None:
    server, hitl, bodies = deploy_server()
    human = three_answers()
    async with Client(server, mode=mode) as client:
        result = await call_through_model(client, "deploy", {"version": "2.1"}, human)
    assert not result.is_error
    assert text_of(result) == "2.1 to eu after lint+canary (ok)"
    assert [e.message for e in human.transcript] == ["Deploy 2.1?", "Where to?", "Which checks?"]
    assert bodies == ["2.1"]
    assert hitl.active_runs == 0


async def test_over_http_the_model_completes_the_tool_on_both_eras(mode: str) -> None:
    server, hitl, bodies = deploy_server()
    async with serve_http(server) as url, Client(url, mode=mode) as client:
        assert client.protocol_version == ERAS[mode]
        result = await call_through_model(client, "deploy", {"version": "3.0"}, three_answers())
    assert text_of(result) == "3.0 to eu after lint+canary (ok)"
    assert bodies == ["3.0"]
    assert hitl.active_runs == 0


async def test_the_pending_result_tells_the_model_what_to_ask_and_how_to_answer(mode: str) -> None:
    server, _, _ = deploy_server()
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("deploy", {"version": "2.1"})
    assert not result.is_error
    assert result.meta is not None
    pending = result.meta["elicitationPending"]
    assert set(pending) == {"elicitId", "message", "schema", "expiresAt", "instructions"}
    assert pending["message"] == "Deploy 2.1?"
    assert pending["schema"]["required"] == ["approved"]
    assert isinstance(pending["expiresAt"], int)
    assert result.structured_content == {"elicitationPending": pending}
    body = text_of(result)
    assert "Question for the user: Deploy 2.1?" in body
    assert "- approved (true or false; required): Ship it?" in body
    assert "- note (text; at most 20 characters; optional)" in body
    assert f'call the tool `sendElicitationResult` with elicitId "{pending["elicitId"]}"' in body
    assert "Do not guess or invent the answer" in body


async def test_choices_and_defaults_are_spelled_out_for_the_model() -> None:
    server, hitl = new_server()

    class Rollout(BaseModel):
        region: Annotated[Literal["eu", "us"], Titles(eu="Europe")] = "eu"
        checks: Annotated[list[Literal["lint", "tests"]], Field(min_length=1)]
        replicas: Annotated[int, Field(ge=1, le=9)] = 2

    @server.tool()
    async def rollout(ctx: Context) -> str:
        await hitl.elicit(ctx, "Rollout?", Rollout)
        return "done"

    async with Client(server, mode="legacy") as client:
        body = text_of(await client.call_tool("rollout", {}))
    assert '- region (one of: "eu" (Europe), "us"; optional; default "eu")' in body
    assert '- checks (a list of one or more of: "lint", "tests"; at least 1; required)' in body
    assert "- replicas (a whole number; minimum 1; maximum 9; optional; default 2)" in body


async def test_invalid_content_is_refused_naming_the_field_and_the_question_stays_open(mode: str) -> None:
    server, _, bodies = deploy_server()
    async with Client(server, mode=mode) as client:
        elicit_id = pending_id(await client.call_tool("deploy", {"version": "2.1"}))
        bad = await send_answer(client, elicit_id, "accept", {"approved": "yes", "note": "x" * 30})
        assert bad.is_error
        assert "approved: must be true or false" in text_of(bad)
        assert "note: must be at most 20 characters" in text_of(bad)
        assert "still open" in text_of(bad)
        assert "x" * 30 not in text_of(bad)
        retried = await send_answer(client, elicit_id, "accept", {"approved": False})
    assert text_of(retried) == "2.1 not deployed"
    assert bodies == ["2.1"]


async def test_unknown_and_already_answered_elicit_ids_are_refused_and_resume_nothing(mode: str) -> None:
    server, _, bodies = deploy_server()
    async with Client(server, mode=mode) as client:
        unknown = await send_answer(client, "nope", "decline")
        assert unknown.is_error
        assert "no open question has elicitId 'nope'" in text_of(unknown)
        elicit_id = pending_id(await client.call_tool("deploy", {"version": "2.1"}))
        done = await send_answer(client, elicit_id, "decline")
        assert text_of(done) == "2.1 not deployed"
        again = await send_answer(client, elicit_id, "decline")
    assert again.is_error
    assert "no open question" in text_of(again)
    assert bodies == ["2.1"]


async def test_malformed_system_tool_arguments_get_a_clear_error() -> None:
    server, _, _ = deploy_server()
    async with Client(server, mode="legacy") as client:
        missing = await client.call_tool("sendElicitationResult", {"action": "accept"})
        wrong = await client.call_tool("sendElicitationResult", {"elicitId": "x", "action": "maybe"})
        not_an_object = await client.call_tool(
            "sendElicitationResult", {"elicitId": "x", "action": "accept", "content": "yes"}
        )
    assert "elicitId must be the id given in the question" in text_of(missing)
    assert 'action must be "accept", "decline" or "cancel"' in text_of(wrong)
    assert "content must be an object" in text_of(not_an_object)


async def test_another_session_cannot_answer_a_question() -> None:
    server, _, _ = deploy_server()
    async with Client(server, mode="legacy") as owner, Client(server, mode="legacy") as intruder:
        elicit_id = pending_id(await owner.call_tool("deploy", {"version": "2.1"}))
        stolen = await send_answer(intruder, elicit_id, "decline")
        assert stolen.is_error
        assert "no open question" in text_of(stolen)
        mine = await send_answer(owner, elicit_id, "decline")
    assert text_of(mine) == "2.1 not deployed"


class Tokens:
    """A token verifier with two users."""

    async def verify_token(self, token: str) -> AccessToken | None:
        users = {"tok-alice": "alice", "tok-bob": "bob"}
        if token not in users:
            return None
        return AccessToken(token=token, client_id="test-client", scopes=[], subject=users[token])


async def test_another_principal_cannot_answer_a_question_on_2026() -> None:
    server = MCPServer(
        "auth-server",
        auth=AuthSettings(
            issuer_url="https://auth.example.com",
            resource_server_url="http://127.0.0.1/mcp",
            validate_token_resource=False,  # the test verifier vouches for its own tokens
        ),
        token_verifier=Tokens(),
    )
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Deploy?")
        return result.action

    @asynccontextmanager
    async def as_user(url: str, token: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http), mode="auto") as client,
        ):
            yield client

    async with serve_http(server) as url, as_user(url, "tok-alice") as alice, as_user(url, "tok-bob") as bob:
        elicit_id = pending_id(await alice.call_tool("deploy", {}))
        stolen = await send_answer(bob, elicit_id, "decline")
        assert stolen.is_error
        assert "no open question" in text_of(stolen)
        mine = await send_answer(alice, elicit_id, "decline")
    assert text_of(mine) == "decline"
    assert hitl.active_runs == 0


async def test_parallel_runs_through_the_model_never_cross(mode: str) -> None:
    server, hitl = new_server()

    @server.tool()
    async def echo(n: int, ctx: Context) -> str:
        first = await hitl.text(ctx, f"First for {n}")
        second = await hitl.text(ctx, f"Second for {n}")
        assert isinstance(first, Accepted)
        assert isinstance(second, Accepted)
        return f"{first.data}/{second.data}"

    def answer(params: ElicitRequestParams) -> ElicitResult:
        kind, _, n = params.message.split()
        return accept({"value": f"{kind[0]}{n}"})

    human = ScriptedHuman(answer, repeat_last=True)
    results: dict[int, str] = {}
    async with Client(server, mode=mode) as client:

        async def one(n: int) -> None:
            results[n] = text_of(await call_through_model(client, "echo", {"n": n}, human))

        async with anyio.create_task_group() as tg:
            for n in range(6):
                tg.start_soon(one, n)
    assert results == {n: f"F{n}/S{n}" for n in range(6)}
    assert hitl.active_runs == 0


async def test_an_expired_question_is_refused(mode: str) -> None:
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Quick?"), timeout=0.1)
    async with Client(scene.server, mode=mode) as client:
        elicit_id = pending_id(await client.call_tool("ask", {}))
        await reached(scene.timed_out)
        late = await send_answer(client, elicit_id, "accept", {"value": True})
    assert late.is_error
    assert "no open question" in text_of(late)


async def test_the_system_tool_is_listed_only_for_clients_that_need_it(mode: str) -> None:
    server, _, _ = deploy_server()
    async with Client(server, mode=mode) as without:
        names_without = {t.name for t in (await without.list_tools()).tools}
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman()) as with_forms:
        names_with = {t.name for t in (await with_forms.list_tools()).tools}
    assert names_without == {"deploy", "sendElicitationResult"}
    assert names_with == {"deploy"}


async def test_the_system_tool_can_be_renamed(mode: str) -> None:
    server, _, _ = deploy_server(fallback_tool="answer_user_question")
    async with Client(server, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await call_through_model(client, "deploy", {"version": "1"}, ScriptedHuman(decline()))
    assert names == {"deploy", "answer_user_question"}
    assert text_of(result) == "1 not deployed"


async def test_a_client_override_routes_a_host_that_declares_forms_but_never_shows_them(mode: str) -> None:
    server, _, _ = deploy_server(client_overrides=[ClientOverride("acme-*", versions=">=1.0,<2", modes=())])
    never_shows = ScriptedHuman()  # would fail the test if the server sent it a form
    info = Implementation(name="acme-desktop", version="1.4.2")
    async with Client(server, mode=mode, elicitation_callback=never_shows, client_info=info) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await call_through_model(client, "deploy", {"version": "1"}, ScriptedHuman(decline()))
    assert "sendElicitationResult" in names
    assert text_of(result) == "1 not deployed"
    assert never_shows.transcript == []


async def test_a_typed_tool_result_passes_the_clients_output_schema_check(mode: str) -> None:
    server, hitl = new_server()

    @server.tool()
    async def report(ctx: Context) -> Report:
        result = await hitl.text(ctx, "Summary?")
        assert isinstance(result, Accepted)
        return Report(summary=result.data)

    async with Client(server, mode=mode) as client:
        result = await call_through_model(client, "report", {}, ScriptedHuman(accept({"value": "all green"})))
    assert result.structured_content == {"summary": "all green"}


async def test_the_error_policy_and_a_custom_handler_replace_the_model_route(mode: str) -> None:
    asked: list[str] = []

    async def auto_decline(ctx: Context, question: Any) -> ElicitResult:
        asked.append(question.message)
        return ElicitResult(action="decline")

    server, _, _ = deploy_server(fallback=auto_decline)
    async with Client(server, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("deploy", {"version": "9"})
    assert text_of(result) == "9 not deployed"
    assert asked == ["Deploy 9?"]
    assert names == {"deploy"}


async def test_keepalive_progress_flows_while_a_person_thinks() -> None:
    server, _, _ = deploy_server(keepalive=0.02)
    beats: list[tuple[float, str | None]] = []
    enough = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        beats.append((progress, message))
        if len(beats) >= 3:
            enough.set()

    async def slow_human(context: Any, params: ElicitRequestParams) -> ElicitResult:
        with anyio.fail_after(5):
            await enough.wait()
        return ElicitResult(action="decline")

    async with Client(server, mode="legacy", elicitation_callback=slow_human) as client:
        result = await client.call_tool("deploy", {"version": "1"}, progress_callback=on_progress)
    assert text_of(result) == "1 not deployed"
    assert [p for p, _ in beats[:3]] == [1, 2, 3]
    assert {m for _, m in beats} == {"Waiting for a person to answer"}


async def test_a_client_without_forms_completes_every_example_tool(mode: str) -> None:
    example = load_example("deploy_desk")
    human = ScriptedHuman(
        accept({"approved": True}),
        accept({"value": "prod-us"}),
        accept({"value": ["lint", "canary"]}),
        accept({"when": "weekend", "notify": True}),
    )
    async with Client(example.server, mode=mode) as client:
        deployed = await call_through_model(client, "deploy", {"version": "4.0"}, human)
        scheduled = await call_through_model(client, "schedule", {"version": "4.1"}, human)
    assert text_of(deployed) == "Deployed 4.0 to Production (US) after lint, canary."
    assert text_of(scheduled) == "4.1 scheduled weekend, #releases told."
