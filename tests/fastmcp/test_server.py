"""Attaching to a fastmcp server: what it composes with, what it leaves as it was, and what it needs installed."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")

import fastmcp
from fastmcp import Client, Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext

from elicitkit import Accepted, BodyLimits, Elicitation
from elicitkit.testing import ScriptedHuman, accept
from tests.fastmcp.scenes import FASTMCP_MODERN_ERROR, connect, fastmcp_handler, new_server, unmodified_server
from tests.scenes import ERAS, serving, text_of
from tests.security import wire

pytestmark = pytest.mark.anyio


def test_importing_elicitkit_does_not_import_fastmcp() -> None:
    code = (
        "import sys, elicitkit, elicitkit.testing, elicitkit.stores, elicitkit.shell, elicitkit.channels\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'fastmcp')\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_server_of_neither_framework_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="MCPServer or a fastmcp FastMCP server, not object"):
        Elicitation(object())  # type: ignore[arg-type]


def test_one_elicitation_per_fastmcp_server() -> None:
    server, _ = new_server()
    with pytest.raises(ValueError, match="already has an Elicitation attached"):
        Elicitation(server)


@pytest.mark.parametrize("attached", [False, True], ids=["alone", "with-elicitkit"])
async def test_fastmcp_s_own_ctx_elicit_fails_on_2026_07_28_as_fastmcp_documents(attached: bool) -> None:
    server = unmodified_server()
    if attached:
        Elicitation(server)  # attaching alone changes nothing for tools that do not use it
    human = ScriptedHuman(accept({"value": True}))
    async with Client(server, elicitation_handler=fastmcp_handler(human)) as client:
        assert client.protocol_version == ERAS["auto"]  # fastmcp's client negotiates 2026-07-28 by default
        with pytest.raises(ToolError, match="^" + FASTMCP_MODERN_ERROR.replace(".", r"\.") + "$"):
            await client.call_tool("deploy", {})
    assert human.transcript == []  # nobody was asked


@pytest.mark.parametrize("attached", [False, True], ids=["alone", "with-elicitkit"])
async def test_fastmcp_s_own_ctx_elicit_still_works_on_2025_11_25(attached: bool) -> None:
    server = unmodified_server()
    if attached:
        Elicitation(server)
    human = ScriptedHuman(accept({"value": True}))
    async with Client(server, mode="legacy", elicitation_handler=fastmcp_handler(human)) as client:
        result = await client.call_tool("deploy", {})
    assert text_of(result) == "AcceptedElicitation[Any] accept True"
    assert [q.message for q in human.transcript] == ["Deploy?"]


class Counting(Middleware):
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        self.calls.append(context.message.name)
        return await call_next(context)


async def test_fastmcp_middleware_wraps_each_tool_run_once_however_many_rounds_it_takes(driver: str, mode: str) -> None:
    server, hitl = new_server()
    counting = Counting()
    server.add_middleware(counting)

    @server.tool
    async def ship(ctx: Context) -> str:
        first = await hitl.confirm(ctx, "Ship?")
        second = await hitl.text(ctx, "Note?")
        assert isinstance(first, Accepted) and isinstance(second, Accepted)
        return f"{first.data} {second.data}"

    human = ScriptedHuman(accept({"value": True}), accept({"value": "n"}))
    async with connect(hitl, driver, mode, human) as client:
        result = await client.call("ship")
    assert text_of(result) == "True n"
    assert counting.calls == ["ship"]  # the retries of 2026-07-28 resume the run; they do not call the tool again


def test_the_fastmcp_api_is_adopt() -> None:
    import elicitkit.fastmcp

    assert elicitkit.fastmcp.__all__ == ["adopt"]


def test_without_fastmcp_the_adopt_module_says_which_extra_to_install() -> None:
    code = "import sys\nsys.modules['fastmcp'] = None  # as if it were not installed\nimport elicitkit.fastmcp\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "ImportError: elicitkit.fastmcp needs fastmcp: pip install 'elicitkit[fastmcp]'" in done.stderr


async def test_tools_of_a_mounted_server_ask_through_the_elicitation_of_the_server_that_serves_them(
    driver: str, mode: str
) -> None:
    parent, hitl = new_server("parent")
    child = FastMCP("child")

    @child.tool
    async def deploy(ctx: Context) -> str:
        return f"{await hitl.confirm(ctx, 'Deploy?')}"

    parent.mount(child, namespace="ops")
    async with connect(hitl, driver, mode, ScriptedHuman(accept({"value": True}))) as client:
        result = await client.call("ops_deploy")
    assert text_of(result) == "Accepted(data=True, content={'value': True}, action='accept')"


async def test_an_elicitation_attached_only_to_a_mounted_server_cannot_ask_on_2026_07_28() -> None:
    parent, child = FastMCP("parent"), FastMCP("child")
    hitl = Elicitation(child)

    @child.tool
    async def deploy(ctx: Context) -> str:
        return f"{await hitl.confirm(ctx, 'Deploy?')}"

    parent.mount(child, namespace="ops")
    human = ScriptedHuman(accept({"value": True}))
    async with Client(parent, elicitation_handler=fastmcp_handler(human)) as client:
        with pytest.raises(ToolError, match="only be asked from a tool called through the server that Elicitation"):
            await client.call_tool("ops_deploy", {})
    assert human.transcript == []


async def idle_timeout_of(app: Any) -> float | None:
    """The idle timeout of the session manager a fastmcp app starts in its lifespan."""
    endpoint = next(r.endpoint for r in app.routes if hasattr(getattr(r, "endpoint", None), "session_manager"))
    async with app.router.lifespan_context(app):
        timeout: float | None = endpoint.session_manager.session_idle_timeout
    return timeout


async def test_a_fastmcp_server_s_sessions_get_elicitkit_s_idle_timeout_unless_fastmcp_is_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, _ = new_server()
    assert await idle_timeout_of(server.http_app()) == 600
    assert await idle_timeout_of(server.http_app(session_idle_timeout=1800)) == 1800
    server, _ = new_server(session_idle_timeout=90)
    assert await idle_timeout_of(server.http_app()) == 90
    monkeypatch.setattr(fastmcp.settings, "http_session_idle_timeout", 120.0)  # FASTMCP_HTTP_SESSION_IDLE_TIMEOUT
    assert await idle_timeout_of(server.http_app()) == 120


async def test_a_half_sent_body_on_a_fastmcp_server_s_mcp_endpoint_is_dropped_within_the_read_timeout() -> None:
    server = FastMCP("stalled")
    hitl = Elicitation(server, body_limits=BodyLimits(read_timeout=1.0))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with serving(hitl) as url, wire.request(url, headers | {"Content-Length": "4096"}) as sent:
        await sent.send(b'{"jsonrpc": "2.0", ')
        with anyio.fail_after(5):
            answer = await sent.answer()
    assert (answer.status, answer.closed) == (408, True)
