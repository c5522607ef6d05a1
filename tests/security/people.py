"""What the security tests share: a person in Chromium, handed a link by the MCP client, and what their page posts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

import anyio
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import CallToolResult, ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from playwright.async_api import Browser, BrowserContext, Page, Request


async def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """A fresh browser profile of its own (its own cookies), with bounded waits."""
    context = await browser.new_context(**options)
    context.set_default_timeout(10_000)
    return context


async def call_with_link(url: str, mode: str, tool: str, person: Callable[[str], Awaitable[None]]) -> CallToolResult:
    """Call `tool`; when the client is handed a link it says the person went there, and `person(link)` runs."""

    async def client_side(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams), params
        tg.start_soon(person, params.url)
        return ElicitResult(action="accept")

    async with anyio.create_task_group() as tg, Client(url, mode=mode, elicitation_callback=client_side) as client:
        with anyio.fail_after(20):
            return await client.call_tool(tool, {})


def posts_of(page: Page) -> list[dict[str, list[str]]]:
    """Every form the page posts from now on, as name -> values."""
    posted: list[dict[str, list[str]]] = []

    def record(request: Request) -> None:
        if request.method == "POST":
            fields: dict[str, list[str]] = {}
            for name, value in parse_qsl(request.post_data or "", keep_blank_values=True):
                fields.setdefault(name, []).append(value)
            posted.append(fields)

    page.on("request", record)
    return posted
