"""The Slack channel against a local Slack that speaks the Web API and signs interactions as Slack does.

Tools run on a real server over streamable HTTP (both eras); people click and
submit through `tests/channels/slack_server.py`, which posts Slack-shaped,
signed callbacks to elicitkit's Interactivity Request URL.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field, SecretStr

from elicitkit import Accepted, Declined, Elicitation, ElicitationResult, ElicitationTimeout
from elicitkit.channels import SlackChannel
from elicitkit.channels._slack_blocks import message_blocks, modal_view
from elicitkit.channels._slack_replies import click_content, content_of
from elicitkit.channels.base import ChannelRefused, Closing, Prompt, Responder, slack
from tests.channels.slack_server import LocalSlack, User
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio

ALICE = User("U0ALICE", "alice")
BOB = User("U0BOB", "bob")
DEPLOYS = "C0DEPLOYS"


class Plan(BaseModel):
    batch: int = Field(ge=1, le=10, title="Batch size")
    note: str
    window: dt.date
    start: dt.datetime
    regions: list[Literal["eu", "us", "ap"]]
    notify: bool = False


class Login(BaseModel):
    user: str
    password: SecretStr


def said(result: ElicitationResult[Any]) -> str:
    if isinstance(result, Accepted):
        data = result.data
        return json.dumps(data.model_dump(mode="json") if isinstance(data, BaseModel) else data, sort_keys=True)
    if isinstance(result, Declined):
        return f"declined: {result.reason}" if result.reason else "declined"
    return "cancelled"


def desk_server(local: LocalSlack) -> Elicitation:
    server = MCPServer("desk")
    hitl = Elicitation(server, channels=[SlackChannel(local.token, local.signing_secret, api_url=local.api_url)])

    @server.tool()
    async def release(version: str, ctx: Context) -> str:
        via = slack("#deploys")
        go = await hitl.confirm(ctx, f"Release {version}?", via=via)
        where = await hitl.choice(ctx, "Where to?", ["staging", "production"], via=via)
        plan = await hitl.elicit(ctx, "Rollout plan?", Plan, via=via)
        return " | ".join(said(r) for r in (go, where, plan))

    @server.tool()
    async def ask(
        kind: Literal["confirm", "menu", "several"],
        ctx: Context,
        approvers: list[str] | None = None,
        timeout: float = 5,
    ) -> str:
        via = slack("#deploys", approvers=approvers)
        try:
            if kind == "confirm":
                return said(await hitl.confirm(ctx, "Deploy <v2> & restart?", via=via, timeout=timeout))
            if kind == "menu":
                return said(await hitl.choice(ctx, "Which build?", [f"build {n}" for n in range(8)], via=via))
            return said(await hitl.choices(ctx, "Which regions?", ["eu", "us", "ap"], min_items=2, via=via))
        except ElicitationTimeout:
            return "timed out"

    @server.tool()
    async def login(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, "Registry login?", Login, via=slack("#deploys", approvers=[ALICE.id]))
        assert isinstance(answer, Accepted)
        return f"{answer.data.user}:{answer.data.password.get_secret_value()}"

    return hitl


@asynccontextmanager
async def desk(mode: str = "auto") -> AsyncIterator[tuple[LocalSlack, Client]]:
    """A local Slack, a server whose questions go to it, and an MCP client over real HTTP."""
    async with LocalSlack().serving() as local:
        hitl = desk_server(local)
        async with serving(hitl) as url, Client(url, mode=mode) as client:
            local.request_url = f"{hitl.public_url}/elicit/channels/slack/interactions"
            yield local, client


@asynccontextmanager
async def calling(
    client: Client, tool: str, arguments: Mapping[str, Any] | None = None
) -> AsyncIterator[Callable[[], Awaitable[str]]]:
    """Call `tool` in the background; yield a function that waits for its result's text."""
    results: list[str] = []
    done = anyio.Event()

    async def call() -> None:
        results.append(text_of(await client.call_tool(tool, dict(arguments or {}))))
        done.set()

    async def result() -> str:
        with anyio.fail_after(5):
            await done.wait()
        return results[0]

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        try:
            yield result
        finally:
            tg.cancel_scope.cancel()


