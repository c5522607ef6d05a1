"""The web inbox over real HTTP, both eras: a tool asks `via=web("alice")`, alice answers on elicitkit's page.

The server is served with uvicorn (`tests.scenes.serving`); the MCP client
calls the tool over streamable HTTP; "alice" and "bob" are httpx clients whose
`X-Test-User` header is what the server's `page_identity` reads. The tests wait
on the inbox's own event stream (Server-Sent Events), never on a sleep.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlencode

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request

from elicitkit import Accepted, Elicitation, ElicitationNotSupported
from elicitkit._web.inbox_page import InboxPages, question_view, unrenderable
from elicitkit.channels import WebInbox
from elicitkit.channels.base import Prompt, Via, web
from elicitkit.stores import MemoryBroker, MemoryStore
from elicitkit.testing import serve_app
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio

USER = "X-Test-User"
SECRET = "web-inbox-test-secret-0123456789abcdef0123456789"


async def header_identity(request: Request) -> str | None:
    return request.headers.get(USER)


class Release(BaseModel):
    service: str = Field(title="Service", min_length=2, max_length=40)
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    region: Literal["eu", "us"] = Field(title="Region")
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks", min_length=1)
    canary: bool = Field(default=True, title="Canary first")


def inbox_server(**options: Any) -> Elicitation:
    """`ship` asks alice to confirm, then for the release's details, both in her web inbox."""
    server = MCPServer("inbox")
    options = {"channels": [WebInbox()], "page_identity": header_identity, "timeout": 20} | options
    hitl = Elicitation(server, **options)

    @server.tool()
    async def ship(ctx: Context) -> str:
        first = await hitl.confirm(ctx, "Ship checkout?", via=web("alice"))
        if not isinstance(first, Accepted):
            return f"first: {first.action}"
        if not first.data:
            return "not shipped"
        second = await hitl.elicit(ctx, "Release details", Release, via=web("alice"))
        if not isinstance(second, Accepted):
            return f"second: {second.action}"
        return second.data.model_dump_json()

    return hitl


# --- alice and bob, in their browsers ---------------------------------------------------------------------

_SECTION = re.compile(
    r'<section class="question" id="(?P<id>[^"]+)".*?<h2[^>]*>(?P<message>.*?)</h2>'
    r'.*?name="ek:csrf" value="(?P<csrf>[^"]*)".*?name="ek:token" value="(?P<token>[^"]*)"',
    re.S,
)


@dataclass(frozen=True)
class Listed:
    id: str
    message: str
    csrf: str
    token: str


def listed(page: str) -> list[Listed]:
    return [
        Listed(m["id"], html.unescape(m["message"]), html.unescape(m["csrf"]), html.unescape(m["token"]))
        for m in _SECTION.finditer(page)
    ]


class Events:
    """An inbox's event stream, read event by event."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self, *, comments: bool = False) -> str:
        """The next event's name (`keepalive` for a comment, when `comments`)."""
        with anyio.fail_after(5):
            name: str | None = None
            comment = False
            async for line in self._lines:
                if line.startswith("event:"):
                    name = line.removeprefix("event:").strip()
                elif line.startswith(":"):
                    comment = True
                elif line == "":
                    if name is not None:
                        return name
                    if comment and comments:
                        return "keepalive"
                    comment = False
        raise AssertionError("the event stream ended")


