"""Every route elicitkit serves reads a body within a size and a time limit, before anything else.

Over real HTTP, at the three kinds of entry point, each with a question open
on it: a secure page's link, the web inbox's answer form, and Slack's
interaction callback. Bodies are written by hand on plain sockets
(`tests/security/wire.py`), so a test can stop half-way or keep sending while
it watches what the server answers.
"""

from __future__ import annotations

import logging
import re
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from pydantic import BaseModel, SecretStr
from starlette.requests import Request

from elicitkit import BodyLimits, Elicitation
from elicitkit.channels import DiscordChannel, SlackChannel, TeamsChannel, WebInbox, slack, web
from tests.channels.slack_server import LocalSlack
from tests.scenes import reached, serving
from tests.security import wire
from tests.security.wire import MiB

pytestmark = pytest.mark.anyio

Entry = Literal["page", "inbox", "slack"]
ENTRIES: list[Entry] = ["page", "inbox", "slack"]
USER = "X-Test-User"
FORM = "application/x-www-form-urlencoded"
READ_TIMEOUT = 1.0
CSRF = re.compile(r'name="ek:csrf" value="([^"]+)"')
ROUTES = {"page": "/elicit/f/{token}", "inbox": "/elicit/inbox/answer", "slack": "/elicit/channels/slack/interactions"}
LIMITS = {"page": 256 * 1024, "inbox": 256 * 1024, "slack": 1 << 20}


class Login(BaseModel):
    user: str
    password: SecretStr


async def header_identity(request: Request) -> str | None:
    return request.headers.get(USER)


