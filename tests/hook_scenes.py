"""One question, put on every route elicitkit has, for the hook and audit tests.

A route is named with the era it is reached on: the client's own form
(`native` on 2025-11-25, `mrtr` on 2026-07-28), the model fallback (`llm`),
elicitkit's form view in the chat of a host that renders MCP Apps (`app`,
answered the way the view answers), the server's fallback handler
(`handler`), and elicitkit's page (`page`,
which the client opens as a link), each over the SDK's in-memory pipe except
pages, which are served over real HTTP with a real page POST.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from pydantic import BaseModel, SecretStr

from elicitkit import Accepted, Declined, Elicitation, ElicitationVetoed
from elicitkit.testing import accept, call_through_model
from tests.scenes import APPS, call_through_view, serving, text_of

# (route, client mode, the route elicitkit reports)
ROUTES = [
    ("native", "legacy", "native"),
    ("mrtr", "auto", "mrtr"),
    ("llm", "legacy", "llm"),
    ("llm", "auto", "llm"),
    ("app", "legacy", "app"),
    ("app", "auto", "app"),
    ("handler", "legacy", "handler"),
    ("handler", "auto", "handler"),
    ("page", "legacy", "native"),
    ("page", "auto", "mrtr"),
]
ROUTE_IDS = [f"{route}-{mode}" for route, mode, _ in ROUTES]


class Approval(BaseModel):
    approved: bool


class Credentials(BaseModel):
    approved: bool
    key: SecretStr


class Person:
    """Accepts each question with the next of `contents` (the last repeats); remembers the messages shown."""

    def __init__(self, *contents: dict[str, Any]) -> None:
        self.contents = list(contents)
        self.seen: list[str] = []

    @property
    def content(self) -> dict[str, Any]:
        return self.contents[min(len(self.seen), len(self.contents) - 1)]

    def reply(self, message: str) -> ElicitResult:
        answer = accept(self.content)
        self.seen.append(message)
        return answer

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        return self.reply(params.message)

    async def handler(self, ctx: Context, question: Any) -> ElicitResult:
        return self.reply(question.message)


@dataclass
class Scene:
    server: MCPServer
    hitl: Elicitation
    route: str
    mode: str
    person: Person
    outcomes: list[str]


def scene(route: str, mode: str, *contents: dict[str, Any], framework: str = "mcp", **options: Any) -> Scene:
    """A server with one tool, `deploy`, that asks once on `route` and returns what it got, in words.

    `framework` is `mcp` (the SDK's `MCPServer`) or `fastmcp` (a `FastMCP`, whose tool takes fastmcp's `Context`).
    """
    person = Person(*(contents or ({"approved": True},)))
    server: Any
    if framework == "fastmcp":
        import fastmcp

        server, tool, context = fastmcp.FastMCP("hooks"), None, fastmcp.Context
    else:
        server, context = MCPServer("hooks"), Context
        tool = server.tool()
    if route == "handler":
        options.setdefault("fallback", person.handler)
    options.setdefault("timeout", 10)
    hitl = Elicitation(server, **options)
    outcomes: list[str] = []

    async def deploy(ctx: Any) -> str:
        try:
            if route == "page":
                model = Credentials if "key" in person.content else Approval
                result: Any = await hitl.secure_form(ctx, "Deploy v2?", model)
            else:
                result = await hitl.elicit(ctx, "Deploy v2?", Approval)
        except ElicitationVetoed as exc:
            outcome = f"vetoed: {exc.reason}"
        else:
            match result:
                case Accepted(data=data):
                    outcome = f"accepted {data.approved}"
                case Declined(reason=reason):
                    outcome = f"declined {reason}"
                case _:
                    outcome = result.action
        outcomes.append(outcome)
        return outcome

    deploy.__annotations__["ctx"] = context  # each framework injects its own Context by this annotation
    if tool is None:
        server.tool(deploy)
    else:
        tool(deploy)
    return Scene(server, hitl, route, mode, person, outcomes)


def _client(scene: Scene, callback: Any = None) -> Any:
    """An in-memory client of the scene's server: the SDK's for an `MCPServer`, fastmcp's for a fastmcp server.
    On the `app` route it is a host that renders MCP Apps."""
    extensions = [APPS] if scene.route == "app" else None
    if isinstance(scene.server, MCPServer):
        return Client(scene.server, mode=scene.mode, elicitation_callback=callback, extensions=extensions)
    import fastmcp

    async def handler(message: str, response_type: Any, params: ElicitRequestParams, context: Any) -> Any:
        return await callback(context, params)

    return fastmcp.Client(
        scene.server, mode=scene.mode, elicitation_handler=handler if callback else None, extensions=extensions
    )


async def ask(scene: Scene) -> str:
    """Call `deploy` the way its route needs, with the person answering; return the tool's text."""
    if scene.route == "page":
        return await _through_page(scene)
    if scene.route in ("native", "mrtr"):
        async with _client(scene, scene.person) as client:
            result = await client.call_tool("deploy", {})
    elif scene.route == "llm":
        async with _client(scene) as client:
            result = await call_through_model(client, "deploy", {}, scene.person)
    elif scene.route == "app":
        async with _client(scene) as client:
            result = await call_through_view(client, "deploy", {}, scene.person)
    else:
        async with _client(scene) as client:
            result = await client.call_tool("deploy", {})
    return _text(result)


def _text(result: CallToolResult) -> str:
    assert not result.is_error, result
    return text_of(result)


async def _through_page(scene: Scene) -> str:
    links: list[str] = []
    linked = anyio.Event()

    async def opens_links(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        links.append(params.url)
        linked.set()
        return ElicitResult(action="accept")

    result: list[CallToolResult] = []
    async with (
        serving(scene.hitl) as url,
        Client(url, mode=scene.mode, elicitation_callback=opens_links) as client,
    ):

        async def call() -> None:
            result.append(await client.call_tool("deploy", {}))

        async with anyio.create_task_group() as tg, httpx.AsyncClient() as browser:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await linked.wait()
            page = await browser.get(links[0])
            assert page.status_code == 200, page.text
            heading = re.search(r"<h1>(.*?)</h1>", page.text, re.S)
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert heading is not None
            assert csrf is not None
            fields = {k: "true" if v is True else str(v) for k, v in scene.person.content.items()}
            scene.person.seen.append(html.unescape(heading[1]))
            done = await browser.post(
                links[0], data={"ek:csrf": html.unescape(csrf[1]), "ek:action": "accept", **fields}
            )
            assert done.status_code == 200, done.text
    return _text(result[0])
