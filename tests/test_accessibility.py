"""elicitkit's pages meet WCAG 2.2 AA: axe-core finds nothing on any of them, in real Chromium.

Every page and state a person can meet is audited (`tests.browsers.audit`: WCAG
2.0, 2.1 and 2.2 A and AA rules, light and dark schemes, 375x812 and 1280x800,
and no sideways scrolling at 400% zoom): the secure form with every kind of
field, the same form refused by the server, the thank-you, done, invalid-link
and third-party (OAuth) pages, and the web inbox empty, with questions, after
a refused answer and after an accepted one. The refused pages' error summary
must have taken focus as the page loaded, and link to each field.

axe is injected into the pages, whose CSP forbids inline scripts, through a
browser context that bypasses the CSP (and only there).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from playwright.async_api import Browser, Page, expect
from pydantic import AnyUrl, BaseModel, EmailStr, Field, SecretStr

from elicitkit import Accepted, Elicitation, Titles
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from elicitkit.testing import serve_app
from tests.browsers import audit, audit_context
from tests.channels.test_web_inbox import USER, calling, header_identity
from tests.scenes import serving
from tests.test_browser import allow, fake_provider

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


class EveryField(BaseModel):
    """A field of every kind a form can show."""

    service: str = Field(
        title="Service",
        min_length=2,
        max_length=40,
        pattern=r"^[a-z0-9-]+$",
        description="Lower-case letters, digits and hyphens.",
    )
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    share: float = Field(ge=0, le=1, title="Canary share", description="A fraction of the traffic, from 0 to 1.")
    region: Annotated[Literal["eu", "us"], Titles(eu="Europe (Frankfurt)", us="America (Virginia)")] = Field(
        title="Region"
    )
    zone: Literal["a", "b", "c", "d", "e", "f"] = Field(title="Zone")
    priority: Literal["low", "high"] | None = Field(default=None, title="Priority")
    canary: bool = Field(default=True, title="Canary first")
    approved: bool = Field(title="Approved by the on-call engineer")
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks to run", min_length=1, max_length=2)
    contact: EmailStr = Field(title="Contact email")
    runbook: AnyUrl | None = Field(default=None, title="Runbook")
    day: date = Field(title="Deploy day")
    start: datetime = Field(title="Start at")
    note: str | None = Field(default=None, title="Note")
    api_key: SecretStr = Field(title="Deploy key", description="Goes to the tool only, never to the assistant.")


class Release(BaseModel):
    """The inbox's question (no secret: only the secure form may ask for one)."""

    service: str = Field(title="Service", min_length=2, max_length=40, pattern=r"^[a-z0-9-]+$")
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    region: Literal["eu", "us"] = Field(title="Region")
    approved: bool = Field(title="Approved")
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks", min_length=1)


def form_server() -> Elicitation:
    server = MCPServer("accessible-forms")
    hitl = Elicitation(server, timeout=60)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        result = await hitl.secure_form(ctx, "Deploy checkout to production", EveryField)
        return type(result).__name__

    @server.tool()
    async def connect(provider: str, ctx: Context) -> str:
        def start(callback: str, state: str) -> str:
            return f"{provider}/authorize?{urlencode({'redirect_uri': callback, 'state': state})}"

        result = await hitl.url_flow(ctx, "Connect your deploy account", start)
        return type(result).__name__

    return hitl


async def open_link(url: str, tool: str, arguments: dict[str, Any], person: Any, mode: str = "legacy") -> str:
    """Call `tool` (on the 2025-11-25 era unless `mode` says); the client accepts the link, `person(link)` follows
    it; the name of the outcome the tool got."""
    async with anyio.create_task_group() as tg:

        async def client_side(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestURLParams)
            tg.start_soon(person, params.url)
            return ElicitResult(action="accept")

        async with Client(url, mode=mode, elicitation_callback=client_side) as client:
            with anyio.fail_after(120):
                result = await client.call_tool(tool, arguments)
    return str(result.content[0].text)  # type: ignore[union-attr]


