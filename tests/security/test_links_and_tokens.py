"""Forged, tampered, expired and replayed links and tokens: page links, callback `state`, channel tokens.

Every token elicitkit hands out is sealed (AES-256-GCM), names one question, one principal and one purpose,
expires with the question and works once. Each attack below gets a clear refusal, resumes nothing, and
leaves the genuine token working.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests.channels.test_slack import ALICE, calling, desk
from tests.channels.test_web_inbox import calling as calling_inbox
from tests.channels.test_web_inbox import inbox_server, person
from tests.scenes import reached, serving, text_of, watched_server
from tests.test_urlmode import (
    Account,
    asking,
    assert_link_refused,
    assert_open,
    assert_refused,
    come_back,
    form_server,
    send_good,
    sign_in_server,
)

pytestmark = pytest.mark.anyio


def altered(token: str) -> str:
    """`token` with one character in the middle changed: what someone editing a link by hand sends."""
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


def forged(token: str) -> str:
    """Random bytes of the same length: what someone guessing a link sends."""
    return secrets.token_urlsafe(len(token) * 3 // 4)


BAD: dict[str, Callable[[str], str]] = {"forged": forged, "altered": altered}
QUICK = (
    1.5  # seconds a question lasts when a test waits for it to expire: long enough to open it, even on a busy machine
)
EXPIRED = f"Error executing tool ship: No answer to the elicitation within {QUICK:g} seconds"


# --- page links ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", list(BAD))
async def test_a_forged_or_altered_page_link_is_refused_and_the_real_one_still_answers(mode: str, attack: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        bad = f"{scene.base}/elicit/f/{BAD[attack](link.rsplit('/', 1)[1])}"
        await assert_link_refused(scene, bad, page, 400, "This link is not valid")
        assert_open(hitl, call, answers)
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"


async def test_an_expired_page_link_is_refused(mode: str) -> None:
    watched = watched_server(lambda hitl, ctx: hitl.secure_form(ctx, "Key?", Account, timeout=QUICK), timeout=10)
    async with asking(watched.hitl, mode) as scene:
        call, link, page = await scene.open("ask")
        await reached(watched.timed_out)
        await assert_link_refused(scene, link, page, 400, "This link has expired")
        assert text_of(await call.result()) == f"timed out after {QUICK:g}"


async def test_a_replayed_page_link_is_refused_and_the_tool_resumed_once(mode: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open()
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
        await assert_link_refused(scene, link, page, 410, "This question was already answered")
    assert len(answers) == 1


# --- callback state (third-party flows) ---------------------------------------------------------------------


@pytest.mark.parametrize("attack", [*BAD, "go-link"])
async def test_a_forged_altered_or_other_purpose_callback_state_is_refused_and_resumes_nothing(
    mode: str, attack: str
) -> None:
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene:
        call = scene.call("sign_in")
        go_link = (await scene.links.next()).url
        went = await scene.browser.get(go_link)  # binds this browser, as the person's would be
        [state] = parse_qs(urlsplit(went.headers["location"]).query)["state"]
        bad = go_link.rsplit("/", 1)[1] if attack == "go-link" else BAD[attack](state)
        back = await scene.browser.get(f"{scene.base}/elicit/cb", params={"state": bad, "code": "ATTACKER"})
        assert_refused(back, 400, "This link is not valid")
        assert_open(hitl, call, flows)
        await come_back(scene, call, state, "genuine")
    assert [f.content for f in flows] == [{"code": "genuine"}]


async def test_a_replayed_callback_is_refused_and_the_tool_resumed_once(mode: str) -> None:
    hitl, flows = sign_in_server()
    async with asking(hitl, mode) as scene:
        call = scene.call("sign_in")
        went = await scene.browser.get((await scene.links.next()).url)
        [state] = parse_qs(urlsplit(went.headers["location"]).query)["state"]
        await come_back(scene, call, state, "first")
        again = await scene.browser.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "second"})
        assert_refused(again, 410, "This link was already used")
    assert [f.content for f in flows] == [{"code": "first"}]


async def test_an_expired_callback_state_is_refused(mode: str) -> None:
    def start(callback: str, state: str) -> str:
        return f"https://id.example.com/authorize?redirect_uri={quote(callback, safe='')}&state={state}"

    watched = watched_server(lambda hitl, ctx: hitl.url_flow(ctx, "Sign in", start, timeout=QUICK), timeout=10)
    async with asking(watched.hitl, mode) as scene:
        call = scene.call("ask")
        went = await scene.browser.get((await scene.links.next()).url)
        [state] = parse_qs(urlsplit(went.headers["location"]).query)["state"]
        await reached(watched.timed_out)
        late = await scene.browser.get(f"{scene.base}/elicit/cb", params={"state": state, "code": "late"})
        assert_refused(late, 400, "This link has expired")
        assert text_of(await call.result()) == f"timed out after {QUICK:g}"


# --- channel tokens --------------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", list(BAD))
async def test_an_inbox_answer_carrying_a_forged_or_altered_token_is_refused_and_answers_nothing(
    mode: str, attack: str
) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling_inbox(url, mode) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        bad = dataclasses.replace(question, token=BAD[attack](question.token))
        refused = await alice.answer(bad, value="true")
        assert refused.status_code == 410
        assert "This question is closed" in refused.text
        assert [q.message for q in await alice.questions()] == ["Ship checkout?"]
        assert (await alice.answer(question, value="false")).status_code == 200
        assert await call.text() == "not shipped"


@pytest.mark.parametrize("attack", ["replayed", "expired"])
async def test_an_inbox_answer_replayed_or_sent_after_the_question_expired_is_refused(mode: str, attack: str) -> None:
    hitl = inbox_server(timeout=QUICK if attack == "expired" else 20)
    async with serving(hitl) as url, person(url, "alice") as alice, alice.events() as events:
        async with calling_inbox(url, mode) as call:
            question = await alice.arrival(events, "Ship checkout?")
            if attack == "replayed":
                assert (await alice.answer(question, value="false")).status_code == 200
            result = await call.outcome()
        assert text_of(result) == ("not shipped" if attack == "replayed" else EXPIRED)
        late = await alice.answer(question, value="true")
        assert late.status_code == 410
        assert "This question is closed" in late.text


async def test_a_slack_click_carrying_an_altered_token_is_refused_and_answers_nothing() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        tampered = dataclasses.replace(message, blocks=_with_altered_values(message.blocks))
        assert (await local.click(ALICE, tampered, "Approve")).status_code == 200  # signed as Slack would
        assert (await local.ephemeral_for(ALICE)).text.startswith("This question is closed")
        assert message.updates == 0
        await local.click(ALICE, message, "Reject")
        assert await result() == "false"


def _with_altered_values(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def change(element: dict[str, Any]) -> dict[str, Any]:
        return element | {"value": altered(element["value"])} if "value" in element else element

    return [
        block | {"elements": [change(e) for e in block["elements"]]} if block["type"] == "actions" else block
        for block in blocks
    ]
