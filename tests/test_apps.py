"""The `app` route without a browser: what a client declaring MCP Apps is offered, and what the view is.

A client that declares the apps extension (`io.modelcontextprotocol/ui`) and cannot show a form gets every tool
that may ask pointing at elicitkit's view (`_meta.ui.resourceUri`), the view from `resources/read` (its MIME type
and CSP metadata), and each question in a tool result the view reads; the answer comes back through
`sendElicitationResult` and the body resumes. `tests/test_app_view.py` drives the view itself in Chromium.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client import advertise
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult, Implementation, TextResourceContents
from pydantic import BaseModel

from elicitkit import ClientOverride, Elicitation, QuestionInfo
from elicitkit._clients import APPS_EXTENSION
from elicitkit._web.app_view import view_csp, view_html
from elicitkit.testing import ScriptedHuman, accept, call_through_model
from tests.scenes import APPS, in_view

pytestmark = pytest.mark.anyio


class Approval(BaseModel):
    approved: bool
    note: str | None = None


def desk(**options: Any) -> tuple[Elicitation, list[str], list[str | None]]:
    server = MCPServer("desk")
    hitl = Elicitation(server, timeout=30, **options)
    starts: list[str] = []
    routes: list[str | None] = []

    @hitl.after_ask(stages=("sent",))
    def seen(question: QuestionInfo, stage: object) -> None:
        routes.append(question.route)

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        starts.append(version)
        first = await hitl.elicit(ctx, f"Deploy {version}?", Approval)
        second = await hitl.elicit(ctx, "Tell the team?", Approval)
        return f"{type(first).__name__} {type(second).__name__}"

    return hitl, starts, routes


async def test_a_client_declaring_apps_gets_the_view_on_every_tool_that_may_ask(mode: str) -> None:
    hitl, _, _ = desk()
    async with Client(hitl.server, mode=mode, extensions=[APPS]) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["deploy"].meta == {"ui": {"resourceUri": "ui://elicitkit/form"}}
        assert tools["sendElicitationResult"].meta is None  # answered by the view and the model alike
        contents = (await client.read_resource("ui://elicitkit/form")).contents
        assert isinstance(contents[0], TextResourceContents)
        assert contents[0].mime_type == "text/html;profile=mcp-app"
        assert contents[0].meta == {
            "ui": {"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}}
        }
        assert contents[0].text == view_html()
    async with Client(hitl.server, mode=mode) as plain:
        assert all(t.meta is None for t in (await plain.list_tools()).tools)


async def test_a_question_rides_the_tool_result_and_its_answer_resumes_the_body(mode: str) -> None:
    hitl, starts, routes = desk()
    async with Client(hitl.server, mode=mode, extensions=[APPS]) as client:
        result = await client.call_tool("deploy", {"version": "2.1"})
        pending = (result.structured_content or {})["elicitationPending"]
        assert pending["message"] == "Deploy 2.1?" and pending["answerTool"] == "sendElicitationResult"
        assert pending["schema"]["required"] == ["approved"]
        # The model is told too: a host that renders nothing still has it ask.
        assert "shown this question as a form" in result.content[0].text  # type: ignore[union-attr]
        refused = await client.call_tool(
            "sendElicitationResult", {"elicitId": pending["elicitId"], "action": "accept", "content": {"approved": 3}}
        )
        assert refused.is_error and refused.meta == {"elicitationProblems": [{"path": "approved", "said": None}]}
        result = await client.call_tool(
            "sendElicitationResult",
            {"elicitId": pending["elicitId"], "action": "accept", "content": {"approved": True}},
        )
        pending = (result.structured_content or {})["elicitationPending"]
        result = await client.call_tool("sendElicitationResult", {"elicitId": pending["elicitId"], "action": "cancel"})
        assert result.content[0].text == "Accepted Cancelled"  # type: ignore[union-attr]
    assert starts == ["2.1"]
    assert routes == ["app", "app"]


async def test_app_view_false_leaves_such_clients_to_the_model_fallback(mode: str) -> None:
    hitl, _, routes = desk(app_view=False)
    async with Client(hitl.server, mode=mode, extensions=[APPS]) as client:
        assert all(t.meta is None for t in (await client.list_tools()).tools)
        assert (await client.list_resources()).resources == []
        result = await client.call_tool("deploy", {"version": "1"})
        assert "answerTool" not in (result.structured_content or {})["elicitationPending"]
    assert routes == ["llm"]


async def test_a_client_that_shows_forms_itself_is_asked_natively_unless_the_view_comes_first(mode: str) -> None:
    async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"approved": True})

    hitl, _, routes = desk()
    async with Client(hitl.server, mode=mode, extensions=[APPS], elicitation_callback=person) as client:
        result = await client.call_tool("deploy", {"version": "1"})
        assert result.content[0].text == "Accepted Accepted"  # type: ignore[union-attr]
    assert routes == ["native" if mode == "legacy" else "mrtr"] * 2

    hitl, _, routes = desk(app_view="first")
    async with Client(hitl.server, mode=mode, extensions=[APPS], elicitation_callback=person) as client:
        result = await client.call_tool("deploy", {"version": "1"})
        assert "elicitationPending" in (result.structured_content or {})
    assert routes == ["app"]


async def test_a_client_that_renders_other_kinds_of_apps_is_not_shown_the_view() -> None:
    hitl, _, routes = desk()
    other = advertise(APPS_EXTENSION, {"mimeTypes": ["application/x-other"]})
    async with Client(hitl.server, mode="auto", extensions=[other]) as client:
        assert all(t.meta is None for t in (await client.list_tools()).tools)
        with anyio.fail_after(5):
            await client.call_tool("deploy", {"version": "1"})
    assert routes == ["llm"]


async def test_a_client_override_tells_apart_a_host_that_declares_apps_but_renders_no_view(mode: str) -> None:
    hitl, _, routes = desk(client_overrides=[ClientOverride("acme-chat", versions="<3", apps=False)])
    person = ScriptedHuman(accept({"approved": True}), accept({"approved": False}))
    blank = Implementation(name="Acme-Chat", version="2.7")
    async with Client(hitl.server, mode=mode, extensions=[APPS], client_info=blank) as client:
        assert all(t.meta is None for t in (await client.list_tools()).tools)
        result = await call_through_model(client, "deploy", {"version": "1"}, person)  # the model asks instead
    assert result.content[0].text == "Accepted Accepted"  # type: ignore[union-attr]
    assert routes == ["llm", "llm"]
    fixed = Implementation(name="acme-chat", version="3.0")  # a release that renders views: as declared
    async with Client(hitl.server, mode=mode, extensions=[APPS], client_info=fixed) as client:
        asked = await client.call_tool("deploy", {"version": "2"})
    assert in_view(asked) is not None
    assert routes[-1] == "app"


async def test_a_client_override_shows_the_view_to_a_host_that_renders_apps_without_declaring_them(mode: str) -> None:
    hitl, _, routes = desk(client_overrides=[ClientOverride("quiet-*", apps=True)])
    async with Client(hitl.server, mode=mode, client_info=Implementation(name="quiet-host", version="1")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["deploy"].meta == {"ui": {"resourceUri": "ui://elicitkit/form"}}
        await client.call_tool("deploy", {"version": "1"})
    assert routes == ["app"]


async def test_an_override_of_the_view_alone_leaves_the_declared_modes_and_one_of_the_modes_alone_the_view(
    mode: str,
) -> None:
    async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"approved": True})

    hitl, _, routes = desk(app_view="first", client_overrides=[ClientOverride("acme-*", apps=False)])
    info = Implementation(name="acme-ide", version="1")
    async with Client(hitl.server, mode=mode, extensions=[APPS], elicitation_callback=person, client_info=info) as c:
        result = await c.call_tool("deploy", {"version": "1"})
    assert result.content[0].text == "Accepted Accepted"  # type: ignore[union-attr]
    assert routes == ["native" if mode == "legacy" else "mrtr"] * 2  # its own forms, as it declares

    hitl, _, routes = desk(client_overrides=[ClientOverride("acme-*", modes=())])
    async with Client(hitl.server, mode=mode, extensions=[APPS], elicitation_callback=person, client_info=info) as c:
        await c.call_tool("deploy", {"version": "1"})
    assert routes == ["app"]  # no forms of its own: the view it declares


def test_a_client_override_states_something_it_corrects() -> None:
    with pytest.raises(ValueError, match="states nothing"):
        ClientOverride("acme-*")
    with pytest.raises(ValueError, match="apps must be True, False or None"):
        ClientOverride("acme-*", apps="no")  # type: ignore[arg-type]


def test_app_view_takes_true_false_or_first() -> None:
    with pytest.raises(ValueError, match="app_view"):
        Elicitation(MCPServer("x"), app_view="always")  # type: ignore[arg-type]


def test_the_view_is_small_self_contained_and_admits_only_its_own_script_and_style() -> None:
    html = view_html()
    assert len(html.encode()) < 30 * 1024
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert policy is not None and policy.group(1) == view_csp()
    directives = dict(d.strip().split(" ", 1) for d in view_csp().split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert directives["form-action"] == "'none'" and directives["base-uri"] == "'none'"
    script = re.search(r"<script>(.*)</script>", html, re.S)
    style = re.search(r"<style>(.*)</style>", html, re.S)
    assert script is not None and style is not None
    for source, directive in ((script.group(1), "script-src"), (style.group(1), "style-src")):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert directives[directive] == f"'sha256-{digest}'"
    assert not re.search(r"\b(src|href)=", html)  # nothing to load
    # Strings reach the page as text only: no HTML parsing of anything the server or the host sends.
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script.group(1)
