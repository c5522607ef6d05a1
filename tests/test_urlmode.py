"""URL mode over real streamable HTTP: elicitkit's own pages, the links behind them, and what the client sees.

The test plays the person with an `httpx.AsyncClient` as their browser: it opens
the link the client was given, reads the form, and presses a button.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from html.parser import HTMLParser
from typing import Any, Literal
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import anyio
import anyio.abc
import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    ElicitCompleteNotification,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from pydantic import AnyUrl, BaseModel, EmailStr, Field, SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from elicitkit import Accepted, Cancelled, Declined, Elicitation, ElicitationResult
from elicitkit.testing import serve_app
from tests.scenes import ERAS, mounted, new_server, pending_id, reached, send_answer, serving, text_of, watched_server

pytestmark = pytest.mark.anyio

URL_REQUIRED = -32042


class Account(BaseModel):
    owner: str = Field(min_length=2, max_length=24)
    seats: int = Field(ge=1000, le=99999)
    plan: Literal["basic", "ultraviolet"]
    renew: bool
    api_key: SecretStr


SECRET = "sk-live-zebra-4242-quokka"
# What the person types, as the browser posts it ("renew", a yes/no without a default, is two radios).
GOOD: dict[str, str | list[str]] = {
    "owner": "quokka-holdings",
    "seats": "73519",
    "plan": "ultraviolet",
    "renew": "true",
    "api_key": SECRET,
}


def form_server(
    message: str = "Your account details, please", model: type[BaseModel] = Account, **options: Any
) -> tuple[Elicitation, list[ElicitationResult[Any]]]:
    """A tool `fill_in` asking for `model` on elicitkit's page; its result names the outcome and nothing else."""
    server, hitl = new_server("urlmode-test", timeout=10, **options)
    answers: list[ElicitationResult[Any]] = []

    @server.tool()
    async def fill_in(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, message, model)
        answers.append(answer)
        return type(answer).__name__

    return hitl, answers


def sign_in_server(
    provider: str = "https://id.example.com",
) -> tuple[Elicitation, list[ElicitationResult[dict[str, str]]]]:
    """A tool `sign_in` that sends the person to `provider`'s /authorize and back; it returns the outcome's action."""
    server, hitl = new_server("sign-in", timeout=10)
    flows: list[ElicitationResult[dict[str, str]]] = []

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        def start(callback: str, state: str) -> str:
            return f"{provider}/authorize?redirect_uri={quote(callback, safe='')}&state={state}"

        flows.append(await hitl.url_flow(ctx, "Sign in", start))
        return flows[-1].action

    return hitl, flows


class Links:
    """The client's side of URL mode: the person agrees to open every link (or replies `action`)."""

    def __init__(self, action: Literal["accept", "decline", "cancel"] = "accept") -> None:
        self.action = action
        self.asked: list[ElicitRequestURLParams] = []
        self._seen = 0
        self._new = anyio.Event()

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams), params
        self.asked.append(params)
        self._new.set()
        return ElicitResult(action=self.action)

    async def next(self) -> ElicitRequestURLParams:
        """The next link the client was asked to open."""
        with anyio.fail_after(5):
            while len(self.asked) <= self._seen:
                await self._new.wait()
                self._new = anyio.Event()
        self._seen += 1
        return self.asked[self._seen - 1]


class Call:
    """A tool call running in the background while the test plays the person."""

    def __init__(self, tg: anyio.abc.TaskGroup, client: Client, name: str, arguments: dict[str, Any]) -> None:
        self.done = anyio.Event()
        self._result: CallToolResult | None = None
        tg.start_soon(self._run, client, name, arguments)

    async def _run(self, client: Client, name: str, arguments: dict[str, Any]) -> None:
        self._result = await client.call_tool(name, arguments)
        self.done.set()

    async def result(self) -> CallToolResult:
        with anyio.fail_after(10):
            await self.done.wait()
        assert self._result is not None
        return self._result