# -- whole runs, on both eras -------------------------------------------------------------------------


async def test_a_release_is_confirmed_chosen_and_planned_in_slack_on_both_eras(mode: str) -> None:
    async with desk(mode) as (local, client), calling(client, "release", {"version": "2.1"}) as result:
        first = await local.message(1)
        assert (first.channel, first.text) == (DEPLOYS, "Release 2.1?")
        assert first.labels() == ["Approve", "Reject", "Decline"]
        assert "Asked by the tool `release`" in first.context()
        assert (await local.click(ALICE, first, "Approve")).status_code == 200
        assert (await local.ephemeral_for(ALICE)).text == "Thanks, your answer was recorded."

        second = await local.message(2)
        assert second.labels() == ["staging", "production", "Decline"]
        await local.click(ALICE, second, "production")

        third = await local.message(3)
        assert third.labels() == ["Answer…", "Decline"]
        await local.click(ALICE, third, "Answer…")
        view = await local.opened_view(ALICE)
        start = int(dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC).timestamp())
        values = {"batch": 3, "note": "canary first", "window": "2026-12-01", "start": start, "regions": ["eu", "us"]}
        response = await local.submit(ALICE, view, values | {"notify": True})
        assert response.json() == {"response_action": "clear"}
        assert not view.open

        plan = {"batch": 3, "note": "canary first", "notify": True, "regions": ["eu", "us"], "window": "2026-12-01"}
        plan["start"] = "2026-12-01T09:30:00Z"
        assert await result() == f'true | "production" | {json.dumps(plan, sort_keys=True)}'
    assert [m.updates for m in local.messages] == [1, 1, 1]
    assert all(m.labels() == [] and m.context().startswith("Answered by alice") for m in local.messages)
    assert "Batch size: 3" in local.messages[2].context()
    assert [e.user for e in local.ephemerals] == [ALICE, ALICE, ALICE]


async def test_a_long_single_choice_is_a_select_menu_in_the_message() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "menu"}) as result:
        message = await local.message(1)
        assert message.labels() == ["Decline"]
        await local.click(BOB, message, option="build 6")
        assert await result() == '"build 6"'


async def test_a_modal_answer_the_desk_refuses_shows_the_problem_on_its_field_and_stays_open() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "several"}) as result:
        await local.click(ALICE, await local.message(1), "Answer…")
        view = await local.opened_view(ALICE)
        refused = await local.submit(ALICE, view, {"value": ["eu"]})
        assert refused.json()["response_action"] == "errors"
        assert list(view.errors) == ["value"]
        assert "at least 2" in view.errors["value"]
        assert view.open
        assert (await local.submit(ALICE, view, {"value": ["eu", "ap"]})).json() == {"response_action": "clear"}
        assert await result() == '["eu", "ap"]'


# -- who may answer, and what is refused ---------------------------------------------------------------


async def test_someone_who_is_not_an_approver_is_told_privately_and_the_question_stays_open() -> None:
    arguments = {"kind": "confirm", "approvers": [ALICE.id]}
    async with desk() as (local, client), calling(client, "ask", arguments) as result:
        message = await local.message(1)
        await local.click(BOB, message, "Approve")
        refusal = await local.ephemeral_for(BOB)
        assert refusal.text == "Sorry bob, you are not one of the approvers of this question."
        assert refusal.body["response_type"] == "ephemeral"
        assert message.updates == 0
        assert message.labels() == ["Approve", "Reject", "Decline"]

        await local.click(ALICE, message, "Reject")
        assert await result() == "false"
    assert message.context().startswith("Answered by alice")


async def test_someone_who_is_not_an_approver_cannot_answer_through_the_modal_either() -> None:
    arguments = {"kind": "several", "approvers": [ALICE.id]}
    async with desk() as (local, client), calling(client, "ask", arguments) as result:
        message = await local.message(1)
        await local.click(BOB, message, "Answer…")
        view = await local.opened_view(BOB)
        refused = await local.submit(BOB, view, {"value": ["eu", "us"]})
        assert refused.json()["response_action"] == "update"
        assert "not one of the approvers" in json.dumps(view.view["blocks"])
        assert message.updates == 0

        await local.decline(ALICE, message)
        assert await result() == "declined"