class Person:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def questions(self) -> list[Listed]:
        response = await self.http.get("/elicit/inbox", params={"part": "list"})
        assert response.status_code == 200, response.text
        return listed(response.text)

    async def arrival(self, events: Events, message: str) -> Listed:
        """Wait, on the event stream, until a question saying `message` is in the inbox."""
        while True:
            for question in await self.questions():
                if question.message == message:
                    return question
            await events.next()

    async def answer(
        self, question: Listed, action: str = "accept", csrf: str | None = None, **fields: str | list[str]
    ) -> httpx.Response:
        form = {"ek:csrf": question.csrf if csrf is None else csrf, "ek:token": question.token, "ek:action": action}
        return await self.http.post("/elicit/inbox/answer", data=form | fields)

    @asynccontextmanager
    async def events(self) -> AsyncIterator[Events]:
        async with self.http.stream("GET", "/elicit/inbox/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            events = Events(response)
            assert await events.next() == "ready"  # listening from here on
            yield events


@asynccontextmanager
async def person(mcp_url: str, who: str | None) -> AsyncIterator[Person]:
    headers = {USER: who} if who is not None else {}
    async with httpx.AsyncClient(base_url=mcp_url.removesuffix("/mcp"), headers=headers) as http:
        yield Person(http)


class Call:
    def __init__(self) -> None:
        self.result: CallToolResult | None = None
        self.done = anyio.Event()

    async def outcome(self) -> CallToolResult:
        with anyio.fail_after(5):
            await self.done.wait()
        assert self.result is not None
        return self.result

    async def text(self) -> str:
        result = await self.outcome()
        assert not result.is_error, result
        return text_of(result)


@asynccontextmanager
async def calling(url: str, mode: str, tool: str = "ship", **arguments: Any) -> AsyncIterator[Call]:
    """Call `tool` over streamable HTTP in the background."""
    call = Call()
    async with Client(url, mode=mode) as client, anyio.create_task_group() as tg:

        async def run() -> None:
            call.result = await client.call_tool(tool, arguments)
            call.done.set()

        tg.start_soon(run)
        try:
            yield call
        finally:
            tg.cancel_scope.cancel()


DETAILS = {"service": "checkout", "replicas": "8", "region": "us", "checks": ["lint", "e2e"], "canary": "false"}


# --- the flow ----------------------------------------------------------------------------------------------


async def test_a_tool_asks_twice_in_alices_inbox_and_her_answers_on_the_page_resume_it(mode: str) -> None:
    hitl = inbox_server()
    async with serving(hitl) as url, person(url, "alice") as alice, alice.events() as events:
        page = await alice.http.get("/elicit/inbox")
        assert page.status_code == 200
        assert "No open questions." in page.text
        assert "/elicit/static/inbox.js" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        async with calling(url, mode) as call:
            first = await alice.arrival(events, "Ship checkout?")
            page = await alice.http.get("/elicit/inbox")
            assert "Asked by the tool <code>ship</code>" in page.text
            assert "Your questions (1)" in page.text

            answered = await alice.answer(first, value="true")
            assert answered.status_code == 200
            assert "Thanks, your answer was recorded." in answered.text
            assert "Ship checkout?" not in answered.text

            second = await alice.arrival(events, "Release details")
            assert [q.message for q in await alice.questions()] == ["Release details"]
            assert (await alice.answer(second, **DETAILS)).status_code == 200
            assert Release.model_validate_json(await call.text()) == Release(
                service="checkout", replicas=8, region="us", checks=["lint", "e2e"], canary=False
            )
        assert await events.next() == "changed"  # the second question left the inbox
        assert await alice.questions() == []
    assert hitl.pending_questions == 0


async def test_declining_in_the_inbox_returns_declined_to_the_tool(mode: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        first = await alice.arrival(events, "Ship checkout?")
        declined = await alice.answer(first, "decline")
        assert declined.status_code == 200
        assert await call.text() == "first: decline"


async def test_declining_in_the_inbox_with_a_reason_hands_it_to_the_elicit_tool(mode: str) -> None:
    hitl = inbox_server()
    hitl.install_elicit_tool({"web": web("alice")})
    schema = {"type": "object", "properties": {"seats": {"type": "integer"}}, "required": ["seats"]}
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode, "elicit", message="How many seats?", schema=schema) as call,
    ):
        question = await alice.arrival(events, "How many seats?")
        page = (await alice.http.get("/elicit/inbox")).text
        assert f'<label for="{question.id}-ek:reason">Reason for declining' in page
        assert f'name="ek:reason" maxlength="1000" rows="2" aria-describedby="{question.id}-ek:reason-hint"' in page
        declined = await alice.answer(question, "decline", **{"ek:reason": "Ask <b>Bob</b>"})
        assert declined.status_code == 200
        result = await call.outcome()
    assert result.is_error
    assert text_of(result) == "User declined: Ask <b>Bob</b>"


