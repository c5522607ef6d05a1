"""The desk every channel answers through: who may answer, secure links handed to approvers, typed numbers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, SecretStr
from starlette.requests import Request

from elicitkit import Accepted, Elicitation, StoreUnavailable
from elicitkit._schema.values import check_value
from elicitkit._web.forms import parse_form, typed_number
from elicitkit.channels.base import Responder, Via
from elicitkit.stores import MemoryStore
from tests.channels.recording import RecordingChannel
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio


class Login(BaseModel):
    user: str
    password: SecretStr


async def nobody_here(request: Request) -> str | None:
    return "a-web-user-who-is-not-the-caller"


def login_server() -> tuple[MCPServer, RecordingChannel, Elicitation]:
    server = MCPServer("desk")
    channel = RecordingChannel("discord")
    hitl = Elicitation(server, channels=[channel], page_identity=nobody_here, timeout=20)

    @server.tool()
    async def approve(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Ship?", via=Via("discord", "123", frozenset({"80351110224678912"})))
        return answer.action

    @server.tool()
    async def login(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, "Registry login?", Login, via=Via("discord", "123"))
        assert isinstance(answer, Accepted)
        return answer.data.user

    return server, channel, hitl


async def test_an_approver_id_counts_only_on_the_questions_own_channel(mode: str) -> None:
    server, channel, _ = login_server()
    got: dict[str, Any] = {}
    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await client.call_tool("approve", {})

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        # Someone signed in to the web inbox (or any other channel) under the same id is not the Discord approver.
        impostor = Responder("web", "80351110224678912", "80351110224678912")
        assert (await channel.desk.reply(prompt.token, impostor, "accept", {"value": True})).status == "not_approver"
        approver = Responder("discord", "80351110224678912", "Ada")
        assert (await channel.desk.reply(prompt.token, approver, "accept", {"value": True})).ok
    assert text_of(got["result"]) == "accept"


async def test_a_secure_link_handed_to_an_approver_opens_whoever_the_pages_identity_says_and_names_them() -> None:
    _, channel, hitl = login_server()
    async with serving(hitl) as url, Client(url, mode="auto") as client, anyio.create_task_group() as tg:
        got: dict[str, Any] = {}

        async def call() -> None:
            got["result"] = await client.call_tool("login", {})

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert prompt.secret_fields == ("password",)
        assert channel.desk is not None
        verdict = await channel.desk.secure_link(prompt.token, Responder("discord", "42", "Ada"))
        assert verdict.ok
        async with httpx.AsyncClient() as browser:
            page = await browser.get(verdict.message)
            assert page.status_code == 200  # the page's identity is a web user, not the Discord approver
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"ek:csrf": csrf.group(1), "ek:action": "accept", "user": "ops", "password": "hunter2"}
            assert (await browser.post(verdict.message, data=form)).status_code == 200
    assert text_of(got["result"]) == "ops"
    [closing] = await channel.closings(1)
    assert closing.text == "Answered by Ada: user: ops; password: ••••••"


def test_typed_numbers_keep_every_digit_and_not_a_number_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"account": {"type": "integer"}, "share": {"type": "number", "minimum": 0, "maximum": 1}},
    }
    content = parse_form(schema, {"account": ["9007199254740993"], "share": ["nan"]})
    assert content["account"] == 9007199254740993
    assert check_value(schema["properties"]["share"], content["share"]) == ["must be a finite number"]
    assert check_value({"type": "number"}, float("inf")) == ["must be a finite number"]
    assert typed_number(" 12 ", "integer") == 12
    assert typed_number("2.0", "integer") == 2
    assert typed_number("twelve", "integer") == "twelve"


class JournalDown(MemoryStore):
    """A memory store whose journal writes fail while `down` (the backend unreachable)."""

    down = False

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        if self.down:
            raise ConnectionError("backend unreachable")
        return await super().append_journal(run_id, seq, entry)

    async def take_round(
        self,
        run_id: str,
        token: str,
        expires_at: float,
        entries: Mapping[int, bytes],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        if self.down:
            raise ConnectionError("backend unreachable")
        return await super().take_round(run_id, token, expires_at, entries, answered, value)


async def test_an_answer_the_store_could_not_record_is_not_taken_and_the_same_click_counts_once_it_is_back() -> None:
    store = JournalDown()
    server = MCPServer("flaky")
    channel = RecordingChannel("discord")
    hitl = Elicitation(server, channels=[channel], store=store, timeout=20)

    @server.tool()
    async def approve(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Ship?", via=Via("discord", "123"))).action

    got: dict[str, Any] = {}
    async with Client(server, mode="auto") as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await client.call_tool("approve", {})

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        store.down = True
        with pytest.raises(StoreUnavailable):
            await channel.desk.reply(prompt.token, Responder("discord", "7", "Lin"), "accept", {"value": True})
        store.down = False
        assert (await channel.desk.reply(prompt.token, Responder("discord", "7", "Lin"), "accept", {"value": True})).ok
    assert text_of(got["result"]) == "accept"
    assert hitl.active_runs == 0


async def test_an_answer_that_comes_after_the_call_was_cancelled_is_told_the_question_is_closed() -> None:
    server, channel, _ = login_server()
    async with Client(server, mode="legacy") as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "approve", {})
        prompt = await channel.next_post(1)
        # The call (a 2025-11-25 call held in its request) is cancelled: its question is withdrawn.
        tg.cancel_scope.cancel()
    assert channel.desk is not None
    verdict = await channel.desk.reply(
        prompt.token, Responder("discord", "80351110224678912"), "accept", {"value": True}
    )
    assert verdict.status == "closed"