async def test_a_callback_signed_with_another_secret_is_refused_and_answers_nothing() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        forged = await local.click(ALICE, message, "Approve", secret="not-the-signing-secret")
        assert (forged.status_code, forged.text) == (401, "Invalid X-Slack-Signature")
        unsigned = await local.post_raw(b"payload=%7B%7D", {"X-Slack-Request-Timestamp": str(int(time.time()))})
        assert unsigned.status_code == 401
        assert (await local.post_raw(b"x" * (2 << 20), {})).status_code == 413

        await local.click(ALICE, message, "Reject")  # had the forged Approve counted, this would be too late
        assert await result() == "false"
    assert [e.text for e in local.ephemerals] == ["Thanks, your answer was recorded."]


async def test_a_callback_with_a_stale_or_future_timestamp_is_refused() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        for off in (-310, 310):
            stale = await local.click(ALICE, message, "Approve", timestamp=int(time.time()) + off)
            assert (stale.status_code, stale.text) == (401, "Stale X-Slack-Request-Timestamp")
        assert (message.updates, local.ephemerals) == (0, [])
        await local.decline(ALICE, message)
        assert await result() == "declined"


async def test_a_replayed_callback_is_refused() -> None:
    arguments = {"kind": "confirm", "approvers": [ALICE.id]}
    async with desk() as (local, client), calling(client, "ask", arguments) as result:
        message = await local.message(1)
        assert (await local.click(BOB, message, "Approve")).status_code == 200
        await local.ephemeral_for(BOB)
        replayed = await local.resend()
        assert (replayed.status_code, replayed.text) == (401, "Replayed request")

        await local.click(ALICE, message, "Approve")
        assert await result() == "true"
    assert [e.user for e in local.ephemerals] == [BOB, ALICE]


async def test_decline_answers_declined_and_says_who_declined() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        await local.decline(BOB, message)
        assert await result() == "declined"
    assert (message.updates, message.labels(), message.context()) == (1, [], "Declined by bob")


async def test_decline_asks_why_and_the_tool_and_the_message_read_the_reason(mode: str) -> None:
    async with desk(mode) as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        await local.click(BOB, message, "Decline")
        view = await local.opened_view(BOB)
        assert view.view["callback_id"] == "elicitkit.decline"
        assert view.view["submit"]["text"] == "Decline"
        (reason,) = [b for b in view.view["blocks"] if b["type"] == "input"]
        assert (reason["block_id"], reason["optional"], reason["element"]["max_length"]) == ("reason", True, 1000)
        assert "Deploy &lt;v2&gt; &amp; restart?" in json.dumps(view.view["blocks"])  # the question, escaped
        assert message.updates == 0  # opening the modal answers nothing
        assert (await local.submit(BOB, view, {"reason": "Freeze until Monday <@U0ALICE>"})).status_code == 200
        assert await result() == "declined: Freeze until Monday <@U0ALICE>"
    assert not view.open
    assert message.context() == "Declined by bob: Freeze until Monday &lt;@U0ALICE&gt;"
    assert (await local.ephemeral_for(BOB)).text == "Thanks, your answer was recorded."


async def test_when_slack_will_not_open_the_decline_modal_the_click_declines_without_a_reason() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        local.refuse_views = "expired_trigger_id"
        await local.click(BOB, message, "Decline")
        assert await result() == "declined"
    assert (message.context(), local.views) == ("Declined by bob", [])


async def test_a_decline_modal_submitted_after_the_question_closed_says_so() -> None:
    async with desk() as (local, client), calling(client, "ask", {"kind": "confirm"}) as result:
        message = await local.message(1)
        await local.click(BOB, message, "Decline")
        view = await local.opened_view(BOB)
        await local.click(ALICE, message, "Approve")
        assert await result() == "true"
        assert (await local.submit(BOB, view, {"reason": "too late"})).json()["response_action"] == "update"
    assert "This question is closed" in json.dumps(view.view["blocks"])
    assert message.context().startswith("Answered by alice")


