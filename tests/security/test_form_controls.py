"""A question's fields cannot pose as the page's own controls (issue 24), over real HTTP, both eras.

The attack: an agent asks through the `elicit` tool with a schema of its own
making, one property named `_action` (a select whose default is "accept").
The person presses Decline; the browser posts the field's `_action=accept`
before the button's `_action=decline`, and the page read the first: the agent
was told "User provided". The page's controls now live under `ek:`, which no
schema property may take (raw schemas and Python types alike are refused when
asked), and a post that repeats one of them is refused whole.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult
from playwright.async_api import Browser, expect
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from elicitkit import Accepted, Elicitation, SchemaError
from elicitkit._schema import compile_schema
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from tests.channels.test_web_inbox import USER, calling, header_identity, person
from tests.scenes import serving, text_of
from tests.security.people import call_with_link, new_context, posts_of
from tests.test_urlmode import asking, assert_open, open_form

pytestmark = pytest.mark.anyio

# The agent's trap: a field named as the page's button once was, whose default is the accept the person did not give.
TRAP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "_action": {"type": "string", "enum": ["accept", "decline", "cancel"], "default": "accept"},
        "note": {"type": "string", "title": "Note"},
    },
}


def agent_desk() -> Elicitation:
    """A server whose `elicit` tool asks alice in her web inbox, as an agent chooses."""
    server = MCPServer("agent-desk")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=20)
    hitl.install_elicit_tool({"web": web("alice")})
    return hitl


def form_desk(schema: Any = TRAP) -> tuple[Elicitation, list[str]]:
    """A server whose tool `fill_in` asks with `schema` on elicitkit's secure form; what the tool got."""
    server = MCPServer("form-desk")
    hitl = Elicitation(server, timeout=20)
    got: list[str] = []

    @server.tool()
    async def fill_in(ctx: Context) -> str:
        try:
            result = await hitl.secure_form(ctx, "Anything to add?", schema)
        except SchemaError as exc:
            return f"refused: {exc}"
        got.append(f"{result.action} {json.dumps(result.content if isinstance(result, Accepted) else None)}")
        return got[-1]

    return hitl, got


async def test_decline_in_the_web_inbox_stays_a_decline_when_the_agent_names_a_field_like_the_button(
    mode: str, browser: Browser
) -> None:
    hitl = agent_desk()
    async with serving(hitl) as url:
        context = await new_context(browser, extra_http_headers={USER: "alice"})
        try:
            page = await context.new_page()
            posted = posts_of(page)
            await page.goto(f"{url.removesuffix('/mcp')}/elicit/inbox")
            async with calling(url, mode, "elicit", message="Ship checkout?", schema=TRAP) as call:
                await expect(page.get_by_role("heading", name="Ship checkout?")).to_be_visible()
                await page.get_by_role("button", name="Decline").click()
                await expect(page.get_by_role("status")).to_be_visible()
                result = await call.outcome()
        finally:
            await context.close()
    assert text_of(result) == "User declined: the user declined"
    assert result.structured_content == {"action": "decline", "reason": "the user declined"}
    # The trap was posted as it was set, and read as the field it is.
    [form] = posted
    assert form["_action"] == ["accept"]
    assert form["ek:action"] == ["decline"]


@pytest.mark.parametrize("button", ["Decline", "Cancel"])
async def test_decline_and_cancel_on_the_secure_form_stay_themselves_when_a_field_is_named_like_the_button(
    mode: str, browser: Browser, button: str
) -> None:
    hitl, got = form_desk()

    async def presses(link: str) -> None:
        await page.goto(link)
        await expect(page.get_by_role("radio", name="accept")).to_be_checked()  # the trap, pre-chosen (a default)
        await page.get_by_role("button", name=button).click()
        await expect(page.locator("h1")).to_have_text("Done")

    async with serving(hitl) as url:
        context = await new_context(browser)
        try:
            page = await context.new_page()
            posted = posts_of(page)
            result = await call_with_link(url, mode, "fill_in", presses)
        finally:
            await context.close()
    outcome = {"Decline": "decline", "Cancel": "cancel"}[button]
    assert text_of(result) == f"{outcome} null"
    assert got == [f"{outcome} null"]
    [form] = posted
    assert (form["_action"], form["ek:action"]) == (["accept"], [outcome])


class ActionModel(BaseModel):
    action: str = Field(alias="ek:action")


TokenDict = TypedDict("TokenDict", {"ek:token": str})

