"""elicitkit's pages in a real browser: Playwright drives Debian's Chromium over real streamable HTTP, both eras.

The MCP client's elicitation callback plays the client (it gets the link and
says the person agreed to open it); a task plays the person in Chromium. The
browser is `/usr/bin/chromium` (Debian's `chromium` package, which `./dev test`
installs); Playwright never downloads one. `test_screenshots_of_every_page`
regenerates the pictures in docs/img/ when ELICITKIT_SCREENSHOTS=1.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from playwright.async_api import Browser, Page, Request, expect
from pydantic import BaseModel, Field, SecretStr
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import HTMLResponse
from starlette.routing import Route

from elicitkit import Accepted, Elicitation, Titles
from elicitkit.testing import serve_app
from tests.scenes import serving

pytestmark = pytest.mark.anyio

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
MESSAGE = "Deploy <b>checkout</b> to production: enter the deploy key"
SECRET = "sk-live-7Hq2-never-in-mcp"
CODE = "c0de-from-the-provider"


class Deploy(BaseModel):
    service: str = Field(title="Service", min_length=2, max_length=40)
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    region: Annotated[Literal["eu", "us"], Titles(eu="Europe (Frankfurt)", us="America (Virginia)")] = Field(
        title="Region"
    )
    canary: bool = Field(default=True, title="Canary first")
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks to run", min_length=1)
    api_key: SecretStr = Field(title="Deploy key", description="Goes to the tool only, never to the assistant.")


EXPECTED = Deploy(
    service="checkout", replicas=8, region="us", canary=False, checks=["lint", "e2e"], api_key=SecretStr(SECRET)
)


async def new_page(browser: Browser, height: int = 480) -> Page:
    """A page in a fresh context (its own cookies), light scheme, bounded waits."""
    context = await browser.new_context(viewport={"width": 640, "height": height}, color_scheme="light")
    context.set_default_timeout(10_000)
    return await context.new_page()


class Desk:
    """A server whose tools ask through elicitkit's pages, and what they received."""

    def __init__(self) -> None:
        self.server = MCPServer("browser-test")
        self.hitl = Elicitation(self.server, timeout=30)
        self.received: list[Any] = []
        self.url = ""  # the MCP endpoint, once served

        @self.server.tool()
        async def deploy(ctx: Context) -> dict[str, Any]:
            result = await self.hitl.secure_form(ctx, MESSAGE, Deploy)
            if isinstance(result, Accepted):
                self.received.append(result.data)
                return result.data.model_dump(mode="json")  # a SecretStr dumps as "**********"
            return {"action": result.action}

        @self.server.tool()
        async def connect(provider: str, ctx: Context) -> dict[str, Any]:
            def start(callback: str, state: str) -> str:
                return f"{provider}/authorize?{urlencode({'redirect_uri': callback, 'state': state})}"

            result = await self.hitl.url_flow(ctx, "Connect your deploy account", start)
            if isinstance(result, Accepted):
                return result.data
            return {"action": result.action}

    async def call(
        self, mode: str, tool: str, arguments: dict[str, Any], person: Callable[[str], Awaitable[None]]
    ) -> CallToolResult:
        """Call `tool`; when the client is asked to open a link, it accepts and `person(link)` runs alongside."""
        links: list[str] = []

        async def client_side(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestURLParams)
            links.append(params.url)
            tg.start_soon(person, params.url)
            return ElicitResult(action="accept")

        async with anyio.create_task_group() as tg, Client(self.url, mode=mode, elicitation_callback=client_side) as c:
            with anyio.fail_after(30):
                result = await c.call_tool(tool, arguments)
        assert len(links) == 1, links
        return result


@pytest.fixture
async def desk() -> AsyncIterator[Desk]:
    """A Desk served over real streamable HTTP, with its pages' links pointing at it."""
    served = Desk()
    async with serving(served.hitl) as url:
        served.url = url
        yield served


@pytest.fixture
async def page(browser: Browser) -> Page:
    return await new_page(browser)