# -- closing -------------------------------------------------------------------------------------------


async def test_a_question_that_expires_is_marked_expired_and_later_clicks_are_told_it_is_closed() -> None:
    async with desk() as (local, client):
        async with calling(client, "ask", {"kind": "confirm", "timeout": 0.5}) as result:
            message = await local.message(1)
            posted = list(message.blocks)
            assert await result() == "timed out"
        assert (message.updates, message.labels(), message.context()) == (1, [], "Expired without an answer")
        assert message.text == "Expired without an answer"
        assert "Deploy &lt;v2&gt; &amp; restart?" in json.dumps(message.blocks)

        message.blocks = posted  # a client that has not refreshed the message still shows the buttons
        await local.click(ALICE, message, "Approve")
        assert (await local.ephemeral_for(ALICE)).text.startswith("This question is closed")
        assert message.updates == 1


# -- secret fields -------------------------------------------------------------------------------------


async def test_a_question_with_a_secret_field_offers_a_secure_page_whose_link_only_the_clicker_sees() -> None:
    async with desk() as (local, client), calling(client, "login") as result:
        message = await local.message(1)
        assert message.labels() == ["Answer on a secure page", "Decline"]
        await local.click(BOB, message, "Answer on a secure page")
        assert "not one of the approvers" in (await local.ephemeral_for(BOB)).text
        await local.click(ALICE, message, "Answer on a secure page")
        sent = await local.ephemeral_for(ALICE)
        [link] = re.findall(r"<(http://[^|>]+)\|", sent.text)
        everything_public = json.dumps([body for method, body in local.calls if method != "response_url"])
        assert link not in everything_public
        assert all(link not in e.text for e in local.ephemerals if e.user != ALICE)
        async with httpx.AsyncClient() as browser:
            page = await browser.get(link)
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"ek:csrf": csrf.group(1), "ek:action": "accept", "user": "ops", "password": "hunter2"}
            assert (await browser.post(link, data=form)).status_code == 200
        assert await result() == "ops:hunter2"
    assert message.context() == "Answered by alice: user: ops; password: ••••••"
    assert "hunter2" not in json.dumps(local.calls)


async def test_a_reply_slack_gave_no_response_url_for_is_logged_by_kind_never_with_its_link(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="elicitkit")
    async with desk() as (local, client), calling(client, "login") as result:
        message = await local.message(1)
        secure = next(c for c in message.controls() if c["text"]["text"] == "Answer on a secure page")
        action = {k: secure[k] for k in ("type", "action_id", "block_id", "text", "value")}
        click = local._payload("block_actions", ALICE) | {
            "channel": {"id": message.channel},
            "message": local._wire(message),
            "actions": [action | {"action_ts": f"{time.time():.6f}"}],
        }  # and no response_url: the link has nowhere private to go
        assert (await local.send(click)).status_code == 200
        (logged,) = [r for r in caplog.records if "response_url" in r.getMessage()]
        assert logged.getMessage() == (
            "A Slack interaction came without a response_url; its secure-page link (or why there is none) was not shown"
        )
        assert "/elicit/" not in caplog.text

        await local.click(ALICE, message, "Answer on a secure page")  # with a response_url: the link arrives
        [link] = re.findall(r"<(http://[^|>]+)\|", (await local.ephemeral_for(ALICE)).text)
        async with httpx.AsyncClient() as browser:
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', (await browser.get(link)).text)
            assert csrf is not None
            form = {"ek:csrf": csrf.group(1), "ek:action": "accept", "user": "ops", "password": "hunter2"}
            assert (await browser.post(link, data=form)).status_code == 200
        assert await result() == "ops:hunter2"


