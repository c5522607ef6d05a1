"""elicitkit's form inside the chat (MCP Apps), in real Chromium, on both eras, over real streamable HTTP.

The host is a small chat page built on the official apps SDK's host bridge (`tests/apps_host`): its MCP client
declares MCP Apps and no elicitation, so each question comes back in a tool result that the view renders as
a form; the person answers in the view, which calls `sendElicitationResult` through the host, and the body
resumes where it waited (each body counts its starts: none runs twice). One browser serves the whole module.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Literal

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from playwright.async_api import Browser, FrameLocator, async_playwright, expect
from pydantic import BaseModel, Field, field_validator

from elicitkit import Accepted, Elicitation, Titles
from tests.apps_host import ChatHost, chat_host
from tests.browsers import CHROMIUM, CHROMIUM_FLAGS, WCAG_TAGS
from tests.scenes import serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
HOSTILE = 'Ship <img src=x onerror="parent.owned=1"> & <script>parent.owned=2</script> "now"?'


class Release(BaseModel):
    service: str = Field(title="Service", min_length=2, max_length=40, description="The service to deploy.")
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    region: Annotated[Literal["eu", "us"], Titles(eu="Europe (Frankfurt)", us="America (Virginia)")] = Field(
        title="Region"
    )
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks to run", min_length=1)
    note: str | None = Field(default=None, title="Note")


class GoAhead(BaseModel):
    now: bool = Field(title="Roll out now")


class Owner(BaseModel):
    team: str = Field(title="Owning team")

    @field_validator("team")
    @classmethod
    def known(cls, value: str) -> str:
        if value != "payments":
            raise ValueError("Only the payments team owns checkout")
        return value


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    """One Chromium for the module: each test opens its own context."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


def release_desk(starts: list[str]) -> Elicitation:
    server = MCPServer("release-desk")
    hitl = Elicitation(server, timeout=60)

    @server.tool()
    async def release(service: str, ctx: Context) -> str:
        starts.append(service)
        first = await hitl.elicit(ctx, f"Release {service}?", Release)
        if not isinstance(first, Accepted):
            return f"Not released ({type(first).__name__})"
        then = await hitl.elicit(ctx, HOSTILE if service == "hostile" else "Roll it out now?", GoAhead)
        if not isinstance(then, Accepted):
            return f"Held back ({type(then).__name__})"
        r = first.data
        when = "now" if then.data.now else "later"
        return f"{r.service} x{r.replicas} to {r.region} after {'+'.join(r.checks)}, {when}"

    @server.tool()
    async def claim(ctx: Context) -> str:
        starts.append("claim")
        result = await hitl.elicit(ctx, "Who owns checkout?", Owner)
        return f"Owned by {result.data.team}" if isinstance(result, Accepted) else type(result).__name__

    @server.tool()
    async def ping() -> str:
        return "pong"

    return hitl


@pytest.fixture
async def desk() -> AsyncIterator[tuple[str, list[str]]]:
    starts: list[str] = []
    async with serving(release_desk(starts)) as url:
        yield url, starts


async def fill_release(view: FrameLocator) -> None:
    await view.get_by_label("Service").fill("checkout")
    await view.get_by_label("Replicas").fill("8")
    await view.get_by_label("America (Virginia)").check()
    await view.get_by_label("lint").check()
    await view.get_by_label("e2e").check()


async def test_a_multi_question_tool_completes_through_the_view(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]], mode: str
) -> None:
    url, starts = desk
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        first = await host.call("release", {"service": "checkout"})
        assert first.structured_content is not None and "elicitationPending" in first.structured_content
        assert "shown this question as a form" in first.content[0].text  # type: ignore[union-attr]
        view = host.view
        await expect(view.get_by_role("heading", name="Release checkout?")).to_be_visible()
        await expect(view.get_by_label("Replicas")).to_have_value("3")  # the default
        await fill_release(view)
        await host.click(view.get_by_role("button", name="Send"))
        # The next question replaces the form; it is answered with the keyboard only.
        await expect(view.get_by_role("heading", name="Roll it out now?")).to_be_focused()
        await host.page.keyboard.press("Tab")
        await host.page.keyboard.press("Space")  # Yes
        await host.page.keyboard.press("Enter")
        await expect(view.get_by_role("heading", name="Done")).to_be_visible()
        await expect(view.get_by_text("checkout x8 to us after lint+e2e, now")).to_be_visible()
        assert [c["name"] for c in host.calls] == ["sendElicitationResult", "sendElicitationResult"]
        assert host.calls[0]["arguments"]["content"] == {
            "service": "checkout",
            "replicas": 8,
            "region": "us",
            "checks": ["lint", "e2e"],
        }
        told = await host.model_context()
        assert "checkout x8 to us after lint+e2e, now" in told[-1]["content"][0]["text"]
    assert starts == ["checkout"]  # resumed at each question, never run again


async def test_declining_and_cancelling_in_the_view_reach_the_tool(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]], mode: str
) -> None:
    url, starts = desk
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        await host.call("release", {"service": "checkout"})
        await host.click(host.view.get_by_role("button", name="Decline"))
        await expect(host.view.get_by_text("Not released (Declined)")).to_be_visible()
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        await host.call("release", {"service": "billing"})
        await fill_release(host.view)
        await host.click(host.view.get_by_role("button", name="Send"))
        await expect(host.view.get_by_role("heading", name="Roll it out now?")).to_be_visible()
        await host.click(host.view.get_by_role("button", name="Cancel"))
        await expect(host.view.get_by_text("Held back (Cancelled)")).to_be_visible()
    assert starts == ["checkout", "billing"]


