"""A chat host for elicitkit's MCP Apps view, in real Chromium, on the official apps SDK's host bridge.

`bridge_bundle` installs `@modelcontextprotocol/ext-apps` (pinned, from the npm registry, as
`tests/browsers.py` installs axe-core) into a temporary folder once per session, with esbuild, which bundles
`host.mjs` (the host's side: `AppBridge` and its `PostMessageTransport`) for the browser. `ChatHost` opens
`host.html` in a page served from memory (no server, no request leaves the browser), reads the view from
the elicitkit server through a real MCP client over streamable HTTP, and relays the view's `tools/call`s to
that client: the host's part of MCP Apps, as a chat application plays it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client import advertise
from mcp_types import CallToolResult, TextResourceContents
from playwright.async_api import Browser, FrameLocator, Locator, Page

from elicitkit._clients import APPS_EXTENSION, VIEW_MIME

EXT_APPS = "@modelcontextprotocol/ext-apps@2.0.4"  # pinned: the host bridge the view is tested against
ESBUILD = "esbuild@0.25.12"
HERE = Path(__file__).parent
ORIGIN = "http://chat.test"
"""The host page's origin: served from memory by the page's own route, never over a network."""


@pytest.fixture(scope="session")
def bridge_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `host.html` and `host.js` (the host bridge bundled for the browser)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "npm is missing: the apps tests install the MCP Apps SDK with it (apt-get install npm)", pytrace=False
        )
    prefix = tmp_path_factory.mktemp("ext-apps")
    subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", EXT_APPS, ESBUILD],
        check=True,
        capture_output=True,
        timeout=300,
    )
    shutil.copy(HERE / "host.mjs", prefix / "host.mjs")  # resolved from inside the install
    out = prefix / "site"
    out.mkdir()
    subprocess.run(
        [
            str(prefix / "node_modules" / ".bin" / "esbuild"),
            str(prefix / "host.mjs"),
            "--bundle",
            "--format=esm",
            "--platform=browser",
            f"--outfile={out / 'host.js'}",
            "--log-level=warning",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    shutil.copy(HERE / "host.html", out / "host.html")
    return out


def dump(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


class ChatHost:
    """One chat page whose MCP client (declaring MCP Apps, not elicitation) talks to one elicitkit server."""

    def __init__(self, page: Page, client: Client) -> None:
        self.page = page
        self.client = client
        self.requests: list[str] = []
        """Every URL the page (and its frames) asked for."""
        self.calls: list[dict[str, Any]] = []
        """Every `tools/call` the view made through the host."""

    @property
    def view(self) -> FrameLocator:
        """The latest view in the chat."""
        return self.page.frame_locator("iframe.view").last

    async def _call_tool(self, params: str) -> str:
        call = json.loads(params)
        self.calls.append(call)
        return json.dumps(dump(await self.client.call_tool(call["name"], call.get("arguments") or {})))

    async def view_html(self, tool: str) -> str:
        """The view a tool names (`_meta.ui.resourceUri`), read as a host reads it."""
        listed = {t.name: t for t in (await self.client.list_tools()).tools}
        uri = (listed[tool].meta or {})["ui"]["resourceUri"]
        contents = (await self.client.read_resource(uri)).contents
        assert len(contents) == 1 and isinstance(contents[0], TextResourceContents)
        assert contents[0].mime_type == VIEW_MIME
        return contents[0].text

    async def call(
        self, tool: str, arguments: dict[str, Any], *, prompt: str = "", context: dict[str, Any] | None = None
    ) -> CallToolResult:
        """Call `tool` as a chat does when the model calls it: the view is mounted, handed the call's input and then
        its result (a question, which the person answers in the view, or the tool's own result)."""
        html = await self.view_html(tool)
        await self.page.evaluate(
            "t => { document.getElementById('prompt').textContent = t;"
            " document.getElementById('reply').textContent = 'Calling the tool: it may ask you something below.' }",
            prompt or f"Run {tool}",
        )
        await self.page.evaluate(
            "([html, context]) => mountView(html, context)", [html, context or {"theme": "light", "platform": "web"}]
        )
        await self.page.evaluate("a => sendToolInput(a)", arguments)
        result = await self.client.call_tool(tool, arguments)
        await self.page.evaluate("r => sendToolResult(r)", dump(result))
        return result

    async def click(self, target: Locator) -> None:
        """Click `target` in the view once the view's frame has settled.

        The frame takes the height the view reports as it renders, which moves everything in it: a click aimed
        while it grows or shrinks (a question just shown, a shorter one after it) lands beside its target, and the
        person's answer never leaves the view."""
        await target.wait_for(state="visible")
        await self.page.evaluate("() => window.frameSettled()")
        await target.click()

    async def model_context(self) -> list[dict[str, Any]]:
        """What the view added to the model's context (`ui/update-model-context`)."""
        seen: list[dict[str, Any]] = await self.page.evaluate("() => window.hostSeen.modelContext")
        return seen


@asynccontextmanager
async def chat_host(
    browser: Browser, bundle: Path, url: str, mode: str, *, scheme: str = "light", width: int = 800
) -> AsyncIterator[ChatHost]:
    """A chat page over a new MCP client of `url` on `mode`'s era; its browser context is closed afterwards."""
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(url, mode=mode, extensions=[advertise(APPS_EXTENSION, {"mimeTypes": [VIEW_MIME]})])
        )
        context = await browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
        stack.push_async_callback(context.close)
        context.set_default_timeout(10_000)
        page = await context.new_page()
        host = ChatHost(page, client)
        page.on("request", lambda request: host.requests.append(request.url))

        async def serve(route: Any) -> None:
            name = route.request.url.removeprefix(ORIGIN).strip("/") or "host.html"
            path = anyio.Path(bundle / name)
            if not await path.is_file():
                await route.fulfill(status=404)
                return
            kind = "text/html" if name.endswith(".html") else "text/javascript"
            await route.fulfill(status=200, body=await path.read_bytes(), content_type=kind)

        await page.route(f"{ORIGIN}/**", serve)
        await page.expose_function("hostCallTool", host._call_tool)
        await page.goto(f"{ORIGIN}/")
        await page.wait_for_function("() => typeof window.mountView === 'function'")
        yield host