async def test_markup_and_mentions_from_the_question_stay_literal_in_slack_messages_and_their_text() -> None:
    merge = "Merge [github.com/x](https://evil.example) <!channel> *now*?"
    async with LocalSlack().serving() as local:
        channel = SlackChannel(local.token, local.signing_secret, api_url=local.api_url)
        asked = Prompt("q", "t0k3n", merge, _one({"type": "boolean"}), "#deploys", time.time() + 60, "tool")
        ref = await channel.post(asked)
        message = await local.message(1)
        escaped = "Merge [github.com/x](https://evil.example) &lt;!channel&gt; *now*?"
        assert message.text == escaped  # the notification text is mrkdwn too: <!channel> would notify everyone
        assert message.blocks[0]["text"] == {"type": "mrkdwn", "text": escaped, "verbatim": True}  # no auto-links

        mallory = Responder("slack", "U0MALLORY", "<!here|alice>")
        await channel.close(asked, ref, Closing("accept", mallory, "value: <https://evil.example|True>"))
        closed = "Answered by &lt;!here|alice&gt;: value: &lt;https://evil.example|True&gt;"
        assert message.text == closed
        assert message.blocks[0]["text"]["text"] == escaped
        assert message.blocks[-1]["elements"] == [{"type": "mrkdwn", "text": closed, "verbatim": True}]


# -- rendering (no IO) ---------------------------------------------------------------------------------

EVERY_FIELD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "flag": {"type": "boolean", "title": "Notify?", "default": True},
        "name": {"type": "string", "minLength": 2, "maxLength": 40, "description": "Who"},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri", "default": "https://example.com"},
        "day": {"type": "string", "format": "date", "default": "2026-12-01"},
        "at": {"type": "string", "format": "date-time", "default": "2026-12-01T09:30:00Z"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
        "ratio": {"type": "number", "minimum": 0.5},
        "one": {"type": "string", "enum": ["a", "b"], "default": "b"},
        "titled": {"type": "string", "oneOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
        "many": {"type": "array", "items": {"type": "string", "enum": ["p", "q", "r"]}, "maxItems": 2},
        "titled_many": {"type": "array", "items": {"anyOf": [{"const": "m", "title": "Em"}]}, "default": ["m"]},
    },
    "required": ["name", "count", "one"],
}


def _prompt(schema: Mapping[str, Any], token: str = "t0k3n", secret: tuple[str, ...] = ()) -> Prompt:
    return Prompt("q", token, "Fill <this> in", schema, "#deploys", time.time() + 60, "tool", secret)


