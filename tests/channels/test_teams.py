"""The Teams channel against a local Bot Framework (tests/channels/teams_server.py) that speaks Teams' wire format.

Questions are asked by real tools over real streamable HTTP on both protocol
eras; people press the cards' buttons the way Teams delivers a press to a bot.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field, SecretStr

from elicitkit import Accepted, Declined, Elicitation, ElicitationTimeout
from elicitkit.channels import _teams_auth
from elicitkit.channels._teams import TeamsChannel, TeamsError
from elicitkit.channels._teams_auth import SeenActivities
from elicitkit.channels._teams_cards import closed_card, content_of, question_card
from elicitkit.channels.base import ChannelRefused, Closing, Prompt, Responder, teams
from tests.channels.teams_server import (
    FORGERIES,
    LocalBotFramework,
    Sent,
    TeamsUser,
    card_inputs,
    card_texts,
)
from tests.scenes import new_server, serving, text_of

pytestmark = pytest.mark.anyio

DEPLOYS = "19:deploys0c5d8e0f4b7a4f2a@thread.tacv2"
ALICE = TeamsUser("a1d3c0de-0000-4a11-8c3e-000000000a11", "Alice")
BOB = TeamsUser("b0b0b0b0-0000-4b0b-8b0b-000000000b0b", "Bob")
THANKS = "Thanks, your answer was recorded."

Setup = Callable[[MCPServer, Elicitation], None]


class Rollout(BaseModel):
    replicas: int = Field(ge=1, le=10)
    window: dt.date
    start: dt.datetime
    regions: list[Literal["eu", "us", "apac"]]
    canary: bool = False
    note: str | None = None


class Login(BaseModel):
    user: str
    password: SecretStr


@dataclass
class Desk:
    """A served Elicitation with a TeamsChannel, the local Bot Framework it talks to, and one tool call in flight."""

    bf: LocalBotFramework
    hitl: Elicitation
    endpoint: str
    result: CallToolResult | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    async def press(self, question: Sent, title: str, user: TeamsUser = ALICE, **options: Any) -> httpx.Response:
        return await self.bf.press(self.endpoint, question, title, user, **options)

    async def said(self, question: Sent, title: str, user: TeamsUser = ALICE, **options: Any) -> str:
        """Press an Action.Execute button; what Teams shows the presser (the invoke response)."""
        response = await self.press(question, title, user, **options)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["statusCode"] == 200
        assert body["type"] == "application/vnd.microsoft.activity.message"
        said: str = body["value"]
        return said

    async def outcome(self) -> str:
        with anyio.fail_after(5):
            await self.done.wait()
        assert self.result is not None
        return text_of(self.result)


@asynccontextmanager
async def desk(setup: Setup, mode: str = "auto", call: str = "ask", **channel: Any) -> AsyncIterator[Desk]:
    """Serve a server whose tools `setup` adds, with a TeamsChannel on a local Bot Framework; call tool `call`."""
    bf = LocalBotFramework(conversations={DEPLOYS: (ALICE, BOB)})
    async with bf.serve():
        server, hitl = new_server("teams-desk", channels=[bf.channel(**channel)])
        setup(server, hitl)
        async with serving(hitl) as url, Client(url, mode=mode) as client, anyio.create_task_group() as tg:
            scene = Desk(bf, hitl, f"{hitl.public_url}/elicit/channels/teams/messages")

            async def calling() -> None:
                scene.result = await client.call_tool(call, {})
                scene.done.set()

            tg.start_soon(calling)
            yield scene


def confirming(approvers: set[str] | None = None, timeout: float | None = None) -> Setup:
    def setup(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ask(ctx: Context) -> str:
            try:
                answer = await hitl.confirm(
                    ctx, "Deploy v2.1?", via=teams(DEPLOYS, approvers=approvers), timeout=timeout
                )
            except ElicitationTimeout:
                return "timed out"
            if isinstance(answer, Declined) and answer.reason:
                return f"Declined: {answer.reason}"
            return f"approved={answer.data}" if isinstance(answer, Accepted) else type(answer).__name__

    return setup


# --- answering ----------------------------------------------------------------------------------


async def test_a_release_is_approved_placed_and_planned_on_teams_question_by_question(mode: str) -> None:
    def setup(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ask(ctx: Context) -> str:
            via = teams(DEPLOYS, approvers={ALICE.aad})
            approved = await hitl.confirm(ctx, "Deploy v2.1?", via=via)
            where = await hitl.choice(ctx, "Where to?", ["staging", "production"], via=via)
            plan = await hitl.elicit(ctx, "How should it roll out?", Rollout, via=via)
            assert isinstance(approved, Accepted) and isinstance(where, Accepted) and isinstance(plan, Accepted)
            p = plan.data
            return f"{approved.data} {where.data} {p.replicas} {p.window} {p.start.isoformat()} {p.regions} {p.canary}"

    async with desk(setup, mode) as scene:
        bf = scene.bf
        first = await bf.question(1)
        assert first.conversation == DEPLOYS
        assert [a["title"] for a in first.card["actions"]] == ["Approve", "Reject", "Decline"]
        assert await scene.said(first, "Approve") == THANKS

        second = await bf.question(2)
        assert [a["title"] for a in second.card["actions"]] == ["staging", "production", "Decline"]
        assert await scene.said(second, "production") == THANKS

        third = await bf.question(3)
        assert set(card_inputs(third.card)) == {
            "field:replicas",
            "field:window",
            "field:start",
            "field:start@time",
            "field:regions",
            "field:canary",
            "field:note",
        }
        inputs = {
            "field:replicas": "3",
            "field:window": "2026-08-01",
            "field:start": "2026-08-01",
            "field:start@time": "09:30",
            "field:regions": "eu,apac",
            "field:canary": "true",
        }
        assert await scene.said(third, "Submit", inputs=inputs) == THANKS

        assert await scene.outcome() == "True production 3 2026-08-01 2026-08-01T09:30:00+00:00 ['eu', 'apac'] True"
        for question in (first, second, third):
            assert card_texts((await bf.update_of(question)).card)[-1].startswith("Answered by Alice: ")
        assert bf.token_requests == 1  # one client-credentials token, cached across every call


async def test_declining_on_teams_declines_the_question(mode: str) -> None:
    async with desk(confirming(), mode) as scene:
        question = await scene.bf.question(1)
        assert await scene.said(question, "Decline") == THANKS
        assert await scene.outcome() == "Declined"
        assert card_texts((await scene.bf.update_of(question)).card)[-1] == "Declined by Alice"


async def test_declining_on_teams_with_a_reason_hands_the_tool_the_reason(mode: str) -> None:
    async with desk(confirming(), mode) as scene:
        question = await scene.bf.question(1)
        reason = "Freeze until **Monday**, see https://status.example.com"
        assert await scene.said(question, "Decline", inputs={"reason": reason}) == THANKS
        assert await scene.outcome() == f"Declined: {reason}"
        closed = card_texts((await scene.bf.update_of(question)).card)[-1]
        assert closed == "Declined by Alice: Freeze until \\*\\*Monday\\*\\*, see https\\://status\\.example\\.com"


async def test_a_reason_longer_than_a_card_allows_is_refused_and_the_question_stays_open() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        refused = await scene.said(question, "Decline", inputs={"reason": "x" * 1001})
        assert refused == "A reason for declining may have at most 1,000 characters, not 1,001"
        assert scene.bf.updates == [] and not scene.done.is_set()
        assert await scene.said(question, "Decline", inputs={"reason": "x" * 1000}) == THANKS
        assert await scene.outcome() == "Declined: " + "x" * 1000


async def test_a_reason_teams_sends_through_the_submit_fallback_counts_too() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        await scene.press(question, "Decline", inputs={"reason": "not today"}, submit=True)
        assert await scene.outcome() == "Declined: not today"


async def test_an_invalid_answer_is_explained_to_the_presser_and_the_question_stays_open() -> None:
    def setup(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ask(ctx: Context) -> str:
            plan = await hitl.elicit(ctx, "How should it roll out?", Rollout, via=teams(DEPLOYS))
            return str(plan.data.replicas) if isinstance(plan, Accepted) else "no plan"

    async with desk(setup) as scene:
        question = await scene.bf.question(1)
        filled = {"field:window": "2026-08-01", "field:start": "2026-08-01", "field:start@time": "09:30"}
        filled |= {"field:regions": "us"}
        said = await scene.said(question, "Submit", inputs=filled | {"field:replicas": "many"})
        assert said.startswith("That answer is not valid")
        assert "replicas" in said
        assert scene.bf.updates == []
        assert await scene.said(question, "Submit", inputs=filled | {"field:replicas": "12"}) != THANKS
        assert await scene.said(question, "Submit", inputs=filled | {"field:replicas": "2"}) == THANKS
        assert await scene.outcome() == "2"


async def test_someone_who_is_not_an_approver_is_told_so_and_the_question_stays_open() -> None:
    async with desk(confirming(approvers={ALICE.aad})) as scene:
        bf = scene.bf
        question = await bf.question(1)
        refused = "Sorry Bob, you are not one of the approvers of this question."
        assert await scene.said(question, "Approve", BOB) == refused

        # A client without Universal Actions sends the Action.Submit fallback: the bot answers in the conversation.
        response = await scene.press(question, "Approve", BOB, submit=True)
        assert response.status_code == 200
        await bf.until(lambda: len(bf.replies) == 1)
        (reply,) = bf.replies
        bobs_press = bf.delivered[-1][0]
        assert reply.activity["text"] == refused
        assert reply.activity["replyToId"] == reply.activity_id == bobs_press["id"]
        assert reply.conversation == f"{DEPLOYS};messageid={question.activity_id}"  # the question's thread
        assert bf.updates == []
        assert scene.hitl.pending_questions == 1

        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"
        assert card_texts((await bf.update_of(question)).card)[-1] == "Answered by Alice: value: True"


async def test_an_answer_pressed_on_a_client_without_universal_actions_is_taken_and_acknowledged() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        response = await scene.press(question, "Reject", BOB, submit=True)
        assert response.status_code == 200
        assert await scene.outcome() == "approved=False"
        await scene.bf.until(lambda: len(scene.bf.replies) == 1)
        assert scene.bf.replies[0].activity["text"] == THANKS
        assert card_texts((await scene.bf.update_of(question)).card)[-1] == "Answered by Bob: value: False"


# --- closing ------------------------------------------------------------------------------------


async def test_a_closed_questions_card_shows_the_outcome_and_has_no_buttons_left() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        await scene.said(question, "Approve")
        update = await scene.bf.update_of(question)
        assert update.conversation == DEPLOYS
        assert update.activity["id"] == question.activity_id
        assert "actions" not in update.card
        assert card_texts(update.card)[0] == "Deploy v2.1?"
        assert await scene.outcome() == "approved=True"
        assert await scene.said(question, "Reject") == (
            "This question is closed: it was already answered, withdrawn, or it expired."
        )


async def test_a_question_nobody_answers_in_time_is_marked_expired_on_its_card() -> None:
    # Long enough for the bot to sign in and post on a loaded machine: the post counts against the question's time.
    async with desk(confirming(timeout=1.5)) as scene:
        question = await scene.bf.question(1)
        update = await scene.bf.update_of(question)
        assert card_texts(update.card)[-1] == "Expired without an answer"
        assert await scene.outcome() == "timed out"


# --- secrets ------------------------------------------------------------------------------------


async def test_secret_fields_are_answered_on_a_secure_page_whose_link_only_the_presser_sees() -> None:
    def setup(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ask(ctx: Context) -> str:
            via = teams(DEPLOYS, approvers={ALICE.aad})
            login = await hitl.secure_form(ctx, "Registry login?", Login, via=via)
            assert isinstance(login, Accepted)
            return f"{login.data.user}:{login.data.password.get_secret_value()}"

    async with desk(setup) as scene:
        bf = scene.bf
        question = await bf.question(1)
        assert card_inputs(question.card) == {}
        (secure, _) = question.card["actions"]
        assert secure["title"] == "Answer on a secure page"
        assert secure["fallback"] == "drop"  # never as an Action.Submit, whose answer everybody would see

        assert "not one of the approvers" in await scene.said(question, "Answer on a secure page", BOB)
        said = await scene.said(question, "Answer on a secure page", ALICE)
        found = re.search(r"(http://\S+/elicit/f/\S+)", said)
        assert found is not None, said
        assert (await bf.replay(scene.endpoint)).status_code == 409  # the same press again gets no second link
        assert bf.replies == []  # nothing went to the conversation
        assert all(found.group(1) not in json.dumps(sent.activity) for sent in bf.sent)

        async with httpx.AsyncClient() as browser:
            page = await browser.get(found.group(1))
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"ek:csrf": csrf.group(1), "ek:action": "accept", "user": "ci", "password": "hunter2"}
            done = await browser.post(found.group(1), data=form)
            assert done.status_code == 200, done.text
        assert await scene.outcome() == "ci:hunter2"
        closed = card_texts((await bf.update_of(question)).card)[-1]
        assert closed.startswith("Answered")
        assert "hunter2" not in closed


# --- refusals -----------------------------------------------------------------------------------


async def test_an_activity_the_bot_connector_did_not_sign_is_refused_and_answers_nothing() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        for forgery in FORGERIES:
            response = await scene.press(question, "Approve", forgery=forgery)
            assert (response.status_code, response.text) == (401, "Unauthorized"), forgery
        assert scene.bf.updates == []
        assert scene.hitl.pending_questions == 1
        assert not scene.done.is_set()
        assert await scene.said(question, "Reject") == THANKS
        assert await scene.outcome() == "approved=False"


async def test_a_connector_token_outside_its_lifetime_is_refused() -> None:
    async with desk(confirming()) as scene:
        question = await scene.bf.question(1)
        for forgery in ("expired", "not-yet-valid"):
            assert (await scene.press(question, "Approve", forgery=forgery)).status_code == 401, forgery
        assert scene.hitl.pending_questions == 1
        assert await scene.said(question, "Approve") == THANKS
        assert await scene.outcome() == "approved=True"


async def test_a_replayed_activity_is_refused() -> None:
    async with desk(confirming(approvers={ALICE.aad})) as scene:
        question = await scene.bf.question(1)
        assert await scene.said(question, "Approve", BOB) != THANKS
        replayed = await scene.bf.replay(scene.endpoint)
        assert replayed.status_code == 409
        assert replayed.text == "This activity was already received"
        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert (await scene.bf.replay(scene.endpoint)).status_code == 409
        assert await scene.outcome() == "approved=True"


async def test_a_key_rollover_is_picked_up_but_unknown_keys_do_not_make_the_bot_fetch_keys_each_time() -> None:
    async with desk(confirming(approvers={ALICE.aad})) as scene:
        bf = scene.bf
        question = await bf.question(1)
        assert await scene.said(question, "Approve", BOB) != THANKS
        assert bf.key_fetches == 1
        bf.rotate()
        assert await scene.said(question, "Approve", BOB) != THANKS
        assert bf.key_fetches == 2
        for _ in range(3):
            assert (await scene.press(question, "Approve", forgery="unknown-key")).status_code == 401
        assert bf.key_fetches == 2
        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"


def invoke(
    bf: LocalBotFramework, question: Sent, title: str, user: TeamsUser = ALICE, **changes: Any
) -> dict[str, Any]:
    """The invoke Teams sends when `user` presses the button `title` (no inputs), with `changes` to its fields."""
    (button,) = [a for a in question.card["actions"] if a["title"] == title]
    execute = {"type": "Action.Execute", "title": title, "verb": button["verb"], "data": dict(button["data"])}
    activity = bf._activity(question, user, "msteams") | {"type": "invoke", "name": "adaptiveCard/action"}
    return activity | {"value": {"action": execute}} | changes


async def test_an_activity_from_another_bot_framework_channel_is_refused_whoever_it_claims_to_be() -> None:
    async with desk(confirming(approvers={ALICE.aad})) as scene:
        bf = scene.bf
        question = await bf.question(1)
        # Web Chat and Direct Line clients choose `from` themselves; their tokens are the Bot Connector's all the same.
        webchat = "https://webchat.botframework.com/"
        claims_alice = {"id": ALICE.aad, "name": "Alice", "aadObjectId": ALICE.aad}
        for channel, service in (("webchat", webchat), ("directline", "https://directline.botframework.com/")):
            activity = invoke(bf, question, "Approve", channelId=channel, serviceUrl=service, **{"from": claims_alice})
            response = await bf.deliver(scene.endpoint, activity)
            assert (response.status_code, response.text) == (401, "Unauthorized"), channel
        assert scene.hitl.pending_questions == 1
        assert bf.updates == []
        assert await scene.said(question, "Reject") == THANKS
        assert await scene.outcome() == "approved=False"


async def test_an_activity_naming_another_service_url_is_refused_even_with_a_token_issued_for_it() -> None:
    async with desk(confirming()) as scene:
        bf = scene.bf
        question = await bf.question(1)
        elsewhere = invoke(bf, question, "Approve", serviceUrl="https://smba.evil.example/amer/")
        assert (await bf.deliver(scene.endpoint, elsewhere)).status_code == 401  # signed for that service
        other_path = invoke(bf, question, "Approve", serviceUrl=bf.service_url + "emea/")
        assert (await bf.deliver(scene.endpoint, other_path)).status_code == 401
        assert scene.hitl.pending_questions == 1
        # The configured service, written without its trailing slash, is the same service.
        same = invoke(bf, question, "Reject", serviceUrl=bf.service_url.rstrip("/"))
        response = await bf.deliver(scene.endpoint, same)
        assert response.status_code == 200
        assert response.json()["value"] == THANKS
        assert await scene.outcome() == "approved=False"


async def test_a_press_without_an_aad_object_id_answers_nothing_and_the_presser_is_told_why() -> None:
    no_aad = "Teams did not say which Microsoft Entra (AAD) user pressed this button, so it cannot answer the question."
    async with desk(confirming(approvers={ALICE.aad})) as scene:
        bf = scene.bf
        question = await bf.question(1)
        sender = {"id": ALICE.aad, "name": "Alice"}  # `from.id` is no AAD object id, whatever it says
        response = await bf.deliver(scene.endpoint, invoke(bf, question, "Approve", **{"from": sender}))
        assert response.status_code == 200
        assert response.json()["value"] == no_aad

        # The Action.Submit fallback: a message, answered with a reply in the conversation.
        (approve,) = [a for a in question.card["actions"] if a["title"] == "Approve"]
        submitted = bf._activity(question, ALICE, "msteams") | {"type": "message", "text": ""}
        submitted |= {"value": dict(approve["fallback"]["data"]), "from": sender}
        assert (await bf.deliver(scene.endpoint, submitted)).status_code == 200
        await bf.until(lambda: len(bf.replies) == 1)
        assert bf.replies[0].activity["text"] == no_aad
        assert bf.updates == []
        assert scene.hitl.pending_questions == 1

        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"


@pytest.mark.parametrize("endorsements", [None, ["webchat", "directline"]])
async def test_a_key_that_is_not_endorsed_for_teams_vouches_for_no_activity(endorsements: list[str] | None) -> None:
    async with desk(confirming()) as scene:
        bf = scene.bf
        bf.endorsements = endorsements  # before the bot's first look at the keys
        question = await bf.question(1)
        for title in ("Approve", "Decline"):
            assert (await scene.press(question, title)).status_code == 401
        assert bf.key_fetches == 1
        assert scene.hitl.pending_questions == 1
        assert bf.updates == []

        bf.endorsements = ["msteams"]
        bf.rotate()  # a new key, endorsed for Teams: the bot fetches the key set again for it
        assert await scene.said(question, "Reject") == THANKS
        assert await scene.outcome() == "approved=False"


async def test_while_the_keys_cannot_be_fetched_activities_get_503_and_the_bot_does_not_fetch_for_each_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with desk(confirming()) as scene:
        bf = scene.bf
        bf.keys_down = True
        question = await bf.question(1)
        for forgery in (None, "unknown-key", None):
            response = await scene.press(question, "Approve", forgery=forgery)
            assert (response.status_code, response.text) == (503, "Cannot check the token right now")
        assert bf.key_fetches == 1  # then it backs off for the refetch interval, whatever each token names
        assert scene.hitl.pending_questions == 1

        bf.keys_down = False
        monkeypatch.setattr(_teams_auth, "_REFETCH_AFTER", 0.0)  # the interval is over
        assert await scene.said(question, "Approve") == THANKS
        assert bf.key_fetches == 2
        assert await scene.outcome() == "approved=True"


async def test_an_activity_arriving_while_the_keys_are_fetched_gets_503_at_once_instead_of_waiting() -> None:
    async with desk(confirming()) as scene, anyio.create_task_group() as tg:
        bf = scene.bf
        bf.keys_gate = anyio.Event()  # the key set answers when the test says so
        question = await bf.question(1)
        first: list[str] = []

        async def press_first() -> None:
            first.append(await scene.said(question, "Approve"))

        tg.start_soon(press_first)
        await bf.until(lambda: bf.key_fetches == 1)
        with anyio.fail_after(3):
            waiting = await scene.press(question, "Reject", BOB, forgery="unknown-key")
        assert (waiting.status_code, waiting.text) == (503, "Cannot check the token right now")
        bf.keys_gate.set()
        assert await scene.outcome() == "approved=True"
        assert first == [THANKS]
        assert bf.key_fetches == 1


def test_remembered_activities_are_bounded_and_forgotten_once_their_token_expired() -> None:
    seen = SeenActivities(limit=2)
    far = 4_000_000_000.0
    assert seen.first_time(("c", "1"), far)
    assert not seen.first_time(("c", "1"), far)
    assert seen.first_time(("c", "2"), far)
    assert seen.first_time(("c", "3"), far)
    assert seen.first_time(("c", "1"), far)  # the oldest went first
    expired = SeenActivities()
    assert expired.first_time(("c", "1"), 0.0)
    assert expired.first_time(("c", "1"), far)


async def test_activities_that_are_not_button_presses_are_acknowledged_and_ignored() -> None:
    async with desk(confirming()) as scene:
        bf = scene.bf
        question = await bf.question(1)
        greeting = bf._activity(question, ALICE, "msteams") | {"type": "conversationUpdate", "membersAdded": []}
        assert (await bf.deliver(scene.endpoint, greeting)).status_code == 200
        other = bf._activity(question, ALICE, "msteams") | {"type": "invoke", "name": "composeExtension/query"}
        assert (await bf.deliver(scene.endpoint, other)).status_code == 501
        async with httpx.AsyncClient() as client:
            assert (await client.post(scene.endpoint, content=b"[1]")).status_code == 400
            assert (await client.post(scene.endpoint, content=b" " * 300_000)).status_code == 413
        assert scene.hitl.pending_questions == 1
        assert await scene.said(question, "Approve") == THANKS
        assert await scene.outcome() == "approved=True"


# --- the bot's side of the Connector API --------------------------------------------------------


def prompt_of(schema: dict[str, Any], target: str | None = DEPLOYS, secret: tuple[str, ...] = ()) -> Prompt:
    token = "t" * 120
    return Prompt("q1", token, "Deploy?", schema, target, 4_000_000_000.0, tool="deploy", secret_fields=secret)


CONFIRM = {"type": "object", "properties": {"value": {"type": "boolean"}}}


async def test_a_bot_with_a_wrong_password_or_an_unknown_conversation_fails_clearly() -> None:
    bf = LocalBotFramework(conversations={DEPLOYS: (ALICE, BOB)})
    async with bf.serve():
        wrong = TeamsChannel(
            bf.app_id,
            "not-the-secret",
            service_url=bf.service_url,
            openid_config_url=f"{bf.base}/v1/.well-known/openidconfiguration",
            token_url=f"{bf.base}/botframework.com/oauth2/v2.0/token",
        )
        with pytest.raises(TeamsError, match=r"refused a token for app .*: invalid_client"):
            await wrong.post(prompt_of(CONFIRM))
        with pytest.raises(TeamsError, match="Teams refused to post the question: HTTP 404 Conversation not found"):
            await bf.channel().post(prompt_of(CONFIRM, target="19:elsewhere@thread.tacv2"))
        with pytest.raises(ChannelRefused, match="needs a conversation id"):
            await bf.channel().post(prompt_of(CONFIRM, target=None))
        assert bf.questions == []


def test_the_channel_only_talks_to_https_urls_except_on_loopback() -> None:
    with pytest.raises(ValueError, match="service_url must be an https URL"):
        TeamsChannel("app", "secret", service_url="http://smba.trafficmanager.net/teams/")
    with pytest.raises(ValueError, match="token_url must be an https URL"):
        TeamsChannel("app", "secret", service_url="https://smba.trafficmanager.net/teams/", token_url="ftp://x")
    assert TeamsChannel("app", "secret", service_url="http://127.0.0.1:9/").name == "teams"


def test_without_pyjwt_the_teams_channel_imports_and_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fresh import of the channel's modules, as in an environment without the extra.
    for name in ("_teams", "_teams_auth"):
        monkeypatch.delitem(sys.modules, f"elicitkit.channels.{name}", raising=False)
    monkeypatch.setitem(sys.modules, "jwt", None)
    module = importlib.import_module("elicitkit.channels._teams")
    with pytest.raises(ImportError, match=re.escape("pip install 'elicitkit[teams]'")):
        module.TeamsChannel("app", "secret", service_url="https://smba.trafficmanager.net/teams/")


# --- cards --------------------------------------------------------------------------------------

EVERY_FIELD = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "title": "Looks good", "default": True},
        "name": {"type": "string", "maxLength": 20, "default": "web"},
        "email": {"type": "string", "format": "email", "description": "Who to tell"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time", "default": "2026-08-01T09:30:00Z"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "env": {"type": "string", "enum": ["dev", "prod"], "default": "dev"},
        "tier": {"type": "string", "oneOf": [{"const": "g", "title": "Gold"}, {"const": "s", "title": "Silver"}]},
        "zones": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["c", "a"]},
        "teams": {
            "type": "array",
            "items": {"anyOf": [{"const": "x", "title": "X-Men"}, {"const": "y", "title": "Y"}]},
        },
    },
    "required": ["name", "count", "tier"],
}


def test_every_field_type_renders_as_a_teams_input() -> None:
    card = question_card(prompt_of(EVERY_FIELD))
    assert card["version"] == "1.4"
    inputs = card_inputs(card)
    kinds = {key.removeprefix("field:"): (block["type"], block.get("style")) for key, block in inputs.items()}
    assert kinds == {
        "ok": ("Input.Toggle", None),
        "name": ("Input.Text", "text"),
        "email": ("Input.Text", "email"),
        "site": ("Input.Text", "url"),
        "day": ("Input.Date", None),
        "at": ("Input.Date", None),
        "at@time": ("Input.Time", None),
        "count": ("Input.Number", None),
        "ratio": ("Input.Number", None),
        "env": ("Input.ChoiceSet", "compact"),
        "tier": ("Input.ChoiceSet", "compact"),
        "zones": ("Input.ChoiceSet", "expanded"),
        "teams": ("Input.ChoiceSet", "expanded"),
    }
    assert inputs["field:ok"]["value"] == "true"
    assert inputs["field:name"]["maxLength"] == 20 and inputs["field:name"]["value"] == "web"
    assert inputs["field:name"]["isRequired"] and not inputs["field:email"].get("isRequired")
    assert inputs["field:at"]["value"] == "2026-08-01" and inputs["field:at@time"]["value"] == "09:30"
    assert (inputs["field:count"]["min"], inputs["field:count"]["max"]) == (1, 9)
    assert inputs["field:tier"]["choices"] == [{"title": "Gold", "value": "g"}, {"title": "Silver", "value": "s"}]
    assert inputs["field:zones"]["isMultiSelect"] and inputs["field:zones"]["value"] == "a,c"
    assert "Who to tell" in card_texts(card)
    submit, decline = card["actions"]
    assert (submit["verb"], submit["data"]) == ("elicitkit.answer", {"ek": "t" * 120, "action": "answer"})
    assert submit["fallback"]["type"] == "Action.Submit" and submit["associatedInputs"] == "auto"
    assert (decline["type"], decline["title"]) == ("Action.ShowCard", "Decline")
    (why,) = card_inputs(decline["card"]).values()
    assert (why["id"], why["isMultiline"], why["maxLength"], why.get("isRequired", False)) == (
        "reason",
        True,
        1000,
        False,
    )
    (declines,) = decline["card"]["actions"]
    assert (declines["verb"], declines["data"]) == ("elicitkit.decline", {"ek": "t" * 120, "action": "decline"})
    assert declines["associatedInputs"] == "auto" and declines["fallback"]["type"] == "Action.Submit"


def test_a_lone_choice_with_many_options_is_a_menu_and_a_few_are_buttons() -> None:
    many = {"type": "object", "properties": {"v": {"type": "string", "enum": list("abcdef")}}}
    assert [i["type"] for i in card_inputs(question_card(prompt_of(many))).values()] == ["Input.ChoiceSet"]
    few = {"type": "object", "properties": {"v": {"type": "string", "enum": ["a", "b"]}}}
    buttons = question_card(prompt_of(few))["actions"]
    assert [(b["title"], b.get("data", {}).get("field:v")) for b in buttons] == [
        ("a", "a"),
        ("b", "b"),
        ("Decline", None),
    ]


@pytest.mark.parametrize(
    ("prop", "reason"),
    [
        ({"type": "array", "items": {"type": "string", "enum": ["a,b", "c"]}}, "option 'a,b' contains a comma"),
        ({"type": "array", "items": {"type": "string"}}, "a list without fixed options"),
        ({"type": "object"}, "a object field has no Teams input"),
        ({"type": "null"}, "a null field has no Teams input"),
    ],
)
def test_fields_teams_cannot_show_are_refused_by_name(prop: dict[str, Any], reason: str) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}, "odd": prop}}
    with pytest.raises(ChannelRefused, match=f"field 'odd': {re.escape(reason)}"):
        question_card(prompt_of(schema))


def test_a_question_with_secret_fields_has_no_inputs_only_the_secure_page_button() -> None:
    schema = {"type": "object", "properties": {"user": {"type": "string"}, "password": {"type": "string"}}}
    card = question_card(prompt_of(schema, secret=("password",)))
    assert card_inputs(card) == {}
    assert [(a["title"], a.get("verb", a["type"])) for a in card["actions"]] == [
        ("Answer on a secure page", "elicitkit.secure"),
        ("Decline", "Action.ShowCard"),
    ]


def test_card_values_come_back_in_the_schemas_types() -> None:
    data = {
        "ek": "t",
        "action": "answer",
        "field:ok": "false",
        "field:name": "api",
        "field:email": "",
        "field:at": "2026-08-01",
        "field:at@time": "09:30",
        "field:count": "3",
        "field:ratio": "0.25",
        "field:env": "prod",
        "field:zones": "a,c",
        "field:teams": "",
    }
    assert content_of(EVERY_FIELD, data) == {
        "ok": False,
        "name": "api",
        "at": "2026-08-01T09:30:00Z",
        "count": 3,
        "ratio": 0.25,
        "env": "prod",
        "zones": ["a", "c"],
        "teams": [],
    }
    assert content_of(EVERY_FIELD, {"field:count": "many", "field:ok": True})["count"] == "many"


def test_a_date_time_default_is_shown_in_utc_as_the_answer_is_read() -> None:
    schema = {
        "type": "object",
        "properties": {
            "start": {"type": "string", "format": "date-time", "default": "2026-01-02T01:30:00+02:00"},
            "naive": {"type": "string", "format": "date-time", "default": "2026-08-01T09:30:00"},
        },
    }
    inputs = card_inputs(question_card(prompt_of(schema)))
    shown = {key: block["value"] for key, block in inputs.items()}
    assert shown == {
        "field:start": "2026-01-01",
        "field:start@time": "23:30",
        "field:naive": "2026-08-01",
        "field:naive@time": "09:30",
    }
    assert content_of(schema, shown) == {"start": "2026-01-01T23:30:00Z", "naive": "2026-08-01T09:30:00Z"}


MERGE = "Merge [github.com/x](https://evil.example) <!channel> *now*?"


def test_markdown_links_and_mentions_from_the_question_stay_literal_on_a_teams_card() -> None:
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string", "title": "**Note**", "description": "See _www.evil.example_\n- [x](y)"},
            "ok": {"type": "boolean"},
        },
    }
    asked = Prompt("q1", "t" * 120, MERGE, schema, DEPLOYS, 4_000_000_000.0, tool="deploy_now")
    card = question_card(asked)
    texts = card_texts(card)
    assert texts[0] == r"Merge \[github\.com/x\]\(https\://evil\.example\) \<\!channel\> \*now\*?"
    assert texts[1].startswith(r"Asked by the tool deploy\_now · open until {{DATE(")  # its own function stays
    assert texts[2] == "See \\_www\\.evil\\.example\\_\n\\- \\[x\\]\\(y\\)"
    assert card_inputs(card)["field:note"]["label"] == "**Note**"  # an input label is plain text

    named = {"type": "object", "properties": {"*pin*": {"type": "string"}}}
    secret = question_card(Prompt("q1", "t" * 120, MERGE, named, DEPLOYS, 4e9, secret_fields=("*pin*",)))
    assert card_texts(secret)[-1] == r"Some answers (\*pin\*) are secret: they are never typed into Teams."

    mallory = Responder("teams", "m", "[Alice](https://evil.example)")
    closed = card_texts(closed_card(asked, Closing("accept", mallory, "**Note**: 1. **ok**")))
    assert closed[0] == texts[0]
    assert closed[-1] == r"Answered by \[Alice\]\(https\://evil\.example\): \*\*Note\*\*: 1. \*\*ok\*\*"


def test_a_closed_card_says_who_answered() -> None:
    closing = Closing("accept", Responder("teams", ALICE.aad, "Alice"), "value: True")
    card = closed_card(prompt_of(CONFIRM), closing)
    assert card_texts(card) == ["Deploy?", "Asked by the tool deploy", "Answered by Alice: value: True"]
    assert "actions" not in card
