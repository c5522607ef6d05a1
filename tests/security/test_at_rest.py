"""Plaintext at rest: with a secret, nothing a question or its answer says is readable in the store.

A tool whose arguments, message, schema (titles, descriptions, choices, defaults), answer and the person it
asks each carry a unique marker runs on both eras against a SQLite file and a real Redis. Its first question
is answered (journaled); its second, with the same schema, waits in a web inbox (a pending question and an
inbox entry). Then every byte of the SQLite file (and its WAL) and every key and value in Redis is read: no
marker is there. The same run without a secret is the control: the same reading finds them.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis.asyncio as aioredis
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Elicitation
from elicitkit._crypto import SECRET_VARIABLES
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from tests.channels.test_web_inbox import header_identity, person
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, pending_id, send_answer, serving

pytestmark = pytest.mark.anyio

SECRET = "at-rest-secret-0123456789abcdef0123456789abcdef"


class Markers:
    """One unique marker per thing that must not be stored in the clear."""

    def __init__(self) -> None:
        tag = secrets.token_hex(4)
        names = [
            "argument", "message", "title", "description", "choice", "choice title", "default", "answer", "inbox",
            "principal",
        ]  # fmt: skip
        self.by_name = {name: f"{name.replace(' ', '-').upper()}-{tag}" for name in names}

    def __getitem__(self, name: str) -> str:
        return self.by_name[name]

    def found_in(self, stored: bytes) -> list[str]:
        return [name for name, marker in self.by_name.items() if marker.encode() in stored]


def marked_server(markers: Markers, **options: Any) -> Elicitation:
    server = MCPServer("at-rest")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=20, **options)
    schema = {
        "type": "object",
        "properties": {
            "plan": {
                "type": "string",
                "title": markers["title"],
                "description": markers["description"],
                "oneOf": [
                    {"const": markers["choice"], "title": markers["choice title"]},
                    {"const": "basic", "title": "Basic"},
                ],
                "default": "basic",
            },
            "note": {"type": "string", "default": markers["default"]},
        },
        "required": ["plan"],
    }

    @server.tool()
    async def provision(name: str, ctx: Context) -> str:
        first = await hitl.elicit(ctx, markers["message"], schema)
        second = await hitl.elicit(ctx, markers["inbox"], schema, via=web(markers["principal"]))
        return f"{first.action} {second.action}"

    return hitl


@asynccontextmanager
async def waiting_in_the_inbox(hitl: Elicitation, markers: Markers, mode: str) -> AsyncIterator[None]:
    """Run `provision` until its first question is answered and its second waits in its person's inbox."""
    answer = {"plan": markers["choice"], "note": markers["answer"]}
    arguments = {"name": markers["argument"]}
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serving(hitl))
        alice = await stack.enter_async_context(person(url, markers["principal"]))
        events = await stack.enter_async_context(alice.events())
        client = await stack.enter_async_context(by_hand(url) if mode == "auto" else Client(url, mode="legacy"))
        tg = await stack.enter_async_context(anyio.create_task_group())
        if mode == "auto":  # the 2026-07-28 client answers in its retry
            rounds = Rounds("provision", arguments)
            first = await rounds.start(client)
            [key] = first.input_requests or {}
            responses = {key: {"action": "accept", "content": answer}}
            tg.start_soon(lambda: rounds.answer(client, first, input_responses=responses))
        else:  # a 2025-11-25 client without forms: the model answers
            elicit_id = pending_id(await client.call_tool("provision", arguments))
            tg.start_soon(lambda: send_answer(client, elicit_id, "accept", answer))
        question = await alice.arrival(events, markers["inbox"])
        yield
        assert (await alice.answer(question, "decline")).status_code == 200  # the tool ends, and the call with it


async def sqlite_bytes(folder: Path) -> bytes:
    return await anyio.to_thread.run_sync(lambda: b"".join(p.read_bytes() for p in sorted(folder.glob("state.db*"))))


async def redis_bytes(url: str) -> bytes:
    """Every key in the Redis, and every value in it, whatever its type."""
    found: list[bytes] = []
    client = aioredis.Redis.from_url(url)
    try:
        async for key in client.scan_iter("*"):
            kind = (await client.type(key)).decode()
            found.append(key)
            if kind == "string":
                found.append(await client.get(key) or b"")
            elif kind == "hash":
                found.extend(k + v for k, v in (await client.hgetall(key)).items())
            elif kind == "set":
                found.extend(await client.smembers(key))
            elif kind == "zset":
                found.extend(await client.zrange(key, 0, -1))
            elif kind == "list":
                found.extend(await client.lrange(key, 0, -1))
    finally:
        await client.aclose()
    return b"\n".join(found)


async def stored_while_waiting(store: str, markers: Markers, mode: str, tmp: Path, url: str, **options: Any) -> bytes:
    hitl = marked_server(markers, store=f"sqlite:///{tmp / 'state.db'}" if store == "sqlite" else url, **options)
    try:
        async with waiting_in_the_inbox(hitl, markers, mode):
            stored = await sqlite_bytes(tmp) if store == "sqlite" else await redis_bytes(url)
    finally:
        await hitl.aclose()
    assert stored
    return stored


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_with_a_secret_no_argument_message_schema_or_answer_is_stored_in_the_clear(
    store: str, mode: str, tmp_path: Path, redis_server: RedisServer
) -> None:
    markers = Markers()
    stored = await stored_while_waiting(store, markers, mode, tmp_path, redis_server.url, secret=SECRET)
    assert markers.found_in(stored) == []


@pytest.mark.parametrize("variable", SECRET_VARIABLES[1:])
async def test_a_frontmcp_deployments_secret_variable_alone_seals_what_is_stored(
    variable: str, mode: str, tmp_path: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (*SECRET_VARIABLES, "ELICITKIT_SECRET_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, SECRET)
    markers = Markers()
    stored = await stored_while_waiting("sqlite", markers, mode, tmp_path, redis_server.url)
    assert markers.found_in(stored) == []


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_in_plaintext_on_purpose_the_same_reading_finds_them_which_is_why_production_needs_a_secret(
    store: str, tmp_path: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ELICITKIT_SECRET", raising=False)
    for variable in SECRET_VARIABLES[1:]:
        monkeypatch.delenv(variable, raising=False)
    markers = Markers()
    stored = await stored_while_waiting(store, markers, "auto", tmp_path, redis_server.url, plaintext_store=True)
    assert {"argument", "inbox", "title", "description", "choice title", "default", "answer"} <= set(
        markers.found_in(stored)
    )