def _one(prop: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": prop}, "required": ["value"]}


def test_every_field_type_has_a_control_in_the_modal() -> None:
    view = modal_view(_prompt(EVERY_FIELD), "{}")
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    kinds = {name: block["element"]["type"] for name, block in inputs.items()}
    assert kinds == {
        "flag": "checkboxes", "name": "plain_text_input", "email": "email_text_input", "site": "url_text_input",
        "day": "datepicker", "at": "datetimepicker", "count": "number_input", "ratio": "number_input",
        "one": "static_select", "titled": "static_select",
        "many": "multi_static_select", "titled_many": "multi_static_select",
    }  # fmt: skip
    assert all(b["element"]["action_id"] == "value" for b in inputs.values())
    assert {n for n, b in inputs.items() if not b["optional"]} == {"name", "count", "one"}
    assert inputs["flag"]["element"]["initial_options"][0]["value"] == "true"
    assert inputs["name"]["element"].items() >= {"min_length": 2, "max_length": 40, "multiline": False}.items()
    assert inputs["name"]["hint"]["text"] == "Who"
    assert inputs["site"]["element"]["initial_value"] == "https://example.com"
    assert inputs["day"]["element"]["initial_date"] == "2026-12-01"
    assert inputs["at"]["element"]["initial_date_time"] == 1796117400
    count = {"is_decimal_allowed": False, "min_value": "1", "max_value": "9", "initial_value": "3"}
    assert inputs["count"]["element"].items() >= count.items()
    assert inputs["ratio"]["element"].items() >= {"is_decimal_allowed": True, "min_value": "0.5"}.items()
    assert inputs["one"]["element"]["initial_option"]["value"] == "1"
    assert [o["text"]["text"] for o in inputs["titled"]["element"]["options"]] == ["Ex", "Why"]
    assert inputs["many"]["element"]["max_selected_items"] == 2
    assert inputs["titled_many"]["element"]["initial_options"][0]["text"]["text"] == "Em"
    assert view["blocks"][0]["text"]["text"] == "Fill &lt;this&gt; in"


def test_modal_values_come_back_as_the_schemas_types() -> None:
    def typed(entry: dict[str, Any]) -> dict[str, Any]:
        return {"value": entry}

    values = {
        "flag": typed({"type": "checkboxes", "selected_options": []}),
        "name": typed({"type": "plain_text_input", "value": "Ada"}),
        "email": typed({"type": "email_text_input", "value": None}),
        "day": typed({"type": "datepicker", "selected_date": "2026-12-24"}),
        "at": typed({"type": "datetimepicker", "selected_date_time": 1796117400}),
        "count": typed({"type": "number_input", "value": "7"}),
        "ratio": typed({"type": "number_input", "value": "two"}),
        "one": typed({"type": "static_select", "selected_option": {"value": "0"}}),
        "titled": typed({"type": "static_select", "selected_option": None}),
        "many": typed({"type": "multi_static_select", "selected_options": [{"value": "2"}, {"value": "0"}]}),
        "titled_many": typed({"type": "multi_static_select", "selected_options": []}),
    }
    assert content_of(EVERY_FIELD, values) == {
        "flag": False,
        "name": "Ada",
        "day": "2026-12-24",
        "at": "2026-12-01T09:30:00Z",
        "count": 7,
        "ratio": "two",  # passed on as typed: the desk refuses it by name
        "one": "a",
        "many": ["r", "p"],
    }


def test_the_message_offers_the_controls_the_question_needs() -> None:
    def controls(schema: Mapping[str, Any], secret: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        actions = message_blocks(_prompt(schema, secret=secret))[-1]
        return [(e["type"], e["action_id"]) for e in actions["elements"]]

    decline = ("button", "elicitkit.decline")
    assert controls(_one({"type": "boolean"})) == [("button", "elicitkit.yes"), ("button", "elicitkit.no"), decline]
    five = _one({"type": "string", "enum": list("abcde")})
    assert controls(five) == [("button", f"elicitkit.choose.{i}") for i in range(5)] + [decline]
    assert controls(_one({"type": "string", "enum": list("abcdef")})) == [
        ("static_select", "elicitkit.select"),
        decline,
    ]
    assert controls(_one({"type": "string"})) == [("button", "elicitkit.answer"), decline]
    assert controls(EVERY_FIELD, secret=("name",)) == [("button", "elicitkit.secure"), decline]
    assert controls({"type": "object", "properties": {}}) == [("button", "elicitkit.ok"), decline]
    buttons = message_blocks(_prompt(_one({"type": "boolean"})))[-1]["elements"]
    assert {b["value"] for b in buttons} == {"t0k3n"}
    assert click_content(five, "choose.3", {}) == {"value": "d"}
    assert click_content(five, "choose.9", {}) is None


def test_fields_slack_cannot_show_are_refused_by_name() -> None:
    refusals = {
        "free list": _one({"type": "array", "items": {"type": "string"}}),
        "101 choices": _one({"type": "string", "enum": [str(n) for n in range(101)]}),
        "object": _one({"type": "object"}),
        "huge minimum": _one({"type": "string", "minLength": 5000}),
    }
    for why, schema in refusals.items():
        with pytest.raises(ChannelRefused, match="field 'value'"):
            message_blocks(_prompt(schema))
        assert why
    with pytest.raises(ChannelRefused, match="2000"):
        message_blocks(_prompt(_one({"type": "boolean"}), token="t" * 2001))


def test_without_slack_sdk_the_channel_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "slack_sdk.web.async_client", None)
    with pytest.raises(ImportError, match=re.escape("pip install 'elicitkit[slack]'")):
        SlackChannel("xoxb-1", "secret")