@pytest.fixture
async def provider() -> AsyncIterator[str]:
    """A third party's consent page (OAuth-like), served; its base URL."""
    async with serve_app(fake_provider()) as url:
        yield url


def posts_of(page: Page) -> list[str]:
    """The URLs of every POST the page sends from now on."""
    posts: list[str] = []

    def record(request: Request) -> None:
        if request.method == "POST":
            posts.append(request.url)

    page.on("request", record)
    return posts


async def allow(page: Page, link: str) -> None:
    """Follow `link` to the provider, press Allow, and land back on elicitkit's callback page."""
    await page.goto(link)
    await page.get_by_role("link", name="Allow").click()
    await expect(page.locator("h1")).to_have_text("All set")


async def fill_valid(page: Page) -> None:
    await page.get_by_label("Service").fill("checkout")
    await page.get_by_label("Replicas").fill("8")
    await page.get_by_label("America (Virginia)").check()
    await page.get_by_label("Canary first").uncheck()
    await page.get_by_label("lint").check()
    await page.get_by_label("e2e").check()
    await page.get_by_label("Deploy key").fill(SECRET)


async def test_a_person_fills_the_secure_form_in_chromium_and_the_tool_gets_typed_data(
    mode: str, desk: Desk, page: Page
) -> None:
    async def person(link: str) -> None:
        await page.goto(link)
        await expect(page.locator("h1")).to_have_text(MESSAGE)
        assert await page.locator("h1 b").count() == 0
        await expect(page.get_by_label("Replicas")).to_have_value("3")  # the default, pre-filled
        await expect(page.get_by_label("Canary first")).to_be_checked()
        assert await page.get_by_label("Deploy key").get_attribute("type") == "password"
        await fill_valid(page)
        await page.get_by_role("button", name="Submit").click()
        await expect(page.locator("h1")).to_have_text("Thank you")

    result = await desk.call(mode, "deploy", {}, person)
    assert not result.is_error, result
    assert desk.received == [EXPECTED]
    assert desk.received[0].api_key.get_secret_value() == SECRET
    assert result.structured_content == {**EXPECTED.model_dump(mode="json"), "api_key": "**********"}
    assert SECRET not in result.model_dump_json()
    assert desk.hitl.pending_questions == 0


async def test_the_browser_refuses_to_submit_a_form_that_breaks_a_constraint_and_the_question_stays_open(
    mode: str, desk: Desk, page: Page
) -> None:
    async def person(link: str) -> None:
        posts = posts_of(page)
        await page.goto(link)
        await fill_valid(page)
        service, replicas = page.get_by_label("Service"), page.get_by_label("Replicas")

        await service.fill("")
        await page.get_by_role("button", name="Submit").click()
        assert await service.evaluate("e => e.validity.valueMissing")
        await service.fill("checkout")

        await replicas.fill("500")
        await page.get_by_role("button", name="Submit").click()
        assert await replicas.evaluate("e => e.validity.rangeOverflow")

        assert posts == []
        assert page.url == link
        assert desk.hitl.pending_questions == 1
        assert desk.received == []

        await replicas.fill("8")
        await page.get_by_role("button", name="Submit").click()
        await expect(page.locator("h1")).to_have_text("Thank you")
        assert posts == [link]  # the refused clicks never reached the server

    result = await desk.call(mode, "deploy", {}, person)
    assert not result.is_error, result
    assert desk.received == [EXPECTED]


async def test_the_decline_button_declines_without_filling_anything(mode: str, desk: Desk, page: Page) -> None:
    async def person(link: str) -> None:
        await page.goto(link)
        await page.get_by_role("button", name="Decline").click()
        await expect(page.locator("h1")).to_have_text("Done")

    result = await desk.call(mode, "deploy", {}, person)
    assert not result.is_error, result
    assert result.structured_content == {"action": "decline"}
    assert desk.received == []