async def test_the_view_checks_as_you_type_and_shows_what_the_server_refuses(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]], mode: str
) -> None:
    url, starts = desk
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        await host.call("release", {"service": "checkout"})
        view = host.view
        await host.click(view.get_by_role("button", name="Send"))
        summary = view.locator(".error-summary")
        await expect(summary).to_be_focused()
        await expect(summary.get_by_role("link", name="Enter Service")).to_be_visible()
        await expect(summary.get_by_role("link", name="Choose Region")).to_be_visible()
        assert host.calls == []  # nothing was sent
        await view.get_by_label("Service").fill("x")
        await view.get_by_label("Service").blur()
        await expect(view.get_by_text("Service must be at least 2 characters")).to_be_visible()
        await expect(view.get_by_label("Service")).to_have_attribute("aria-invalid", "true")
        await view.get_by_label("Service").fill("checkout")
        await expect(view.get_by_label("Service")).not_to_have_attribute("aria-invalid", "true")
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        # A rule only the server knows (the tool's own validator): refused there, shown in its author's words.
        await host.call("claim", {})
        await host.view.get_by_label("Owning team").fill("search")
        await host.click(host.view.get_by_role("button", name="Send"))
        await expect(host.view.locator(".error-summary")).to_contain_text("Only the payments team owns checkout")
        await expect(host.view.get_by_label("Owning team")).to_have_attribute("aria-invalid", "true")
        await host.view.get_by_label("Owning team").fill("payments")
        await host.click(host.view.get_by_role("button", name="Send"))
        await expect(host.view.get_by_text("Owned by payments")).to_be_visible()
        assert len(host.calls) == 2
    assert starts.count("claim") == 1


async def test_the_view_shows_every_string_as_text_and_asks_for_nothing(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]], mode: str
) -> None:
    url, _ = desk
    async with chat_host(browser, bridge_bundle, url, mode) as host:
        await host.call("release", {"service": "hostile"})
        await fill_release(host.view)
        await host.click(host.view.get_by_role("button", name="Send"))
        heading = host.view.locator("h1")
        await expect(heading).to_have_text(HOSTILE)
        assert await host.view.locator("img, script:not(:first-of-type)").count() == 0
        assert await host.view.locator("script").count() == 1  # the view's own
        assert await host.page.evaluate("() => window.owned") is None
        assert all(u.startswith("http://chat.test/") for u in host.requests), host.requests
        # A tool that asks nothing: the view shows its result.
        await host.call("ping", {})
        await expect(host.view.get_by_text("pong")).to_be_visible()


async def audit_view(host: ChatHost, axe: Path) -> list[str]:
    """axe-core on the view's frame (WCAG 2.x A/AA), in the host's light and dark themes."""
    frame = host.page.frames[-1]
    found: list[str] = []
    for scheme in ("light", "dark"):
        await host.page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        await host.page.evaluate("t => setHostContext({theme: t})", scheme)
        await frame.wait_for_function(f"() => document.documentElement.dataset.theme === '{scheme}'")
        if not await frame.evaluate("() => typeof window.axe === 'object'"):
            await frame.evaluate(await anyio.Path(axe).read_text())  # (a <script> tag would meet the CSP)
        result = await frame.evaluate(
            "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", WCAG_TAGS
        )
        found += [f"{scheme}: {v['id']} {v['help']} {[n['target'] for n in v['nodes']]}" for v in result["violations"]]
    return found


async def test_the_view_meets_wcag_in_both_themes(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]], axe: Path
) -> None:
    url, _ = desk
    # axe is evaluated in the view's frame from the test; the page itself is as the host shows it.
    async with chat_host(browser, bridge_bundle, url, "auto") as host:
        await host.call("release", {"service": "checkout"})
        await expect(host.view.get_by_role("heading", name="Release checkout?")).to_be_visible()
        assert await audit_view(host, axe) == []
        await host.click(host.view.get_by_role("button", name="Send"))
        await expect(host.view.locator(".error-summary")).to_be_focused()
        assert await audit_view(host, axe) == []


@pytest.mark.skipif(not os.environ.get("ELICITKIT_SCREENSHOTS"), reason="set ELICITKIT_SCREENSHOTS=1 to regenerate")
async def test_screenshots_of_the_view_in_a_chat(
    browser: Browser, bridge_bundle: Path, desk: tuple[str, list[str]]
) -> None:
    url, _ = desk
    for scheme in ("light", "dark"):
        suffix = "" if scheme == "light" else "-dark"
        async with chat_host(browser, bridge_bundle, url, "auto", scheme=scheme, width=720) as host:
            await host.call(
                "release",
                {"service": "checkout"},
                prompt="Release checkout to production",
                context={"theme": scheme, "platform": "web"},
            )
            await expect(host.view.get_by_role("heading", name="Release checkout?")).to_be_visible()
            await host.view.get_by_label("Service").fill("checkout")
            await host.view.get_by_label("Europe (Frankfurt)").check()
            await host.page.screenshot(path=str(DOCS_IMG / f"app-view{suffix}.png"), full_page=True)
            await host.click(host.view.get_by_role("button", name="Send"))
            await expect(host.view.locator(".error-summary")).to_be_focused()
            await host.page.screenshot(path=str(DOCS_IMG / f"app-view-errors{suffix}.png"), full_page=True)
            with anyio.fail_after(10):
                await host.view.get_by_label("unit").check()
            await host.click(host.view.get_by_role("button", name="Send"))
            await expect(host.view.get_by_role("heading", name="Roll it out now?")).to_be_visible()
            await host.view.get_by_label("Yes").check()
            await host.click(host.view.get_by_role("button", name="Send"))
            await expect(host.view.get_by_role("heading", name="Done")).to_be_visible()
            await host.page.screenshot(path=str(DOCS_IMG / f"app-view-done{suffix}.png"), full_page=True)
