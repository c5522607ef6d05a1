"""The web inbox in real Chromium (Debian's, driven by Playwright), both eras, over real HTTP.

The person opens their inbox before any question exists; tools then ask, and
the questions appear on the open page without a reload (the page's script
listens to the inbox's Server-Sent Events). A form being filled keeps what was
typed when another question arrives. Submitting returns the typed answer to
the tool. With ELICITKIT_SCREENSHOTS=1 the test saves docs/img/web-inbox.png and web-inbox-dark.png.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from playwright.async_api import Browser, expect

from elicitkit import Accepted, Elicitation
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from tests.channels.test_web_inbox import USER, Release, calling, header_identity
from tests.scenes import serving

pytestmark = pytest.mark.anyio

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "img" / "web-inbox.png"


def desk_server() -> Elicitation:
    server = MCPServer("inbox-browser")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=600)

    @server.tool()
    async def deploy(ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit(ctx, "Deploy checkout to production?", Release, via=web("alice"))
        assert isinstance(result, Accepted)
        return result.data.model_dump(mode="json")

    @server.tool()
    async def rotate(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Rotate the payments API key?", title="Rotate now", via=web("alice"))
        return f"rotate={result.data}" if isinstance(result, Accepted) else result.action

    return hitl


async def test_questions_appear_in_the_open_inbox_without_a_reload_and_the_answers_return_to_the_tools(
    mode: str, browser: Browser
) -> None:
    hitl = desk_server()
    async with serving(hitl) as url:
        # Who the person is comes from the header the server's page_identity reads (a session cookie in real life).
        context = await browser.new_context(
            viewport={"width": 640, "height": 900}, color_scheme="light", extra_http_headers={USER: "alice"}
        )
        context.set_default_timeout(10_000)
        try:
            page = await context.new_page()
            loads: list[str] = []
            page.on("load", lambda _: loads.append(page.url))
            await page.goto(f"{url.removesuffix('/mcp')}/elicit/inbox")
            await expect(page.get_by_text("No open questions.")).to_be_visible()

            async with calling(url, mode, "deploy") as deploying:
                await expect(page.get_by_role("heading", name="Deploy checkout to production?")).to_be_visible()
                await expect(page.get_by_text("No open questions.")).to_have_count(0)
                await page.get_by_label("Service").fill("checkout")
                await expect(page.get_by_label("Replicas")).to_have_value("3")  # the default, pre-filled

                async with calling(url, mode, "rotate") as rotating:
                    await expect(page.get_by_role("heading", name="Rotate the payments API key?")).to_be_visible()
                    await expect(page).to_have_title("Your questions (2)")
                    await expect(page.get_by_label("Service")).to_have_value("checkout")  # kept while merging
                    await expect(page.get_by_label("Service")).to_be_focused()
                    assert loads == [page.url]  # both questions came in without a reload

                    await page.get_by_label("Replicas").fill("8")
                    await page.get_by_label("us", exact=True).check()
                    await page.get_by_label("lint").check()
                    await page.get_by_label("e2e").check()
                    await page.get_by_label("Canary first").uncheck()
                    if os.environ.get("ELICITKIT_SCREENSHOTS") == "1":
                        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                        await page.screenshot(path=SCREENSHOT, full_page=True)
                        await page.emulate_media(color_scheme="dark")
                        await page.screenshot(path=SCREENSHOT.with_name("web-inbox-dark.png"), full_page=True)
                        await page.emulate_media(color_scheme="light")

                    deploy_form = page.locator("section.question", has_text="Deploy checkout")
                    await deploy_form.get_by_role("button", name="Submit").click()
                    await expect(page.get_by_role("status")).to_have_text("✓ Thanks, your answer was recorded.")
                    assert (await deploying.outcome()).structured_content == {
                        "service": "checkout",
                        "replicas": 8,
                        "region": "us",
                        "checks": ["lint", "e2e"],
                        "canary": False,
                    }

                    await expect(page.get_by_role("heading", name="Deploy checkout to production?")).to_have_count(0)
                    await page.get_by_label("Rotate now").check()
                    await page.get_by_role("button", name="Submit").click()
                    assert await rotating.text() == "rotate=True"
                    await expect(page.get_by_text("No open questions.")).to_be_visible()
        finally:
            await context.close()  # its event stream too: the server waits for open responses when it stops
    assert hitl.pending_questions == 0