@dataclass(frozen=True)
class Scene:
    """The usual scene: the server over HTTP, a client that opens links, the person's browser, a task group."""

    base: str  # elicitkit's public URL
    client: Client
    links: Links
    browser: httpx.AsyncClient
    tg: anyio.abc.TaskGroup

    def call(self, tool: str) -> Call:
        return Call(self.tg, self.client, tool, {})

    async def open(self, tool: str = "fill_in") -> tuple[Call, str, Page]:
        """Call `tool`, take the link the client is handed, and open the form there in the person's browser."""
        call = self.call(tool)
        link = (await self.links.next()).url
        return call, link, await open_form(self.browser, link)


@asynccontextmanager
async def asking(
    hitl: Elicitation, mode: str, *, app: ASGIApp | None = None, under: str = "", **client_options: Any
) -> AsyncIterator[Scene]:
    """The usual scene, served; `app` replaces the server's own ASGI app (one wrapping it, or mounting it `under`)."""
    links = Links()
    async with serve_app(app or hitl.server.streamable_http_app()) as root:
        hitl.public_url = f"{root}{under}"
        async with (
            Client(f"{root}{under}/mcp", mode=mode, elicitation_callback=links, **client_options) as client,
            httpx.AsyncClient() as browser,
            anyio.create_task_group() as tg,
        ):
            yield Scene(hitl.public_url, client, links, browser, tg)


class Page(HTMLParser):
    """One of elicitkit's pages: its form controls (tag and attributes) and the error text under each field."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__()
        self.response = response
        self.controls: list[tuple[str, dict[str, str | None]]] = []
        self.errors: dict[str, list[str]] = {}
        self._field: str | None = None
        self._select: str | None = None
        self._error_for: str | None = None
        self.feed(response.text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "select":
            self._select = found.get("name")
        if tag == "option":
            found["select"] = self._select
        if tag in ("input", "select", "option"):
            self.controls.append((tag, found))
            if tag != "option" and found.get("name") not in (None, "ek:csrf"):
                self._field = found["name"]
        if tag == "p" and found.get("class") == "error-message":
            # `f-<name>-error`: the message is linked to its field by id (and the field to it, aria-describedby).
            self._error_for = (found.get("id") or "").removeprefix("f-").removesuffix("-error")
            self.errors.setdefault(self._error_for, [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        if tag == "p":
            self._error_for = None

    def handle_data(self, data: str) -> None:
        if self._error_for is not None and data.strip() not in ("", "Error:"):  # the hidden "Error:" for readers
            self.errors[self._error_for].append(data.strip())

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.controls if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    def one(self, tag: str, **attrs: str) -> dict[str, str | None]:
        [found] = self.find(tag, **attrs)
        return found

    @property
    def csrf(self) -> str:
        value = self.one("input", name="ek:csrf")["value"]
        assert value
        return value


async def open_form(browser: httpx.AsyncClient, link: str) -> Page:
    page = await browser.get(link)
    assert page.status_code == 200, page.text
    return Page(page)


async def press(
    browser: httpx.AsyncClient,
    link: str,
    page: Page,
    action: str,
    fields: Mapping[str, str | list[str]] | None = None,
) -> httpx.Response:
    """Press `action` (accept, decline or cancel) on `page`, as its browser posts it."""
    return await browser.post(link, data={"ek:csrf": page.csrf, "ek:action": action, **(fields or {})})


async def send_good(browser: httpx.AsyncClient, link: str, page: Page | None = None) -> httpx.Response:
    """The person fills in GOOD on `page` (the form as they open it now, by default) and it is taken."""
    done = await press(browser, link, page or await open_form(browser, link), "accept", GOOD)
    assert done.status_code == 200, done.text
    return done


async def start_sign_in(scene: Scene) -> tuple[Call, str]:
    """Call `sign_in` and follow the client's link; return the call and the state the provider is sent."""
    call = scene.call("sign_in")
    # The client's link is elicitkit's own: it binds this browser, then sends it to the provider.
    go = await scene.browser.get((await scene.links.next()).url)
    assert go.status_code == 303
    [state] = parse_qs(urlsplit(go.headers["location"]).query)["state"]
    return call, state