async def test_another_principal_neither_sees_nor_answers_alices_question_which_stays_open(mode: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        person(url, "bob") as bob,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        assert await bob.questions() == []
        bobs_own = bob.http.cookies["ek_inbox"]  # bob's own, valid CSRF value: only the desk stands in his way

        refused = await bob.answer(question, csrf=bobs_own, value="true")
        assert refused.status_code == 403
        assert "Sorry bob, you are not one of the approvers of this question." in refused.text
        assert "Ship checkout?" not in refused.text
        assert [q.message for q in await alice.questions()] == ["Ship checkout?"]
        assert hitl.pending_questions == 1

        assert (await alice.answer(question, value="false")).status_code == 200
        assert await call.text() == "not shipped"


async def test_an_answer_without_the_csrf_cookie_or_with_a_forged_or_foreign_one_is_refused(mode: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        person(url, "alice") as cookieless,
        person(url, "bob") as bob,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        # A page elsewhere that makes alice's browser post, without her cookie:
        no_cookie = await cookieless.answer(question, value="true")
        # ...with her cookie but a field it made up:
        forged = await alice.answer(question, csrf=question.csrf[:-4] + "AAAA", value="true")
        # ...and alice's own pair, replayed by bob's session:
        await bob.questions()
        bob.http.cookies.set("ek_inbox", question.csrf, path="/elicit/")
        foreign = await bob.answer(question, csrf=question.csrf, value="true")
        for response in (no_cookie, forged, foreign):
            assert response.status_code == 403
            assert "This form was not sent from your inbox." in response.text
        assert [q.message for q in await alice.questions()] == ["Ship checkout?"]
        assert not call.done.is_set()

        assert (await alice.answer(question, value="false")).status_code == 200
        assert await call.text() == "not shipped"


async def test_an_invalid_answer_comes_back_with_the_problems_by_the_fields_and_the_question_stays_open(
    mode: str,
) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        await alice.answer(await alice.arrival(events, "Ship checkout?"), value="true")
        details = await alice.arrival(events, "Release details")

        invalid = await alice.answer(details, **(DETAILS | {"service": "x", "replicas": "500"}))
        assert invalid.status_code == 422
        assert "<title>Error: Your questions (1)</title>" in invalid.text
        assert "Your answer to “Release details” was not sent." in invalid.text
        # The error summary links to each field; each field says what to do, in words written from its schema.
        scope = details.id
        assert f'<a href="#{scope}-service">Service must be between 2 and 40 characters</a>' in invalid.text
        assert f'<a href="#{scope}-replicas">Replicas must be between 1 and 64</a>' in invalid.text
        section = invalid.text.split(f'id="{scope}"', 1)[1]
        for name, message in (("service", "Service must be between 2"), ("replicas", "Replicas must be between 1")):
            assert f'<p class="error-message" id="{scope}-{name}-error">' in section
            control = section.split(f'<input id="{scope}-{name}"', 1)[1].split(">", 1)[0]
            assert f'aria-describedby="{scope}-{name}-error" aria-invalid="true"' in control
            assert message in section
        replicas = section.split(f'<input id="{scope}-replicas"', 1)[1].split(">", 1)[0]
        assert 'value="500"' in replicas  # the entry comes back for fixing
        assert [q.message for q in await alice.questions()] == ["Release details"]

        assert (await alice.answer(details, **DETAILS)).status_code == 200
        assert '"replicas":8' in await call.text()


async def test_an_answer_to_a_closed_question_is_refused_with_a_message(mode: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        assert (await alice.answer(question, value="false")).status_code == 200
        assert await call.text() == "not shipped"
        again = await alice.answer(question, value="true")  # the same post, replayed
        assert again.status_code == 410
        assert "This question is closed" in again.text
        forged = await alice.answer(replace(question, token=question.token[:-6] + "AAAAAA"), value="true")
        assert forged.status_code == 410


# --- the event stream and the index ------------------------------------------------------------------------


async def test_the_event_stream_announces_each_question_that_arrives_in_or_leaves_the_inbox(mode: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        assert await events.next() == "changed"  # the question arrived
        [question] = await alice.questions()
        await alice.answer(question, "decline")
        assert await events.next() == "changed"  # ...and left
        assert await call.text() == "first: decline"


async def test_the_event_stream_sends_a_keepalive_comment_when_nothing_happens() -> None:
    inbox = WebInbox()
    Elicitation(MCPServer("k"), channels=[inbox], page_identity=header_identity)
    pages = InboxPages(inbox, inbox.desk, lambda: "", keepalive=0.05)
    async with (
        serve_app(Starlette(routes=pages.routes())) as base,
        person(f"{base}/mcp", "alice") as alice,
        alice.events() as events,
    ):
        assert await events.next(comments=True) == "keepalive"
        assert await events.next(comments=True) == "keepalive"
        head = await alice.http.head("/elicit/inbox/events")  # answered at once, not held open
        assert (head.status_code, head.headers["content-type"]) == (200, "text/event-stream; charset=utf-8")


async def test_the_index_is_sealed_in_the_store_and_another_node_sharing_it_lists_the_question(mode: str) -> None:
    store, broker = MemoryStore(), MemoryBroker()
    asking = inbox_server(store=store, broker=broker, secret=SECRET)
    other = Elicitation(
        MCPServer("other"),
        store=store,
        broker=broker,
        secret=SECRET,
        channels=[WebInbox()],
        page_identity=header_identity,
    )
    async with (
        serving(asking) as url,
        serving(other) as other_url,
        person(url, "alice") as alice,
        person(other_url, "alice") as alice_elsewhere,
        alice_elsewhere.events() as events,  # listening on the other node
        calling(url, mode) as call,
    ):
        question = await alice_elsewhere.arrival(events, "Ship checkout?")
        digest = hashlib.sha256(b"alice").hexdigest()
        stored = await store.inbox_entries(digest)  # the inbox is named by a digest: the principal is not stored
        assert list(stored) == [question.id.removeprefix("q-")]
        [record] = stored.values()
        for clear in (b"alice", b"Ship checkout", question.token.encode()):
            assert clear not in record

        [here] = await alice.questions()  # the same question on the node that asked it (with that node's CSRF)
        assert (here.id, here.token) == (question.id, question.token)
        assert (await alice.answer(here, value="false")).status_code == 200
        assert await call.text() == "not shipped"
        assert await events.next() == "changed"
        assert await alice_elsewhere.questions() == []


# --- who may open the inbox --------------------------------------------------------------------------------


async def test_the_inbox_asks_to_sign_in_and_says_how_to_turn_it_on() -> None:
    hitl = inbox_server()
    off = Elicitation(MCPServer("off"), channels=[WebInbox()])
    async with (
        serving(hitl) as url,
        serving(off) as off_url,
        person(url, None) as nobody,
    ):
        for path in ("/elicit/inbox", "/elicit/inbox/events"):
            response = await nobody.http.get(path)
            assert response.status_code == 401
            assert "Sign in" in response.text
        assert (await nobody.http.post("/elicit/inbox/answer", data={"ek:action": "decline"})).status_code == 401
        async with person(off_url, "alice") as alice:
            response = await alice.http.get("/elicit/inbox")
            assert response.status_code == 404
            assert "Elicitation(server, page_identity=...)" in response.text
            js = await alice.http.get("/elicit/static/inbox.js")
        assert js.headers["content-type"].startswith("text/javascript")
        assert "EventSource" in js.text


async def test_without_page_identity_a_question_for_the_inbox_fails_clearly(mode: str) -> None:
    server = MCPServer("off")
    hitl = Elicitation(server, channels=[WebInbox()], timeout=5)

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Anyone?", via=web("alice"))
        except ElicitationNotSupported as exc:
            return str(exc)
        return "asked"

    async with serving(hitl) as url, calling(url, mode, "ask") as call:
        assert "page_identity" in await call.text()


# --- every field type --------------------------------------------------------------------------------------

EVERY_TYPE = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "title": "OK"},
        "name": {"type": "string", "minLength": 2, "maxLength": 9},
        "mail": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "count": {"type": "integer", "minimum": 1},
        "env": {"type": "string", "enum": ["dev", "prod"]},
        "zone": {"type": "string", "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "USA"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "teams": {
            "type": "array",
            "items": {"anyOf": [{"const": "x", "title": "Team X"}, {"const": "y", "title": "Y"}]},
        },
    },
    "required": ["name"],
}


async def test_every_field_type_renders_as_a_control_and_its_answer_reaches_the_tool_typed(mode: str) -> None:
    server = MCPServer("types")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=20)

    @server.tool()
    async def ask(ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit(ctx, "Every type", EVERY_TYPE, via=web("alice"))
        assert isinstance(result, Accepted)
        return dict(result.data)

    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode, "ask") as call,
    ):
        question = await alice.arrival(events, "Every type")
        page = (await alice.http.get("/elicit/inbox")).text
        scope = question.id
        # A yes/no without a default is two radios, neither chosen; short choices are radios, none chosen.
        assert f'<input type="radio" id="{scope}-ok" name="ok" value="true">' in page
        assert f'<input type="radio" id="{scope}-ok-2" name="ok" value="false">' in page
        assert f'<input type="radio" id="{scope}-ok-3" name="ok" value="" checked>' in page  # "No answer"
        for name, control in {
            "name": 'type="text"',
            "mail": 'type="email"',
            "site": 'type="url"',
            "day": 'type="date"',
            "at": 'type="datetime-local"',
            "ratio": 'type="number"',
            "count": 'type="number"',
        }.items():
            assert re.search(f'<input id="{scope}-{name}" name="{name}"[^>]*{control}', page), name
        assert f'<input type="radio" id="{scope}-env" name="env" value="dev">' in page
        assert f'<label for="{scope}-zone-2">USA</label>' in page
        assert f'<label for="{scope}-name">name</label>' in page  # required: no mark
        assert f'<label for="{scope}-mail">mail <span class="optional">(optional)</span></label>' in page
        assert len(re.findall(f'type="checkbox" id="{scope}-tags(-2)?" name="tags"', page)) == 2
        assert "Team X" in page
        answer = {
            "ok": "true",
            "name": "Ada",
            "mail": "ada@example.com",
            "site": "https://example.com",
            "day": "2026-01-02",
            "at": "2026-01-02T03:04",
            "ratio": "0.5",
            "count": "7",
            "env": "prod",
            "zone": "eu",
            "tags": ["a", "b"],
            "teams": ["y"],
        }
        assert (await alice.answer(question, **answer)).status_code == 200
        result = await call.outcome()
    assert result.structured_content is not None
    assert result.structured_content | {"at": None} == {
        "ok": True,
        "name": "Ada",
        "mail": "ada@example.com",
        "site": "https://example.com",
        "day": "2026-01-02",
        "at": None,
        "ratio": 0.5,
        "count": 7,
        "env": "prod",
        "zone": "eu",
        "tags": ["a", "b"],
        "teams": ["y"],
    }
    assert str(result.structured_content["at"]).startswith("2026-01-02T03:04")