def desk(local: LocalSlack, limits: BodyLimits) -> tuple[Elicitation, anyio.Event]:
    """A tool per entry point, each asking one question there; the event is set once a channel question is out."""
    server = MCPServer("bounded")
    slack_channel = SlackChannel(local.token, local.signing_secret, api_url=local.api_url)
    hitl = Elicitation(
        server, channels=[WebInbox(), slack_channel], page_identity=header_identity, body_limits=limits, timeout=30
    )
    posted = anyio.Event()

    @hitl.after_ask(stages={"sent"}, routes={"channel"})
    def out(question: object, stage: object) -> None:
        posted.set()

    @server.tool()
    async def page(ctx: Context) -> str:
        return (await hitl.secure_form(ctx, "Registry login?", Login)).action

    @server.tool()
    async def inbox(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Ship?", via=web("alice"))).action

    @server.tool(name="slack")
    async def in_slack(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Deploy?", via=slack("#deploys"))).action

    return hitl, posted


@asynccontextmanager
async def open_question(
    entry: Entry, mode: str, limits: BodyLimits | None = None
) -> AsyncIterator[tuple[Elicitation, str]]:
    """A question open at `entry`, asked over real HTTP on `mode`'s era; yield the server and where answers go."""
    async with LocalSlack().serving() as local:
        hitl, posted = desk(local, limits or BodyLimits(read_timeout=READ_TIMEOUT))
        links: list[str] = []
        linked = anyio.Event()

        async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestURLParams)
            links.append(params.url)
            linked.set()
            return ElicitResult(action="accept")  # the person agreed to open the page

        async with (
            serving(hitl) as url,
            Client(url, mode=mode, elicitation_callback=person) as client,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(client.call_tool, entry, {})
            await reached(linked if entry == "page" else posted)
            yield hitl, links[0] if entry == "page" else url.removesuffix("/mcp") + ROUTES[entry]
            tg.cancel_scope.cancel()


def refusals(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """elicitkit's WARNING lines, after asserting nothing at all was logged with a traceback."""
    assert [r.getMessage() for r in caplog.records if r.exc_info or r.exc_text] == []
    return [r for r in caplog.records if r.name == "elicitkit" and r.levelno >= logging.WARNING]


# -- too large ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
async def test_a_ten_mebibyte_body_is_refused_as_soon_as_its_length_is_declared(
    entry: Entry, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_question(entry, mode) as (hitl, url):
        async with wire.request(url, {"Content-Type": FORM, "Content-Length": str(10 * MiB), USER: "alice"}) as sent:
            await sent.send(b"ek%3Aaction=accept&" + b"x" * 16_000)  # the rest is never sent: the answer comes first
            with anyio.fail_after(5):
                answer = await sent.answer()
        assert (answer.status, answer.body, answer.closed) == (413, b"Request body too large", True)
        assert answer.headers["connection"] == "close"
        assert hitl.pending_questions == 1  # nothing reached the question
    # One line, naming the route (a page's link never: it is a credential) and the limit; never the body.
    [line] = refusals(caplog)
    assert (
        line.getMessage()
        == f"Refused a request to {ROUTES[entry]} from 127.0.0.1: its body is over the limit of {LIMITS[entry]} bytes (413)"
    )


@pytest.mark.parametrize("entry", ENTRIES)
async def test_a_streamed_ten_mebibyte_body_is_read_no_further_than_the_limit(
    entry: Entry, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    piece = wire.chunk(b"x" * 65_536)  # sent again and again: the client allocates nothing as it goes
    async with open_question(entry, mode) as (hitl, url):
        tracemalloc.start()
        try:
            async with wire.request(url, {"Content-Type": FORM, "Transfer-Encoding": "chunked"}) as sent:
                with anyio.fail_after(10):
                    answer, count = await sent.stream_until_answered(piece, 10 * MiB)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (answer.status, answer.closed) == (413, True)
        assert hitl.pending_questions == 1
    # Python's memory, server and client together, never held the body: the limit here is 1 MiB at most.
    assert peak < 3 * MiB, f"{peak} bytes traced while {count} bytes were sent"
    assert [line.getMessage()[-5:] for line in refusals(caplog)] == ["(413)"]


async def test_a_page_takes_an_answer_under_its_limit_and_refuses_one_over_it(mode: str) -> None:
    async with open_question("page", mode, BodyLimits(page=2048)) as (hitl, link), httpx.AsyncClient() as browser:
        page = await browser.get(link)
        match = CSRF.search(page.text)
        assert page.status_code == 200 and match is not None
        form = {"ek:csrf": match.group(1), "ek:action": "accept", "user": "ops", "password": "sk"}
        refused = await browser.post(link, data=form | {"padding": "x" * 2048})
        assert (refused.status_code, refused.text) == (413, "Request body too large")
        taken = await browser.post(link, data=form)
        assert taken.status_code == 200 and "Thank you" in taken.text
        assert hitl.pending_questions == 0


# -- too slow, or gone -------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
async def test_a_half_sent_body_is_dropped_within_the_read_timeout(
    entry: Entry, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_question(entry, mode) as (hitl, url):
        async with wire.request(url, {"Content-Type": FORM, "Content-Length": "4096", USER: "alice"}) as sent:
            await sent.send(b"ek%3Aaction=accept&")
            with anyio.fail_after(READ_TIMEOUT + 4):
                answer = await sent.answer()
        assert (answer.status, answer.body, answer.closed) == (408, b"Request body not received in time", True)
        assert hitl.pending_questions == 1
    assert [line.getMessage()[-5:] for line in refusals(caplog)] == ["(408)"]


async def test_thirty_half_sent_callbacks_are_all_dropped_within_the_read_timeout(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_question("slack", mode) as (hitl, url):
        answers: list[wire.Answer] = []

        async def stall() -> None:
            async with wire.request(url, {"Content-Type": FORM, "Content-Length": "2000"}) as sent:
                await sent.send(b"payload=%7B")
                answers.append(await sent.answer())

        with anyio.fail_after(READ_TIMEOUT + 5):
            async with anyio.create_task_group() as tg:
                for _ in range(30):
                    tg.start_soon(stall)
        assert [(a.status, a.closed) for a in answers] == [(408, True)] * 30
        assert hitl.pending_questions == 1
    assert len(refusals(caplog)) == 30


@pytest.mark.parametrize("entry", ENTRIES)
async def test_a_client_that_leaves_mid_body_is_logged_in_one_line_without_a_traceback(
    entry: Entry, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="elicitkit")
    left = anyio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "went away before its body arrived" in record.getMessage():
                left.set()

    watch = Watch()
    logging.getLogger("elicitkit").addHandler(watch)
    try:
        async with open_question(entry, mode) as (hitl, url):
            async with wire.request(url, {"Content-Type": FORM, "Content-Length": "4096", USER: "alice"}) as sent:
                await sent.send(b"ek%3Aaction=")
            await reached(left)  # the connection closed above, half-way through the body
            assert hitl.pending_questions == 1
    finally:
        logging.getLogger("elicitkit").removeHandler(watch)
    assert refusals(caplog) == []
    assert [r.levelname for r in caplog.records if "went away" in r.getMessage()] == ["INFO"]


# -- every route ------------------------------------------------------------------------------------------------


async def test_every_route_elicitkit_serves_refuses_a_large_body_and_drops_a_stalled_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
    channels = [
        WebInbox(),
        SlackChannel("xoxb-unused", "signing-secret"),
        DiscordChannel("bot-token", key),
        TeamsChannel("app-id", "app-password", service_url="https://smba.trafficmanager.net/teams/"),
    ]
    limits = BodyLimits(read_timeout=READ_TIMEOUT)
    hitl = Elicitation(MCPServer("every-route"), channels=channels, page_identity=header_identity, body_limits=limits)
    # Read from routes() itself: a route added later is held to the same limits without a test saying so.
    calls = sorted((method, r.path) for r in hitl.routes() for method in (r.methods or set()) - {"HEAD"})
    assert {path for _, path in calls} >= {
        "/elicit/f/{token}",
        "/elicit/inbox/answer",
        "/elicit/inbox/events",
        "/elicit/channels/slack/interactions",
        "/elicit/channels/discord/interactions",
        "/elicit/channels/teams/messages",
    }
    answers: dict[tuple[str, str, str], int] = {}
    async with serving(hitl) as url:
        base = url.removesuffix("/mcp")

        async def large(method: str, path: str) -> None:
            target = base + path.replace("{token}", "t0k3n")
            async with wire.request(target, {"Content-Length": str(10 * MiB), USER: "alice"}, method) as sent:
                await sent.send(b"x" * 1024)
                answers[method, path, "large"] = (await sent.answer()).status

        async def stalled(method: str, path: str) -> None:
            target = base + path.replace("{token}", "t0k3n")
            async with wire.request(target, {"Content-Length": "100", USER: "alice"}, method) as sent:
                await sent.send(b"x" * 10)
                answers[method, path, "stalled"] = (await sent.answer()).status

        with anyio.fail_after(READ_TIMEOUT + 5):
            async with anyio.create_task_group() as tg:
                for method, path in calls:
                    tg.start_soon(large, method, path)
                    tg.start_soon(stalled, method, path)
    assert answers == {
        (m, p, kind): {"large": 413, "stalled": 408}[kind] for m, p in calls for kind in ("large", "stalled")
    }
    assert len(refusals(caplog)) == 2 * len(calls)


# -- the settings ---------------------------------------------------------------------------------------------


def test_body_limits_are_positive_or_none_for_no_limit() -> None:
    assert BodyLimits() == BodyLimits(page=256 * 1024, read_timeout=10.0)
    assert BodyLimits(page=None, read_timeout=None).page is None
    for wrong in ({"page": 0}, {"page": -1}, {"page": True}, {"page": 1.5}, {"read_timeout": 0}):
        with pytest.raises(ValueError, match=r"page|read_timeout"):
            BodyLimits(**wrong)  # type: ignore[arg-type]


# -- the MCP endpoint ------------------------------------------------------------------------------------------


async def test_a_client_that_leaves_mid_body_on_the_mcp_endpoint_is_let_go_without_a_traceback(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    left = anyio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "went away before its body arrived" in record.getMessage():
                left.set()

    server = MCPServer("dropped")
    hitl = Elicitation(server, body_limits=BodyLimits(read_timeout=READ_TIMEOUT))

    @server.tool()
    async def ship(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Ship?")).action

    watch = Watch()
    logging.getLogger("elicitkit").addHandler(watch)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    try:
        async with serving(hitl) as url:
            async with wire.request(url, headers | {"Content-Length": "4096"}) as sent:
                await sent.send(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/ca')
            await reached(left)  # the connection closed above, half-way through the body
            async with Client(url, mode=mode) as client:  # still serving
                assert "ship" in [tool.name for tool in (await client.list_tools()).tools]
    finally:
        logging.getLogger("elicitkit").removeHandler(watch)
    assert [r.getMessage() for r in caplog.records if r.exc_info or r.exc_text or r.levelno >= logging.ERROR] == []


async def test_a_half_sent_body_on_the_mcp_endpoint_is_dropped_within_the_read_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hitl = Elicitation(MCPServer("stalled"), body_limits=BodyLimits(read_timeout=READ_TIMEOUT))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with serving(hitl) as url, wire.request(url, headers | {"Content-Length": "4096"}) as sent:
        await sent.send(b'{"jsonrpc": "2.0", ')
        with anyio.fail_after(READ_TIMEOUT + 4):
            answer = await sent.answer()
    assert (answer.status, answer.closed) == (408, True)
    assert [line.getMessage()[-5:] for line in refusals(caplog)] == ["(408)"]