async def come_back(scene: Scene, call: Call, state: str, code: str) -> None:
    """The provider sends the person's browser back with `code`, and the tool resumes."""
    back = await scene.browser.get(f"{scene.base}/elicit/cb", params={"state": state, "code": code})
    assert back.status_code == 200, back.text
    assert text_of(await call.result()) == "accept"


def assert_open(hitl: Elicitation, call: Call, answers: list[Any]) -> None:
    """The question is still waiting, and the tool has not resumed."""
    assert hitl.pending_questions == 1
    assert not call.done.is_set()
    assert answers == []


def assert_refused(response: httpx.Response, status: int, says: str) -> None:
    assert response.status_code == status, response.text
    assert "This link cannot be used" in response.text
    assert says in response.text
    assert "<form" not in response.text


async def assert_link_refused(scene: Scene, link: str, page: Page, status: int, says: str) -> None:
    """`link` is refused both when the person opens it and when the form is posted to it."""
    assert_refused(await scene.browser.get(link), status, says)
    assert_refused(await press(scene.browser, link, page, "accept", GOOD), status, says)


def assert_accepted_account(answers: list[ElicitationResult[Any]]) -> None:
    [answer] = answers
    assert isinstance(answer, Accepted)
    account = answer.data
    assert isinstance(account, Account)
    assert (account.owner, account.seats, account.plan, account.renew) == (
        "quokka-holdings",
        73519,
        "ultraviolet",
        True,
    )
    assert isinstance(account.api_key, SecretStr)
    assert account.api_key.get_secret_value() == SECRET


class WireRecorder:
    """ASGI middleware that keeps every byte the MCP endpoint (paths under /mcp) receives and sends."""

    def __init__(self, app: ASGIApp, on_request: Callable[[bytes], None] | None = None) -> None:
        self.app = app
        self.requests: list[bytes] = []
        self.responses: list[bytes] = []
        self._on_request = on_request

    @property
    def seen(self) -> bytes:
        return b"".join(self.requests + self.responses)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            await self.app(scope, receive, send)
            return
        body = bytearray()

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self.requests.append(bytes(body))
                    if self._on_request is not None:
                        self._on_request(bytes(body))
            return message

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.body":
                self.responses.append(message.get("body", b""))
            await send(message)

        await self.app(scope, recording_receive, recording_send)


# --- secure_form, end to end -------------------------------------------------------------------


async def test_a_secret_form_reaches_the_tool_typed_and_its_data_never_crosses_the_mcp_wire(mode: str) -> None:
    hitl, answers = form_server()
    wire = WireRecorder(hitl.server.streamable_http_app())
    async with asking(hitl, mode, app=wire) as scene:
        assert scene.client.protocol_version == ERAS[mode]
        call, link, page = await scene.open()
        assert link.startswith(f"{scene.base}/elicit/f/")
        done = await send_good(scene.browser, link, page)
        assert "Your answer was sent" in done.text
        result = await call.result()
    assert not result.is_error, text_of(result)
    assert text_of(result) == "Accepted"
    assert_accepted_account(answers)
    seen = wire.seen
    # The recorder saw the conversation: the link the client was given, and the tool's result.
    assert link.encode() in seen
    assert b'"Accepted"' in seen
    for value in ("quokka-holdings", "73519", "ultraviolet", SECRET):
        assert value.encode() not in seen, value
    assert hitl.active_runs == 0
    assert hitl.pending_questions == 0


@pytest.mark.parametrize(("button", "outcome"), [("decline", Declined), ("cancel", Cancelled)])
async def test_the_decline_and_cancel_buttons_end_the_question_as_that_outcome(
    mode: str, button: str, outcome: type[Declined | Cancelled]
) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        done = await press(scene.browser, link, page, button)
        assert done.status_code == 200, done.text
        assert "You can close this page" in done.text
        result = await call.result()
    assert text_of(result) == outcome.__name__
    assert answers == [outcome()]
    assert hitl.pending_questions == 0