def test_secret_fields_are_password_inputs_never_prefilled_and_field_ids_are_unique_per_question() -> None:
    prompt = Prompt(
        id="Q1",
        token="t",
        message="Deploy key?",
        schema={"type": "object", "properties": {"key": {"type": "string", "default": "leak"}, "note": {}}},
        target="alice",
        expires_at=4_000_000_000,
        tool="deploy",
        secret_fields=("key",),
    )
    view = question_view(prompt, values={"key": "typed", "note": "n"}, now=4_000_000_000 - 300)
    assert '<input id="q-Q1-key" name="key" type="password" autocomplete="off">' in view.fields
    assert "leak" not in view.fields
    assert "typed" not in view.fields
    assert '<input id="q-Q1-note" name="note" type="text" value="n">' in view.fields
    assert view.expires_text == "expires at 07:06 UTC (in 5 minutes)"


def test_a_field_without_a_control_is_refused_with_its_name_and_why() -> None:
    assert unrenderable(EVERY_TYPE) is None
    free_list = {"properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    assert unrenderable(free_list) == (
        "field 'tags' is a list without choices; only multi-selects of fixed options have a control"
    )
    nested = {"properties": {"owner": {"type": "object"}}}
    assert unrenderable(nested) == "field 'owner' has type 'object', which has no form control"


async def test_fields_named_like_the_pages_own_inputs_are_answered_as_fields_in_an_inbox_of_another_name(
    mode: str,
) -> None:
    server = MCPServer("odd-names")
    hitl = Elicitation(server, channels=[WebInbox(name="inbox")], page_identity=header_identity, timeout=20)
    odd = {"type": "object", "properties": {"_token": {"type": "string"}, "_action": {"type": "string"}}}

    @server.tool()
    async def ship(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Odd names?", odd, via=Via("inbox", "alice"))
        return json.dumps(answer.content if isinstance(answer, Accepted) else answer.action)

    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode) as call,
    ):
        question = await alice.arrival(events, "Odd names?")
        # The page's own inputs are named under "ek:", which no field can take: these fields are only fields.
        form = [("ek:csrf", question.csrf), ("ek:token", question.token), ("_token", "typed token")]
        form += [("_action", "typed action"), ("ek:action", "accept")]
        body = urlencode(form)
        headers = {"content-type": "application/x-www-form-urlencoded"}
        answered = await alice.http.post("/elicit/inbox/answer", content=body, headers=headers)
        assert answered.status_code == 200, answered.text
        assert json.loads(await call.text()) == {"_token": "typed token", "_action": "typed action"}