def fake_provider() -> Starlette:
    """A third party's consent page (OAuth-like): Allow redirects back with a code and the state."""

    async def authorize(request: HttpRequest) -> HTMLResponse:
        back = f"{request.query_params['redirect_uri']}?{urlencode({'code': CODE, 'state': request.query_params['state']})}"
        return HTMLResponse(f'<h1>Fake provider</h1><p>Let elicitkit deploy?</p><a href="{escape(back)}">Allow</a>')

    return Starlette(routes=[Route("/authorize", authorize)])


async def test_a_third_party_flow_in_chromium_comes_back_through_the_callback_with_the_code(
    mode: str, desk: Desk, page: Page, provider: str
) -> None:
    result = await desk.call(mode, "connect", {"provider": provider}, lambda link: allow(page, link))
    assert not result.is_error, result
    assert result.structured_content == {"code": CODE}


# The pictures in docs/img: each page in the light and the dark scheme, the form and its error state also on a phone.
SHOTS = {"": ("light", 1280), "-dark": ("dark", 1280), "-phone": ("light", 375), "-phone-dark": ("dark", 375)}
EVERY_SIZE = tuple(SHOTS)
DESKTOP_ONLY = ("", "-dark")


async def test_screenshots_of_every_page(browser: Browser, desk: Desk, provider: str, tmp_path: Path) -> None:
    """Screenshots every page; with ELICITKIT_SCREENSHOTS=1 they replace docs/img/*.png (shown in the README)."""
    IMG = DOCS_IMG if os.environ.get("ELICITKIT_SCREENSHOTS") == "1" else tmp_path
    IMG.mkdir(parents=True, exist_ok=True)
    page = await new_page(browser, height=240)  # a full-page shot is never shorter than the viewport
    shots: list[str] = []

    async def shoot(name: str, variants: tuple[str, ...] = DESKTOP_ONLY) -> None:
        for suffix in variants:
            scheme, width = SHOTS[suffix]
            await page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
            await page.set_viewport_size({"width": width, "height": 240})
            await page.screenshot(path=IMG / f"{name}{suffix}.png", full_page=True)
            shots.append(f"{name}{suffix}.png")
        await page.emulate_media(color_scheme="light")
        await page.set_viewport_size({"width": 640, "height": 240})

    async def person(link: str) -> None:
        await page.goto(link)
        await expect(page.locator("h1")).to_have_text(MESSAGE)
        await shoot("secure-form", EVERY_SIZE)

        # Switch off the browser's checks (the pages have no script; the test may run one) to show the server's.
        await page.evaluate("document.querySelector('form').noValidate = true")
        await page.get_by_label("Service").fill("x")
        await page.get_by_label("Replicas").fill("500")
        await page.get_by_role("button", name="Submit").click()
        await expect(page.locator(".error-summary")).to_be_focused()
        assert await page.locator(".error-message").count() >= 4  # service, replicas, region, checks, deploy key
        await expect(page.get_by_label("Replicas")).to_have_value("500")  # the entry comes back for fixing
        await shoot("validation-errors", EVERY_SIZE)

        await fill_valid(page)
        await page.get_by_role("button", name="Submit").click()
        await expect(page.locator("h1")).to_have_text("Thank you")
        await shoot("thank-you")

        forged = link.rsplit("/", 1)[0] + "/AAAAforged-by-someone-else0123456789abcdefghijklmnop"
        response = await page.goto(forged)
        assert response is not None
        assert response.status == 400
        await expect(page.locator("h1")).to_have_text("This link cannot be used")
        await shoot("invalid-link")

    async def consenting(link: str) -> None:
        await allow(page, link)
        await shoot("callback-done")

    form = await desk.call("legacy", "deploy", {}, person)
    flow = await desk.call("legacy", "connect", {"provider": provider}, consenting)
    assert desk.received == [EXPECTED]
    assert flow.structured_content == {"code": CODE}
    assert not form.is_error
    assert shots == [
        *(f"{name}{suffix}.png" for name in ("secure-form", "validation-errors") for suffix in EVERY_SIZE),
        *(f"{name}{suffix}.png" for name in ("thank-you", "invalid-link", "callback-done") for suffix in DESKTOP_ONLY),
    ]
    for name in shots:
        assert (IMG / name).read_bytes().startswith(b"\x89PNG"), name