async def test_declining_on_the_page_with_a_reason_hands_the_tool_the_reason(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        assert '<label for="ek:reason">Reason for declining' in page.response.text
        assert 'name="ek:reason" maxlength="1000" rows="2" aria-describedby="ek:reason-hint"' in page.response.text
        too_long = await press(scene.browser, link, page, "decline", {"ek:reason": "x" * 1001})
        assert too_long.status_code == 400
        assert "at most 1,000 characters" in too_long.text
        done = await press(scene.browser, link, page, "decline", {"ek:reason": "  Not my account  "})
        assert done.status_code == 200, done.text
        await call.result()
    assert answers == [Declined("Not my account")]


async def test_a_post_that_breaks_the_constraints_is_shown_again_with_errors_and_a_corrected_one_completes(
    mode: str,
) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        # What a browser would have stopped, posted directly: the server must check it again.
        broken = {**GOOD, "owner": "q" * 40, "seats": "7", "plan": "platinum"}
        again = Page(await press(scene.browser, link, page, "accept", broken))
        assert again.response.status_code == 422, again.response.text
        # In the page's own words, from the schema (never the validator's), each linked from the error summary.
        assert again.errors == {
            "owner": ["Owner must be between 2 and 24 characters"],
            "seats": ["Seats must be between 1000 and 99999"],
            "plan": ["Choose plan from the options shown"],
        }
        assert "<title>Error: Your account details, please</title>" in again.response.text
        assert '<a href="#f-owner">Owner must be between 2 and 24 characters</a>' in again.response.text
        assert '<a href="#f-api_key">Type api_key again</a>' in again.response.text  # what was typed is gone
        assert SECRET not in again.response.text
        assert "value" not in again.one("input", name="api_key")
        assert_open(hitl, call, answers)

        await send_good(scene.browser, link, again)
        result = await call.result()
    assert text_of(result) == "Accepted"
    assert_accepted_account(answers)


class Profile(BaseModel):
    name: str = Field("Ada", max_length=30)
    age: int = Field(36, ge=18, le=99)
    plan: Literal["free", "pro", "team"] = "pro"
    newsletter: bool = True
    topics: list[Literal["news", "tips", "offers"]] = ["tips"]
    email: EmailStr = "ada@example.com"
    homepage: AnyUrl = AnyUrl("https://ada.example.com/")
    birthday: date = date(1815, 12, 10)
    token: SecretStr = SecretStr("sk-default-never-shown")


async def test_the_form_renders_every_field_type_with_its_defaults_and_secrets_as_empty_password_inputs(
    mode: str,
) -> None:
    hitl, _ = form_server("Your profile", Profile)
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        await press(scene.browser, link, page, "cancel")
        assert text_of(await call.result()) == "Cancelled"

    name = page.one("input", name="name")
    assert (name["type"], name["value"], name["maxlength"]) == ("text", "Ada", "30")
    age = page.one("input", name="age")
    assert (age["type"], age["value"], age["min"], age["max"]) == ("number", "36", "18", "99")
    plans = page.find("input", name="plan")
    # A short choice is radios; with a default, that one is chosen (and leaving it is the default again).
    assert [(o["type"], o["value"], "checked" in o) for o in plans] == [
        ("radio", "free", False),
        ("radio", "pro", True),
        ("radio", "team", False),
    ]
    newsletter = page.one("input", name="newsletter", type="checkbox")
    assert "checked" in newsletter
    topics = page.find("input", name="topics")
    assert [(t["type"], t["value"], "checked" in t) for t in topics] == [
        ("checkbox", "news", False),
        ("checkbox", "tips", True),
        ("checkbox", "offers", False),
    ]
    email = page.one("input", name="email")
    assert (email["type"], email["value"]) == ("email", "ada@example.com")
    homepage = page.one("input", name="homepage")
    assert (homepage["type"], homepage["value"]) == ("url", "https://ada.example.com/")
    birthday = page.one("input", name="birthday")
    assert (birthday["type"], birthday["value"]) == ("date", "1815-12-10")
    token = page.one("input", name="token")
    assert token["type"] == "password"
    assert "value" not in token
    assert "sk-default-never-shown" not in page.response.text


# --- links that must not work --------------------------------------------------------------------


async def test_a_forged_or_altered_link_gets_a_clear_page_and_resumes_nothing(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        token = link.rsplit("/", 1)[1]
        middle = len(token) // 2
        altered = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]
        forged = secrets.token_urlsafe(len(token) * 3 // 4)
        for bad in (forged, altered):
            await assert_link_refused(scene, f"{scene.base}/elicit/f/{bad}", page, 400, "This link is not valid")
        assert_open(hitl, call, answers)

        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_an_expired_link_gets_a_clear_page(mode: str) -> None:
    watched = watched_server(
        lambda hitl, ctx: hitl.secure_form(ctx, "Quick, the key", Account, timeout=0.5), timeout=10
    )
    async with asking(watched.hitl, mode) as scene:
        call, link, page = await scene.open("ask")
        await reached(watched.timed_out)
        await assert_link_refused(scene, link, page, 400, "This link has expired")
        assert text_of(await call.result()) == "timed out after 0.5"
    assert watched.hitl.pending_questions == 0


async def test_a_used_link_is_refused_and_the_tool_resumes_only_once(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"

        assert_refused(await press(scene.browser, link, page, "decline"), 410, "This question was already answered")
        assert_refused(await scene.browser.get(link), 410, "This question was already answered")
    assert_accepted_account(answers)


async def test_a_callback_link_does_not_open_the_form_page(mode: str) -> None:
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene:
        call, state = await start_sign_in(scene)
        as_form = f"{scene.base}/elicit/f/{state}"
        assert_refused(await scene.browser.get(as_form), 400, "This link is not valid")
        assert_refused(await scene.browser.post(as_form, data={"ek:action": "accept"}), 400, "This link is not valid")
        assert_open(hitl, call, flows)

        await come_back(scene, call, state, "xyz")
    assert flows == [Accepted(data={"code": "xyz"}, content={"code": "xyz"})]


# --- what the page does with hostile input, and how it protects itself -----------------------------


class Hostile(BaseModel):
    note: str = Field(title="<script>alert(2)</script>", description="<script>alert(3)</script>")


def assert_locked_down(response: httpx.Response) -> None:
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src" not in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"


async def test_a_script_in_the_message_title_or_description_renders_as_text_under_a_strict_policy(mode: str) -> None:
    hitl, _ = form_server("<script>alert(1)</script> Sign here", Hostile)
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        refused = await scene.browser.get(f"{scene.base}/elicit/f/{secrets.token_urlsafe(90)}")
        done = await press(scene.browser, link, page, "decline")
        assert text_of(await call.result()) == "Declined"

    html = page.response.text
    assert "<script" not in html
    for n in (1, 2, 3):
        assert f"&lt;script&gt;alert({n})&lt;/script&gt;" in html
    for response in (page.response, refused, done):
        assert_locked_down(response)


async def test_a_post_without_a_matching_csrf_field_and_cookie_is_refused_and_resumes_nothing(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as stranger:
        call, link, page = await scene.open()
        browser = scene.browser
        without_field = await browser.post(link, data={"ek:action": "accept", **GOOD})
        mismatched = await browser.post(
            link, data={"ek:csrf": secrets.token_urlsafe(24), "ek:action": "accept", **GOOD}
        )
        without_cookie = await press(stranger, link, page, "accept", GOOD)
        for refused in (without_field, mismatched):
            assert refused.status_code == 403, refused.text
            assert "was not sent from this page" in refused.text
        assert_refused(without_cookie, 403, "This link was opened in another browser")
        assert_open(hitl, call, answers)

        await send_good(browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


# --- elicit_url: links elicitkit does not serve ----------------------------------------------------

CHECKOUT = "https://pay.example.com/checkout/42?lang=en"


def checkout_server(**elicit_options: Any) -> Elicitation:
    server = MCPServer("checkout")
    hitl = Elicitation(server, timeout=10)

    @server.tool()
    async def pay(url: str, ctx: Context) -> str:
        try:
            result = await hitl.elicit_url(ctx, "Pay the invoice", url, **elicit_options)
        except ValueError as exc:
            return f"refused: {exc}"
        match result:
            case Accepted(data=None):
                return "agreed to open it"
            case Declined():
                return "declined"
            case _:
                return f"unexpected {result!r}"

    return hitl


@pytest.mark.parametrize(("reply", "outcome"), [("accept", "agreed to open it"), ("decline", "declined")])
async def test_an_external_link_returns_as_soon_as_the_person_agrees_or_declines_to_open_it(
    mode: str, reply: Literal["accept", "decline"], outcome: str
) -> None:
    hitl = checkout_server()
    links = Links(reply)
    async with serving(hitl) as url, Client(url, mode=mode, elicitation_callback=links) as client:
        with anyio.fail_after(5):
            result = await client.call_tool("pay", {"url": CHECKOUT})
    assert text_of(result) == outcome
    assert [(a.message, a.url) for a in links.asked] == [("Pay the invoice", CHECKOUT)]
    assert hitl.active_runs == 0


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("http://pay.example.com/checkout/42", "must be https (plain http only for loopback)"),
        ("https://ada:hunter2@pay.example.com/checkout/42", "must not carry credentials"),
    ],
)
async def test_a_plain_http_or_credential_carrying_link_is_refused_before_the_client_sees_it(
    mode: str, bad: str, says: str
) -> None:
    hitl = checkout_server()
    links = Links()
    async with serving(hitl) as url, Client(url, mode=mode, elicitation_callback=links) as client:
        result = await client.call_tool("pay", {"url": bad})
    assert text_of(result).startswith("refused: ")
    assert says in text_of(result)
    assert links.asked == []


async def test_required_error_ends_a_2025_11_25_call_with_the_url_required_error() -> None:
    hitl = checkout_server(required_error=True)
    links = Links()
    async with serving(hitl) as url, Client(url, mode="legacy", elicitation_callback=links) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("pay", {"url": CHECKOUT})
    error = raised.value.error
    assert error.code == URL_REQUIRED
    assert isinstance(error.data, dict)
    [elicitation] = error.data["elicitations"]
    assert elicitation["url"] == CHECKOUT
    assert elicitation["mode"] == "url"
    assert elicitation["elicitationId"]
    assert links.asked == []


async def test_required_error_asks_as_usual_on_2026_07_28() -> None:
    hitl = checkout_server(required_error=True)
    links = Links()
    async with serving(hitl) as url, Client(url, mode="auto", elicitation_callback=links) as client:
        result = await client.call_tool("pay", {"url": CHECKOUT})
    assert text_of(result) == "agreed to open it"
    assert [a.url for a in links.asked] == [CHECKOUT]


# --- how each era learns that the page is done -------------------------------------------------------


async def test_on_2025_11_25_the_client_is_told_the_elicitation_it_opened_is_complete() -> None:
    hitl, answers = form_server()
    completed: list[str] = []
    told = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, ElicitCompleteNotification):
            completed.append(message.params.elicitation_id)
            told.set()

    async with asking(hitl, "legacy", message_handler=on_message) as scene:
        call, link, page = await scene.open()
        assert completed == []
        await press(scene.browser, link, page, "accept", GOOD)
        assert text_of(await call.result()) == "Accepted"
        await reached(told)
    [asked] = scene.links.asked
    assert asked.elicitation_id
    assert completed == [asked.elicitation_id]
    assert_accepted_account(answers)


async def test_on_2026_07_28_a_slow_person_is_waited_for_without_sending_them_to_the_link_again() -> None:
    hitl, answers = form_server(url_wait=0.2)
    retries: list[bytes] = []
    second_retry = anyio.Event()

    def count_retries(body: bytes) -> None:
        if b'"requestState"' in body:
            retries.append(body)
            if len(retries) == 2:
                second_retry.set()

    wire = WireRecorder(hitl.server.streamable_http_app(), on_request=count_retries)
    async with asking(hitl, "auto", app=wire) as scene:
        call = scene.call("fill_in")
        link = (await scene.links.next()).url
        await reached(second_retry)
        # The first retry (the client's accept) came back with nothing but a requestState.
        assert any(
            b'"resultType":"input_required"' in r and b'"requestState"' in r and b'"inputRequests"' not in r
            for r in wire.responses
        )
        await send_good(scene.browser, link)
        result = await call.result()
    assert text_of(result) == "Accepted"
    assert_accepted_account(answers)
    assert len(scene.links.asked) == 1
    assert b'"inputResponses"' in retries[0]
    assert b'"inputResponses"' not in retries[1]


# --- third-party flows ----------------------------------------------------------------------------


def fake_oauth_provider() -> Starlette:
    """An authorization server that approves at once: /authorize redirects back with a code."""

    async def authorize(request: Request) -> RedirectResponse:
        back = urlencode({"code": "abc", "state": request.query_params["state"]})
        return RedirectResponse(f"{request.query_params['redirect_uri']}?{back}", status_code=302)

    return Starlette(routes=[Route("/authorize", authorize)])


async def test_an_oauth_flow_hands_the_tool_the_code_and_its_callback_works_once(mode: str) -> None:
    async with serve_app(fake_oauth_provider()) as provider_url:
        hitl, flows = sign_in_server(provider_url)
        async with asking(hitl, mode) as scene:
            browser = scene.browser
            browser.follow_redirects = True
            call = scene.call("sign_in")
            asked = await scene.links.next()
            assert asked.url.startswith(f"{scene.base}/elicit/go/")
            landed = await browser.get(asked.url)
            assert [r.status_code for r in landed.history] == [303, 302]
            assert landed.history[0].headers["location"].startswith(f"{provider_url}/authorize?")
            assert landed.url.path == "/elicit/cb"
            assert landed.status_code == 200, landed.text
            assert "All set" in landed.text
            assert text_of(await call.result()) == "accept"

            assert_refused(await browser.get(landed.url), 410, "This link was already used")
    assert flows == [Accepted(data={"code": "abc"}, content={"code": "abc"})]


# --- clients that cannot open links ----------------------------------------------------------------


async def test_a_client_that_cannot_open_links_gets_the_link_through_the_model(mode: str) -> None:
    hitl, answers = form_server()
    async with serving(hitl) as url, Client(url, mode=mode) as client, httpx.AsyncClient() as browser:
        base = url.removesuffix("/mcp")
        pending = await client.call_tool("fill_in", {})
        found = re.search(rf"{re.escape(base)}/elicit/f/[\w-]+", text_of(pending))
        assert found is not None, text_of(pending)
        await send_good(browser, found[0])
        with anyio.fail_after(10):
            result = await send_answer(client, pending_id(pending), "accept", {})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "Accepted"
    assert_accepted_account(answers)
    assert SECRET not in text_of(pending)
    assert hitl.active_runs == 0


@pytest.mark.parametrize(("reply", "outcome"), [("accept", "agreed to open it"), ("decline", "declined")])
async def test_an_external_link_reaches_a_client_that_cannot_open_links_through_the_model(
    mode: str, reply: Literal["accept", "decline"], outcome: str
) -> None:
    hitl = checkout_server()
    async with serving(hitl) as url, Client(url, mode=mode) as client:
        pending = await client.call_tool("pay", {"url": CHECKOUT})
        assert pending.meta is not None, text_of(pending)
        assert CHECKOUT in text_of(pending)
        with anyio.fail_after(5):
            result = await send_answer(client, pending_id(pending), reply, {} if reply == "accept" else None)
    assert text_of(result) == outcome
    assert hitl.active_runs == 0


async def test_with_the_error_policy_a_client_that_cannot_open_links_gets_an_error(mode: str) -> None:
    hitl, answers = form_server(fallback="error")
    async with serving(hitl) as url, Client(url, mode=mode) as client:
        result = await client.call_tool("fill_in", {})
    assert result.is_error
    assert "The client did not declare that it can show links (URL mode)" in text_of(result)
    assert answers == []


async def test_secure_form_results_never_carry_secrets_in_the_clear() -> None:
    from elicitkit._core.kinds import Answer
    from elicitkit._engine.question import Question
    from elicitkit._urlmode import REDACTED

    class Login(BaseModel):
        user: str
        password: SecretStr

    server = MCPServer("redaction")
    hitl = Elicitation(server, public_url="http://127.0.0.1:1")

    async def answered(ctx: Any, run: Any, question: Question, timeout: float, convert: Any, own: Any = None) -> Any:
        return convert(question, Answer("accept", {"user": "ada", "password": "hunter2-secret"}))

    hitl._engine.asker.ask = answered  # type: ignore[method-assign]
    from types import SimpleNamespace

    ctx: Any = SimpleNamespace(request_context=SimpleNamespace())  # no auth: the principal is None
    result = await hitl.secure_form(ctx, "Log in", Login)
    assert isinstance(result, Accepted)
    assert result.data.password.get_secret_value() == "hunter2-secret"
    assert result.content == {"user": "ada", "password": REDACTED}
    assert "hunter2" not in repr(result)


async def test_a_link_minted_for_another_principal_is_refused_and_resumes_nothing(mode: str) -> None:
    from elicitkit._web.tokens import Link

    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        real = hitl._links.tokens.read(link.rsplit("/", 1)[1], "form")
        # A genuine token, sealed by the server, for the same question but someone else.
        foreign = hitl._links.tokens.mint(Link(real.question_id, "mallory", "form", real.expires_at))
        foreign_link = f"{scene.base}/elicit/f/{foreign}"
        await assert_link_refused(scene, foreign_link, page, 410, "already answered, or it has expired")
        assert_open(hitl, call, answers)
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_a_callback_from_a_browser_that_never_opened_the_link_is_refused(mode: str) -> None:
    """Whoever saw the authorize URL (the client, the model) cannot hand the tool a code of their own."""
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as attacker:
        call, state = await start_sign_in(scene)
        forged = await attacker.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "ATTACKERS-OWN"})
        assert_refused(forged, 403, "Open the link from the conversation again")
        assert_open(hitl, call, flows)
        await come_back(scene, call, state, "the-real-one")
    assert flows == [Accepted(data={"code": "the-real-one"}, content={"code": "the-real-one"})]