async def summary_has_focus(page: Page) -> None:
    """The refused page's error summary took focus as it loaded, and links to a field that exists."""
    await expect(page.locator(".error-summary")).to_be_focused()
    assert (await page.title()).startswith("Error: ")
    hrefs = await page.locator(".error-summary a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs
    for href in hrefs:
        assert await page.locator(href).count() == 1, href


@pytest.fixture
async def provider() -> AsyncIterator[str]:
    async with serve_app(fake_provider()) as url:
        yield url


async def test_every_page_of_the_secure_form_passes_axe_in_both_schemes_and_sizes(
    browser: Browser, axe: Path, provider: str
) -> None:
    hitl = form_server()
    found: dict[str, list[str]] = {}
    context = await audit_context(browser)
    page = await context.new_page()
    try:
        async with serving(hitl) as url:

            async def person(link: str) -> None:
                await page.goto(link)
                await expect(page.locator("h1")).to_have_text("Deploy checkout to production")
                found["the form"] = await audit(page, axe)

                await page.evaluate("document.querySelector('form').noValidate = true")  # show the server's errors
                await page.get_by_label("Service").fill("Not Valid!")
                await page.get_by_label("Replicas").fill("500")
                await page.get_by_label("Deploy key").fill("sk-typed")
                await page.get_by_role("button", name="Submit").click()
                await expect(page.locator(".error-summary")).to_be_visible()
                await summary_has_focus(page)
                found["the form, refused"] = await audit(page, axe)

                forged = link.rsplit("/", 1)[0] + "/AAAAforged-by-someone-else0123456789abcdefghijklmnop"
                await page.goto(forged)
                await expect(page.locator("h1")).to_have_text("This link cannot be used")
                found["an invalid link"] = await audit(page, axe)

                await page.goto(link)
                await page.get_by_role("button", name="Decline").click()
                await expect(page.locator("h1")).to_have_text("Done")
                found["done"] = await audit(page, axe)

            assert await open_link(url, "deploy", {}, person) == "Declined"

            async def answering(link: str) -> None:
                await page.goto(link)
                await page.get_by_label("Service").fill("checkout")
                await page.get_by_label("Canary share").fill("0.1")
                await page.get_by_label("America (Virginia)").check()
                await page.get_by_label("Zone").select_option("c")
                await page.get_by_role("group", name="Approved by the on-call engineer").get_by_label("Yes").check()
                await page.get_by_label("lint").check()
                await page.get_by_label("Contact email").fill("ops@example.com")
                await page.get_by_label("Deploy day").fill("2026-12-01")
                await page.get_by_label("Start at").fill("2026-12-01T09:30")
                await page.get_by_label("Deploy key").fill("sk-typed")
                await page.get_by_role("button", name="Submit").click()
                await expect(page.locator("h1")).to_have_text("Thank you")
                found["thank you"] = await audit(page, axe)

            assert await open_link(url, "deploy", {}, answering) == "Accepted"

            async def consenting(link: str) -> None:
                await allow(page, link)
                found["a third-party flow, back"] = await audit(page, axe)

            assert await open_link(url, "connect", {"provider": provider}, consenting) == "Accepted"
    finally:
        await context.close()
    assert set(found) == {
        "the form",
        "the form, refused",
        "an invalid link",
        "done",
        "thank you",
        "a third-party flow, back",
    }
    assert {page: problems for page, problems in found.items() if problems} == {}


def inbox_server() -> Elicitation:
    server = MCPServer("accessible-inbox")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=120)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        result = await hitl.elicit(ctx, "Deploy checkout to production?", Release, via=web("alice"))
        return type(result).__name__

    @server.tool()
    async def rotate(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Rotate the payments API key?", title="Rotate now", via=web("alice"))
        return f"rotate={result.data}" if isinstance(result, Accepted) else result.action

    return hitl


async def test_the_web_inbox_passes_axe_empty_with_questions_and_after_a_refused_and_an_accepted_answer(
    browser: Browser, axe: Path
) -> None:
    hitl = inbox_server()
    found: dict[str, list[str]] = {}
    async with serving(hitl) as url:
        context = await audit_context(browser, extra_http_headers={USER: "alice"})
        try:
            page = await context.new_page()
            await page.goto(f"{url.removesuffix('/mcp')}/elicit/inbox")
            await expect(page.get_by_text("No open questions.")).to_be_visible()
            found["empty"] = await audit(page, axe)

            async with calling(url, "legacy", "deploy") as deploying, calling(url, "legacy", "rotate"):
                await expect(page).to_have_title("Your questions (2)")
                found["two questions"] = await audit(page, axe)

                question = page.locator("section.question", has_text="Deploy checkout")
                await question.locator("form").evaluate("form => { form.noValidate = true }")
                await question.get_by_label("Service").fill("Not Valid!")
                await question.get_by_role("button", name="Submit").click()
                await expect(page.locator(".error-summary")).to_be_visible()
                await summary_has_focus(page)
                found["a refused answer"] = await audit(page, axe)

                question = page.locator("section.question", has_text="Deploy checkout")
                await question.get_by_label("Service").fill("checkout")
                await question.get_by_label("us").check()
                await question.get_by_role("group", name="Approved").get_by_label("Yes").check()
                await question.get_by_label("lint").check()
                await question.get_by_role("button", name="Submit").click()
                await expect(page.get_by_role("status")).to_have_text("✓ Thanks, your answer was recorded.")
                assert await deploying.outcome() is not None
                found["an accepted answer"] = await audit(page, axe)
        finally:
            await context.close()  # its event stream too: the server waits for open responses when it stops
    assert set(found) == {"empty", "two questions", "a refused answer", "an accepted answer"}
    assert {state: problems for state, problems in found.items() if problems} == {}


# --- by keyboard alone ------------------------------------------------------------------------------------


class Rollout(BaseModel):
    service: str = Field(
        title="Service",
        min_length=2,
        max_length=40,
        pattern=r"^[a-z0-9-]+$",
        description="Lower-case letters, digits and hyphens.",
    )
    region: Annotated[Literal["eu", "us"], Titles(eu="Europe (Frankfurt)", us="America (Virginia)")] = Field(
        title="Region"
    )
    approved: bool = Field(title="Approved")
    checks: list[Literal["lint", "unit"]] = Field(title="Checks", min_length=1)
    api_key: SecretStr = Field(title="Deploy key")


KEY = "sk-typed-by-keyboard"


def keyboard_server(received: list[Any]) -> Elicitation:
    server = MCPServer("keyboard")
    hitl = Elicitation(server, timeout=60)

    @server.tool()
    async def roll_out(ctx: Context) -> str:
        result = await hitl.secure_form(ctx, "Roll out checkout", Rollout)
        received.append(result.data if isinstance(result, Accepted) else result.action)
        return type(result).__name__

    return hitl


async def focused(page: Page) -> str:
    return str(await page.evaluate("() => document.activeElement.id || document.activeElement.textContent"))


async def tab_to(page: Page, target: str, most: int = 20) -> None:
    """Press Tab until the element `target` (an id, or a button's text) has focus."""
    for _ in range(most):
        await page.keyboard.press("Tab")
        if await focused(page) == target:
            return
    raise AssertionError(f"{target!r} never took focus; {await focused(page)!r} has it")


async def test_a_person_fills_corrects_and_sends_the_form_by_keyboard_alone_and_declines_and_cancels(
    mode: str, browser: Browser
) -> None:
    received: list[Any] = []
    hitl = keyboard_server(received)
    context = await browser.new_context(viewport={"width": 375, "height": 812}, color_scheme="dark")
    context.set_default_timeout(10_000)
    page = await context.new_page()
    keys = page.keyboard
    try:
        async with serving(hitl) as url:

            async def fills_in(link: str) -> None:
                await page.goto(link)
                await tab_to(page, "f-service")
                await keys.type("Checkout!")  # what the schema cannot say: the tool wants lower case, no "!"
                await keys.press("Tab")
                assert await focused(page) == "f-region"  # the first radio; none is chosen
                await keys.press("ArrowDown")  # moves to America, and chooses it
                await keys.press("Tab")
                assert await focused(page) == "f-approved"  # Yes (neither is chosen)
                await keys.press("Space")
                await keys.press("Tab")
                assert await focused(page) == "f-checks"
                await keys.press("Space")
                await tab_to(page, "f-api_key")
                await keys.type(KEY)
                await keys.press("Enter")  # sends the form with its first button, Submit

                # Refused by the server: the summary has focus, the title says so, each field is marked.
                await expect(page.locator(".error-summary")).to_be_focused()
                await expect(page).to_have_title("Error: Roll out checkout")
                service = page.get_by_label("Service")
                await expect(service).to_have_attribute("aria-invalid", "true")
                await expect(service).to_have_attribute("aria-describedby", "f-service-hint f-service-error")
                await expect(page.locator("#f-service-hint")).to_have_text("Lower-case letters, digits and hyphens.")
                message = "Service is not accepted as entered: check it against the hint and enter it again"
                await expect(page.locator("#f-service-error")).to_have_text(f"Error: {message}")
                await expect(service).to_have_value("Checkout!")
                key = page.get_by_label("Deploy key")
                await expect(key).to_have_value("")  # never sent back...
                await expect(key).to_have_attribute("aria-describedby", "f-api_key-again")
                await expect(page.locator("#f-api_key-again")).to_contain_text("Type this again")  # ...and it says so
                await expect(page.get_by_role("radio", name="America (Virginia)")).to_be_checked()
                await expect(page.get_by_role("radio", name="Yes")).to_be_checked()

                await keys.press("Tab")  # the summary's first link...
                assert await focused(page) == message
                await keys.press("Enter")  # ...goes to the field
                await expect(service).to_be_focused()
                await keys.press("ControlOrMeta+a")
                await keys.type("checkout")
                await tab_to(page, "f-api_key")
                await keys.type(KEY)
                await tab_to(page, "Submit")
                await keys.press("Enter")
                await expect(page.locator("h1")).to_have_text("Thank you")

            async def declines(link: str) -> None:
                await page.goto(link)
                await tab_to(page, "Decline")
                await keys.press("Enter")
                await expect(page.locator("h1")).to_have_text("Done")

            async def cancels(link: str) -> None:
                await page.goto(link)
                await tab_to(page, "Cancel")
                await keys.press("Space")
                await expect(page.locator("h1")).to_have_text("Done")

            assert await open_link(url, "roll_out", {}, fills_in, mode) == "Accepted"
            assert await open_link(url, "roll_out", {}, declines, mode) == "Declined"
            assert await open_link(url, "roll_out", {}, cancels, mode) == "Cancelled"
    finally:
        await context.close()
    [answer, declined, cancelled] = received
    assert (answer.service, answer.region, answer.approved, answer.checks) == ("checkout", "us", True, ["lint"])
    assert answer.api_key.get_secret_value() == KEY
    assert (declined, cancelled) == ("decline", "cancel")
