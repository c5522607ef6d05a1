"""A page link belongs to the first browser that opens it (issue 24), over real HTTP, both eras.

The attack: without `page_identity`, a link that leaked (to the client, the
model, a log, a shoulder) could be answered from any browser. A second browser
answered a secure form the person had open, and a leaked `/elicit/go/` link let
someone bind their own browser and hand the tool an OAuth code of their own.
Now the first GET of a link records its binding in the store, once for every
node, and every later request of that link (the form, its POST, the go hop,
the callback) must come from that browser. Each browser here is a separate
cookie jar (httpx clients, and Chromium profiles for the form).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from playwright.async_api import Browser, expect
from pydantic import BaseModel, Field, SecretStr
from starlette.requests import Request

from elicitkit import Accepted, Elicitation
from elicitkit.channels.base import Responder, Via
from tests.channels.recording import RecordingChannel
from tests.scenes import serving, text_of
from tests.security.people import call_with_link, new_context
from tests.test_one_door_replay import SharedBroker
from tests.test_urlmode import (
    GOOD,
    Account,
    Call,
    Links,
    Scene,
    asking,
    assert_accepted_account,
    assert_open,
    assert_refused,
    come_back,
    form_server,
    open_form,
    press,
    send_good,
    sign_in_server,
)

pytestmark = pytest.mark.anyio

ELSEWHERE = "This link was opened in another browser"
THEIRS = {**GOOD, "owner": "mallory-holdings", "api_key": "sk-mallory"}


# --- the secure form --------------------------------------------------------------------------------------


async def test_a_second_browser_can_neither_open_nor_answer_a_secure_form_the_person_opened(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as attacker:
        call, link, page = await scene.open()

        assert_refused(await attacker.get(link), 403, ELSEWHERE)
        # Even with the person's own page in hand (its hidden fields), the attacker's browser is not theirs.
        for action in ("accept", "decline", "cancel"):
            assert_refused(await press(attacker, link, page, action, THEIRS), 403, ELSEWHERE)
        assert_open(hitl, call, answers)

        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


async def test_a_form_link_someone_else_opened_first_is_theirs_and_the_person_is_refused(mode: str) -> None:
    """Without `page_identity` a link is a bearer link: it binds whoever opens it first."""
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as first:
        call = scene.call("fill_in")
        link = (await scene.links.next()).url
        opened = await open_form(first, link)

        assert_refused(await scene.browser.get(link), 403, ELSEWHERE)
        assert_refused(await press(scene.browser, link, opened, "decline"), 403, ELSEWHERE)
        assert_open(hitl, call, answers)

        await send_good(first, link, opened)
        assert text_of(await call.result()) == "Accepted"


class Login(BaseModel):
    user: str = Field(title="User")
    api_key: SecretStr = Field(title="API key")


async def test_in_chromium_a_second_browser_is_refused_the_form_the_person_opened_and_the_person_answers(
    mode: str, browser: Browser
) -> None:
    server = MCPServer("chromium-binding")
    hitl = Elicitation(server, timeout=20)
    received: list[Login] = []

    @server.tool()
    async def log_in(ctx: Context) -> str:
        result = await hitl.secure_form(ctx, "Log in to the registry", Login)
        if isinstance(result, Accepted):
            received.append(result.data)
        return result.action

    async with serving(hitl) as url:
        person, attacker = await new_context(browser), await new_context(browser)
        try:
            page, theirs = await person.new_page(), await attacker.new_page()

            async def people(link: str) -> None:
                await page.goto(link)
                await page.get_by_label("User").fill("ada")
                await page.get_by_label("API key").fill("sk-ada")

                refused = await theirs.goto(link)
                assert refused is not None
                assert refused.status == 403
                await expect(theirs.locator("h1")).to_have_text("This link cannot be used")
                await expect(theirs.get_by_text(ELSEWHERE)).to_be_visible()
                assert await theirs.locator("form").count() == 0
                assert hitl.pending_questions == 1

                await page.get_by_role("button", name="Submit").click()
                await expect(page.locator("h1")).to_have_text("Thank you")

            result = await call_with_link(url, mode, "log_in", people)
        finally:
            await person.close()
            await attacker.close()
    assert text_of(result) == "accept"
    [login] = received
    assert (login.user, login.api_key.get_secret_value()) == ("ada", "sk-ada")


# --- third-party flows --------------------------------------------------------------------------------------


async def go_link(scene: Scene) -> tuple[Any, str]:
    """Call `sign_in`; the call and the `/elicit/go/` link the client was handed."""
    call = scene.call("sign_in")
    link = (await scene.links.next()).url
    assert link.startswith(f"{scene.base}/elicit/go/")
    return call, link


async def through(browser: httpx.AsyncClient, go: str) -> str:
    """`browser` takes the go hop; the state it is sent to the provider with."""
    hop = await browser.get(go)
    assert hop.status_code == 303, hop.text
    return httpx.URL(hop.headers["location"]).params["state"]


async def test_a_leaked_go_link_opened_second_is_refused_and_the_person_finishes_the_flow(mode: str) -> None:
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as attacker:
        call, go = await go_link(scene)
        state = await through(scene.browser, go)

        assert_refused(await attacker.get(go), 403, ELSEWHERE)
        # The authorize URL leaked too: the attacker comes back with the person's state and a code of their own.
        forged = await attacker.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "ATTACKERS-OWN"})
        assert_refused(forged, 403, ELSEWHERE)
        assert_open(hitl, call, flows)

        assert (await scene.browser.get(go)).status_code == 303  # the person's own browser may take the hop again
        await come_back(scene, call, state, "the-persons-code")
    assert flows == [Accepted(data={"code": "the-persons-code"}, content={"code": "the-persons-code"})]


async def test_a_go_link_someone_else_opened_first_is_theirs_and_the_person_is_refused(mode: str) -> None:
    """Without `page_identity` a link is a bearer link: it binds whoever opens it first (see docs/urlmode.md)."""
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient() as first:
        call, go = await go_link(scene)
        state = await through(first, go)

        assert_refused(await scene.browser.get(go), 403, ELSEWHERE)
        back = await scene.browser.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "the-persons-code"})
        assert_refused(back, 403, ELSEWHERE)
        assert_open(hitl, call, flows)

        done = await first.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "first-browsers-code"})
        assert done.status_code == 200, done.text
        assert text_of(await call.result()) == "accept"
    assert flows == [Accepted(data={"code": "first-browsers-code"}, content={"code": "first-browsers-code"})]


async def header_identity(request: Request) -> str | None:
    return request.headers.get("x-test-user")  # stands in for a session cookie or SSO


async def test_with_page_identity_someone_else_cannot_bind_a_leaked_go_link_before_the_person(mode: str) -> None:
    server = MCPServer("sign-in")
    hitl = Elicitation(server, timeout=10, page_identity=header_identity)
    flows: list[Any] = []

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        flows.append(await hitl.url_flow(ctx, "Sign in", lambda cb, state: f"https://id.example.com/a?state={state}"))
        return str(flows[-1].action)

    async with asking(hitl, mode) as scene, httpx.AsyncClient(headers={"x-test-user": "mallory"}) as mallory:
        call, go = await go_link(scene)
        assert_refused(await mallory.get(go), 403, "This link was sent to someone else")
        assert_open(hitl, call, flows)

        # Unauthenticated here, the principal asked is None too: the person who was asked binds the link.
        state = await through(scene.browser, go)
        await come_back(scene, call, state, "the-persons-code")
    assert flows == [Accepted(data={"code": "the-persons-code"}, content={"code": "the-persons-code"})]


# --- across nodes ----------------------------------------------------------------------------------------

SECRET = "browser-binding-secret-0123456789abcdef0123456"


def node(tmp_path: Path, name: str, broker: SharedBroker, answers: list[Any]) -> Elicitation:
    """One of two nodes behind one address (one SQLite file, one secret, one broker), with the tool `fill_in`."""
    server = MCPServer("nodes")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    hitl = Elicitation(server, store=store, secret=SECRET, node_id=name, broker=broker, timeout=20)

    @server.tool()
    async def fill_in(ctx: Context) -> str:
        answers.append(await hitl.secure_form(ctx, "Your account details, please", Account))
        return type(answers[-1]).__name__

    return hitl


async def test_a_link_bound_on_one_node_is_refused_to_another_browser_on_every_node(tmp_path: Path) -> None:
    """On 2026-07-28, where a question is stored and any node serves its page (on 2025-11-25 a question asked on
    the client's own request lives on its node alone, and another node's page says it is gone)."""
    answers: list[Any] = []
    broker = SharedBroker()
    a, b = node(tmp_path, "a", broker, answers), node(tmp_path, "b", broker, answers)
    links = Links()
    async with (
        serving(a) as url,
        serving(b),
        Client(url, mode="auto", elicitation_callback=links) as client,
        httpx.AsyncClient() as person,
        httpx.AsyncClient() as attacker,
        anyio.create_task_group() as tg,
    ):
        call = Call(tg, client, "fill_in", {})
        link = (await links.next()).url
        on_b = link.replace(a.public_url or "", b.public_url or "")
        page = await open_form(person, link)

        assert_refused(await attacker.get(on_b), 403, ELSEWHERE)
        assert_refused(await press(attacker, on_b, page, "accept", THEIRS), 403, ELSEWHERE)
        assert_open(a, call, answers)

        await send_good(person, on_b)  # the person's own browser, on the other node
        assert text_of(await call.result()) == "Accepted"
    assert_accepted_account(answers)


# --- links a channel hands an approver ------------------------------------------------------------------


async def test_a_secure_link_a_channel_hands_an_approver_binds_the_first_browser_and_each_approver_apart(
    mode: str,
) -> None:
    server = MCPServer("desk")
    channel = RecordingChannel("discord")
    hitl = Elicitation(server, channels=[channel], timeout=20)

    @server.tool()
    async def log_in(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, "Registry login?", Login, via=Via("discord", "123"))
        return answer.data.user if isinstance(answer, Accepted) else answer.action

    async with (
        serving(hitl) as url,
        Client(url, mode=mode) as client,
        httpx.AsyncClient() as ada,
        httpx.AsyncClient() as grace,
        httpx.AsyncClient() as attacker,
        anyio.create_task_group() as tg,
    ):
        done: list[str] = []

        async def call() -> None:
            done.append(text_of(await client.call_tool("log_in", {})))

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        adas = (await channel.desk.secure_link(prompt.token, Responder("discord", "1", "Ada"))).message
        graces = (await channel.desk.secure_link(prompt.token, Responder("discord", "2", "Grace"))).message
        page = await open_form(ada, adas)

        assert_refused(await attacker.get(adas), 403, ELSEWHERE)
        assert_refused(await press(attacker, adas, page, "accept", {"user": "mallory", "api_key": "x"}), 403, ELSEWHERE)
        await open_form(grace, graces)  # Grace's own link binds apart: Ada opening hers took nothing from Grace
        assert_refused(await grace.get(adas), 403, ELSEWHERE)
        assert not done

        sent = await press(ada, adas, page, "accept", {"user": "ada", "api_key": "sk-ada"})
        assert sent.status_code == 200, sent.text
        [closing] = await channel.closings(1)
    assert done == ["ada"]
    assert closing.text.startswith("Answered by Ada")