async def test_with_page_identity_only_the_person_who_was_asked_can_use_the_link(mode: str) -> None:
    from starlette.requests import Request as PageRequest

    async def identity(request: PageRequest) -> str | None:
        return request.headers.get("x-test-user")  # stands in for a session cookie or SSO

    hitl, answers = form_server(page_identity=identity)
    async with asking(hitl, mode) as scene, httpx.AsyncClient(headers={"x-test-user": "bob"}) as bob:
        call = scene.call("fill_in")
        link = (await scene.links.next()).url
        assert_refused(await bob.get(link), 403, "sent to someone else")
        assert_open(hitl, call, answers)
        # Unauthenticated here, the asked principal is None too: the person who was asked gets through.
        await send_good(scene.browser, link)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_a_second_tab_does_not_break_the_first(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, first_tab = await scene.open()
        await open_form(scene.browser, link)  # the person opens the link again
        await send_good(scene.browser, link, first_tab)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_the_pages_work_when_everything_is_mounted_under_a_path_prefix(mode: str) -> None:
    hitl, answers = form_server()
    parent = mounted(hitl.server, "/tools", hitl.http_app())
    async with asking(hitl, mode, app=parent, under="/tools") as scene:
        call, link, page = await scene.open()
        assert scene.base.endswith("/tools")
        assert link.startswith(f"{scene.base}/elicit/f/")
        assert 'href="/tools/elicit/static/style.css"' in page.response.text
        assert (await scene.browser.get(f"{scene.base}/elicit/static/style.css")).status_code == 200
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_an_oauth_code_reaches_the_tool_but_never_the_audit_log(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="elicitkit.audit")
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene:
        call, state = await start_sign_in(scene)
        await come_back(scene, call, state, "OAUTH-CODE-never-logged")
    assert flows == [Accepted(data={"code": "OAUTH-CODE-never-logged"}, content={"code": "OAUTH-CODE-never-logged"})]
    answered = [r.audit for r in caplog.records if r.name == "elicitkit.audit" and r.audit["event"] == "answer"]  # type: ignore[attr-defined]
    assert answered[-1]["fields"] == ["code"]
    assert "OAUTH-CODE" not in caplog.text
    assert all("OAUTH-CODE" not in repr(getattr(r, "audit", "")) for r in caplog.records)
