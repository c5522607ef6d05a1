"""URL mode with a page you host yourself: your own `elicitationId`, and a call that waits until the page is done.

The server hosts its own page (`/bank/connect`, a route of the server's app, as a real integration would); the
tool asks with `elicit_url(..., elicitation_id=..., wait="completed")`; the test's browser opens the link the
client was given, and the page's handler calls `hitl.complete(id)`. Over real streamable HTTP, both eras.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.client.session import IncomingMessage
from mcp.server.mcpserver import Context
from mcp_types import ElicitCompleteNotification
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from elicitkit import Elicitation
from elicitkit.testing import serve_app
from tests.redis_server import RedisServer
from tests.scenes import new_server, reached, text_of
from tests.test_urlmode import asking

pytestmark = pytest.mark.anyio


def bank_server(**options: Any) -> Elicitation:
    """`connect` sends the person to the server's own page, which completes the question when visited."""
    server, hitl = new_server("bank", timeout=10, **options)

    @server.custom_route("/bank/connect", methods=["GET"])
    async def connect_page(request: Request) -> PlainTextResponse:
        done = await hitl.complete(request.query_params["id"])
        return PlainTextResponse("Connected, you can close this tab." if done else "Nothing to connect.")

    @server.tool()
    async def connect(ctx: Context) -> str:
        elicitation_id = "connect-acme"
        url = f"{hitl.public_url}/bank/connect?id={elicitation_id}"
        result = await hitl.elicit_url(ctx, "Connect your bank", url, elicitation_id=elicitation_id, wait="completed")
        return result.action

    return hitl


async def test_the_call_returns_once_the_page_says_it_is_done_not_when_the_client_agrees(mode: str) -> None:
    hitl = bank_server()
    completed: list[str] = []
    told = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, ElicitCompleteNotification):
            completed.append(message.params.elicitation_id)
            told.set()

    async with asking(hitl, mode, message_handler=on_message) as scene:
        call = scene.call("connect")
        link = await scene.links.next()
        if mode == "legacy":
            assert link.elicitation_id == "connect-acme"  # (on 2026-07-28 it is the input request's key)
        # The client agreed to open the link: the call still waits for the page.
        await anyio.wait_all_tasks_blocked()
        assert not call.done.is_set()
        assert hitl.pending_questions == 1
        page = await scene.browser.get(str(link.url))
        assert page.text == "Connected, you can close this tab."
        assert text_of(await call.result()) == "accept"
        again = await scene.browser.get(str(link.url))  # a reload: nothing left to complete
        assert again.text == "Nothing to connect."
        if mode == "legacy":
            await reached(told)  # 2025-11-25: the client learns the elicitation it opened is complete
            assert completed == ["connect-acme"]
    assert completed == ([] if mode == "auto" else ["connect-acme"])
    assert hitl.pending_questions == 0


async def test_the_server_may_complete_from_anywhere_in_its_code_and_only_once(mode: str) -> None:
    hitl = bank_server()
    async with asking(hitl, mode) as scene:
        call = scene.call("connect")
        await scene.links.next()
        assert await hitl.complete("connect-acme") is True
        assert text_of(await call.result()) == "accept"
        assert await hitl.complete("connect-acme") is False


async def test_a_client_that_refuses_the_link_ends_the_call_and_there_is_nothing_to_complete(mode: str) -> None:
    hitl = bank_server()
    async with asking(hitl, mode) as scene:
        scene.links.action = "decline"
        call = scene.call("connect")
        await scene.links.next()
        assert text_of(await call.result()) == "decline"
        assert await hitl.complete("connect-acme") is False


async def test_completing_an_unknown_id_is_false_and_a_malformed_one_is_refused() -> None:
    hitl = bank_server()
    assert await hitl.complete("never-asked") is False
    with pytest.raises(ValueError, match="letters, digits"):
        await hitl.complete("not an id!")


async def test_a_link_asked_without_waiting_for_completion_cannot_be_completed(mode: str) -> None:
    server, hitl = new_server("plain-link", timeout=10)

    @server.tool()
    async def pay(ctx: Context) -> str:
        result = await hitl.elicit_url(ctx, "Pay", "https://pay.example.com/x", elicitation_id="pay-1")
        return result.action

    async with asking(hitl, mode) as scene:
        assert text_of(await scene.call("pay").result()) == "accept"
        assert await hitl.complete("pay-1") is False


async def test_wait_must_be_accepted_or_completed() -> None:
    hitl = bank_server()
    with pytest.raises(ValueError, match='wait must be "accepted" or "completed"'):
        await hitl.elicit_url(None, "Pay", "https://pay.example.com/x", wait="opened")  # type: ignore[arg-type]


async def test_a_page_served_by_another_node_completes_the_question_its_twin_holds(redis_server: RedisServer) -> None:
    """2026-07-28 runs are in the store, so any node completes them (a 2025-11-25 session, and its call, live on
    the one node that holds the session: docs/durable.md)."""
    mode = "auto"
    shared = {"store": redis_server.url, "secret": "self-hosted-url-test-secret-0123456789abcdef", "forward_timeout": 1}
    owner = bank_server(node_id="node-a", **shared)
    _, twin = new_server("bank", node_id="node-b", **shared)
    try:
        async with serve_app(twin.http_app()), asking(owner, mode) as scene:  # both nodes up
            call = scene.call("connect")
            await scene.links.next()
            assert await twin.complete("connect-acme") is True
            assert text_of(await call.result()) == "accept"
            assert await twin.complete("connect-acme") is False
    finally:
        await owner.aclose()
        await twin.aclose()