RESERVED: dict[str, Any] = {
    "a raw schema": {"type": "object", "properties": {"ek:action": {"type": "string"}}},
    "a pydantic model (by alias)": ActionModel,
    "a TypedDict": TokenDict,
}


@pytest.mark.parametrize("kind", list(RESERVED))
def test_a_field_named_under_the_pages_control_prefix_is_refused_by_the_schema_compiler(kind: str) -> None:
    with pytest.raises(SchemaError, match="reserved for the controls of elicitkit's pages"):
        compile_schema(RESERVED[kind], secrets=True)


@pytest.mark.parametrize("kind", list(RESERVED))
async def test_a_secure_form_asked_with_a_field_under_the_control_prefix_fails_before_any_link_is_handed_out(
    mode: str, kind: str
) -> None:
    hitl, got = form_desk(RESERVED[kind])
    handed: list[str] = []

    async def client_side(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        handed.append(params.message)
        return ElicitResult(action="accept")

    async with serving(hitl) as url, Client(url, mode=mode, elicitation_callback=client_side) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("fill_in", {})
    assert not result.is_error, text_of(result)
    assert text_of(result).startswith("refused: ")
    assert "names starting with 'ek:' are reserved for the controls of elicitkit's pages" in text_of(result)
    assert (handed, got) == ([], [])


async def test_the_elicit_tool_refuses_a_schema_with_a_field_under_the_control_prefix_and_asks_nobody(
    mode: str,
) -> None:
    hitl = agent_desk()
    schema = {"type": "object", "properties": {"ek:csrf": {"type": "string"}, "ok": {"type": "boolean"}}}
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        calling(url, mode, "elicit", message="Sneaky?", schema=schema) as call,
    ):
        result = await call.outcome()
        assert await alice.questions() == []
    assert result.is_error
    assert text_of(result) == (
        "The schema cannot be shown as a form: Raw schema property 'ek:csrf': names starting with 'ek:' are "
        "reserved for the controls of elicitkit's pages; rename the field"
    )


REPEATS = {
    "the button twice": [("ek:action", "decline"), ("ek:action", "accept")],
    "the csrf value twice": [("ek:action", "decline"), ("ek:csrf", "")],
}


@pytest.mark.parametrize("repeat", list(REPEATS))
async def test_a_secure_form_post_that_repeats_a_page_control_is_refused_and_nothing_is_taken(
    mode: str, repeat: str
) -> None:
    hitl, got = form_desk()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        form = [("ek:csrf", page.csrf), ("note", "hi"), *REPEATS[repeat]]
        refused = await scene.browser.post(link, content=_encoded(form), headers=_FORM)
        assert refused.status_code == 400, refused.text
        assert "a control came twice" in refused.text
        assert "<form" not in refused.text
        assert_open(hitl, call, got)

        page = await open_form(scene.browser, link)
        once = [("ek:csrf", page.csrf), ("_action", "accept"), ("note", "hi"), ("ek:action", "decline")]
        done = await scene.browser.post(link, content=_encoded(once), headers=_FORM)
        assert done.status_code == 200, done.text
        assert text_of(await call.result()) == "decline null"


@pytest.mark.parametrize("repeat", ["ek:action", "ek:token", "ek:csrf"])
async def test_an_inbox_post_that_repeats_a_page_control_is_refused_and_nothing_is_taken(
    mode: str, repeat: str
) -> None:
    hitl = agent_desk()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode, "elicit", message="Ship checkout?", schema=TRAP) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        controls = {"ek:csrf": question.csrf, "ek:token": question.token, "ek:action": "decline"}
        form = [
            *controls.items(),
            ("_action", "accept"),
            (repeat, controls[repeat] if repeat != "ek:action" else "accept"),
        ]
        refused = await alice.http.post("/elicit/inbox/answer", content=_encoded(form), headers=_FORM)
        assert refused.status_code == 400, refused.text
        assert "a control came twice" in refused.text
        assert [q.message for q in await alice.questions()] == ["Ship checkout?"]
        assert not call.done.is_set()

        once = [*controls.items(), ("_action", "accept")]
        answered = await alice.http.post("/elicit/inbox/answer", content=_encoded(once), headers=_FORM)
        assert answered.status_code == 200, answered.text
        assert text_of(await call.outcome()) == "User declined: the user declined"


_FORM = {"content-type": "application/x-www-form-urlencoded"}


def _encoded(form: list[tuple[str, str]]) -> str:
    """A form body in exactly this order, repeats included."""
    return urlencode(form)
