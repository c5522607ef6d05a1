"""elicitkit's pages on a fastmcp server's own HTTP app: a third-party flow (`url_flow`) and the web inbox, both eras.

The scenes are the SDK server's (tests/test_urlmode.py, tests/channels/test_web_inbox.py), with a `FastMCP`
server underneath: the pages are routes of fastmcp's own app, the questions go through the same engine.
"""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

pytest.importorskip("fastmcp")

from fastmcp import Context, FastMCP

from elicitkit import Accepted, Elicitation
from elicitkit._results import ElicitationResult
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from tests.channels.test_web_inbox import calling, header_identity, person
from tests.scenes import serving
from tests.test_urlmode import asking, assert_open, assert_refused, come_back, start_sign_in

pytestmark = pytest.mark.anyio


def sign_in_server() -> tuple[Elicitation, list[ElicitationResult[dict[str, str]]]]:
    server = FastMCP("sign-in")
    hitl = Elicitation(server, timeout=10)
    flows: list[ElicitationResult[dict[str, str]]] = []

    @server.tool
    async def sign_in(ctx: Context) -> str:
        def start(callback: str, state: str) -> str:
            return f"https://id.example.com/authorize?redirect_uri={quote(callback, safe='')}&state={state}"

        flows.append(await hitl.url_flow(ctx, "Sign in", start))
        return flows[-1].action

    return hitl, flows


async def test_a_third_party_flow_comes_back_to_a_fastmcp_tool_on_both_eras(mode: str) -> None:
    hitl, flows = sign_in_server()
    async with asking(hitl, mode, app=hitl.http_app()) as scene, httpx.AsyncClient() as attacker:
        call, state = await start_sign_in(scene)
        forged = await attacker.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "ATTACKERS-OWN"})
        assert_refused(forged, 403, "Open the link from the conversation again")
        assert_open(hitl, call, flows)
        await come_back(scene, call, state, "the-real-one")
    assert flows == [Accepted(data={"code": "the-real-one"}, content={"code": "the-real-one"})]


def inbox_server() -> Elicitation:
    server = FastMCP("inbox")
    hitl = Elicitation(server, channels=[WebInbox()], page_identity=header_identity, timeout=20)

    @server.tool
    async def ship(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Ship checkout?", via=web("alice"))
        return f"{answer.action} {getattr(answer, 'data', None)}"

    return hitl


async def test_a_fastmcp_tool_asks_in_alices_web_inbox_and_her_answer_resumes_it(mode: str) -> None:
    hitl = inbox_server()
    async with serving(hitl) as url, person(url, "alice") as alice, alice.events() as events:
        async with calling(url, mode) as call:
            question = await alice.arrival(events, "Ship checkout?")
            answered = await alice.answer(question, value="true")
            assert answered.status_code == 200
            assert await call.text() == "accept True"
        assert await alice.questions() == []
    assert hitl.pending_questions == 0


async def test_bob_cannot_answer_alices_question_on_a_fastmcp_server(mode: str) -> None:
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
        refused = await bob.answer(question, csrf=bob.http.cookies["ek_inbox"], value="false")
        assert refused.status_code == 403
        assert "Sorry bob, you are not one of the approvers of this question." in refused.text
        assert hitl.pending_questions == 1
        await alice.answer(question, action="decline")
        assert await call.text() == "decline None"
