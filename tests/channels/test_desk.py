"""The desk every channel answers through: who may answer, secure links handed to approvers, typed numbers."""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, SecretStr
from starlette.requests import Request

from elicitkit import Accepted, Elicitation
from elicitkit._schema.values import check_value
from elicitkit._web.forms import parse_form, typed_number
from elicitkit.channels.base import Responder, Via
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
            csrf = re.search(r'name="_csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"_csrf": csrf.group(1), "_action": "accept", "user": "ops", "password": "hunter2"}
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
