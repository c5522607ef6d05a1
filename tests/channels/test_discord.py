"""The Discord channel against a local Discord that speaks Discord's wire format (tests/channels/discord_server.py).

Each scene serves a real MCP server over streamable HTTP (whose app also serves the channel's
Interactions Endpoint), a local Discord, and a real MCP client calling a tool that asks in Discord.
People click, pick and fill modals through signed interactions, exactly as Discord posts them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field, SecretStr

from elicitkit import Accepted, Declined, Elicitation, ElicitationTimeout
from elicitkit.channels._discord import DiscordChannel, DiscordError, Signatures
from elicitkit.channels._discord_components import closed_message, layout_of, modal, question_message
from elicitkit.channels._discord_replies import content_of_modal
from elicitkit.channels.base import ChannelRefused, Closing, Prompt, Responder, discord
from tests.channels.discord_server import CHANNEL, Interactions, LocalDiscord, Reply, User, response_problems
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio

ADA = User("80351110224678912", "ada", "Ada Lovelace")
BOB = User("80351110224678913", "bob")
VIA = discord(CHANNEL)
THANKS = "Thanks, your answer was recorded."
CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."


class Release(BaseModel):
    version: str = Field(title="Version", min_length=1, description="The tag to ship")
    replicas: int = Field(title="Replicas", ge=1, le=10)
    region: Literal["eu", "us"] = Field(title="Region")
    notify: bool = Field(default=False, title="Tell the team")
    day: dt.date = Field(title="Release day")


@dataclass
class Scene:
    discord: LocalDiscord
    people: Interactions
    client: Client
    hitl: Elicitation
    tools: anyio.abc.TaskGroup

    def call(self, tool: str) -> Running:
        running = Running()

        async def call() -> None:
            running.result = await self.client.call_tool(tool, {})
            running.done.set()

        self.tools.start_soon(call)
        return running


@dataclass
class Running:
    """A tool call going on while the test plays the people in Discord."""

    result: CallToolResult | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    async def text(self) -> str:
        with anyio.fail_after(5):
            await self.done.wait()
        assert self.result is not None
        return text_of(self.result)


@asynccontextmanager
async def in_discord(tools: Callable[[MCPServer, Elicitation], None], mode: str = "auto") -> AsyncIterator[Scene]:
    """A server whose `tools` ask in Discord, the local Discord, and a client over real HTTP."""
    local = LocalDiscord()
    async with local.serve() as api_url:
        server = MCPServer("deploy-desk")
        hitl = Elicitation(server, channels=[DiscordChannel(local.bot_token, local.public_key, api_url=api_url)])
        tools(server, hitl)
        async with serving(hitl) as url, Client(url, mode=mode) as client, anyio.create_task_group() as tg:
            people = Interactions(local, f"{hitl.public_url}/elicit/channels/discord/interactions")
            yield Scene(local, people, client, hitl, tg)


def asks_to_deploy(approvers: set[str] | None = None, timeout: float = 10) -> Callable[[MCPServer, Elicitation], None]:
    def tools(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def deploy(ctx: Context) -> str:
            try:
                answer = await hitl.confirm(
                    ctx, "Deploy v2.1?", via=discord(CHANNEL, approvers=approvers), timeout=timeout
                )
            except ElicitationTimeout:
                return "timed out"
            if isinstance(answer, Declined):
                return f"declined: {answer.reason}" if answer.reason else "declined"
            assert isinstance(answer, Accepted)
            return f"deploy={answer.data}"

    return tools


# -- the whole way round ----------------------------------------------------------------------------------------


async def test_a_confirm_a_choice_a_multi_select_and_a_form_are_answered_in_discord_on_both_eras(mode: str) -> None:
    def tools(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ship(ctx: Context) -> str:
            go = await hitl.confirm(ctx, "Ship the release?", via=VIA)
            where = await hitl.choice(ctx, "Where to?", ["staging", "production", "canary"], via=VIA)
            tell = await hitl.choices(ctx, "Who to tell?", ["ops", "qa", "docs", "sales"], min_items=1, via=VIA)
            details = await hitl.elicit(ctx, "Release details", Release, via=VIA)
            assert isinstance(go, Accepted) and isinstance(where, Accepted)
            assert isinstance(tell, Accepted) and isinstance(details, Accepted)
            return f"go={go.data} where={where.data} tell={tell.data} release={details.data.model_dump_json()}"

    async with in_discord(tools, mode) as scene:
        running = scene.call("ship")
        confirm = await scene.discord.message(1)
        assert confirm["embeds"][0]["description"] == "Ship the release?"
        clicked = await scene.people.click(confirm, "Approve", ADA)
        assert clicked.ephemeral and clicked.content == THANKS

        choice = await scene.discord.message(2)
        assert (await scene.people.click(choice, "production", BOB)).content == THANKS

        multi = await scene.discord.message(3)
        assert (await scene.people.choose(multi, ["ops", "docs"], ADA)).content == THANKS

        form = await scene.discord.message(4)
        opened = await scene.people.click(form, "Answer…", ADA)
        assert opened.json["type"] == 9
        assert opened.json["data"]["components"][4]["component"]["placeholder"] == "YYYY-MM-DD"
        answers = {
            "Version": "v2.1",
            "Replicas": "3",
            "Region": "eu",
            "Tell the team": True,
            "Release day": "2026-05-04",
        }
        assert (await scene.people.submit(form, opened, answers, ADA)).content == THANKS

        assert await running.text() == (
            "go=True where=production tell=['ops', 'docs'] release="
            '{"version":"v2.1","replicas":3,"region":"eu","notify":true,"day":"2026-05-04"}'
        )
        outcomes = [
            (await scene.discord.edit_of(m))["embeds"][0]["fields"][0]["value"] for m in (confirm, choice, multi, form)
        ]
        assert outcomes == [
            "Answered by Ada Lovelace: value: True",
            "Answered by bob: value: production",
            "Answered by Ada Lovelace: value: ops, docs",
            "Answered by Ada Lovelace: Version: v2.1; Replicas: 3; Region: eu; Tell the team: True; Release day: 2026-05-04",
        ]


async def test_discord_is_answered_with_pong_when_it_pings_the_endpoint() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        reply = await scene.people.ping()
        assert (reply.status, reply.json) == (200, {"type": 1})


# -- what is refused ----------------------------------------------------------------------------------------------


async def test_an_interaction_with_a_forged_or_altered_signature_is_refused_and_nothing_is_delivered() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        button = message["components"][0]["components"][0]
        click = scene.people.payload(3, {"custom_id": button["custom_id"], "component_type": 2}, ADA, message)

        as_bob = {**click, "member": {**click["member"], "user": BOB.to_json()}}  # under the original signature
        forged = await scene.people.send(click, key=Ed25519PrivateKey.generate())
        altered = await scene.people.send(click, body=json.dumps(as_bob, separators=(",", ":")).encode())
        unsigned = await scene.people.post(forged.request[0], {"Content-Type": "application/json"})

        assert [(r.status, r.text) for r in (forged, altered, unsigned)] == [
            (401, "Invalid request signature"),
            (401, "Invalid request signature"),
            (401, "Missing X-Signature-Ed25519 or X-Signature-Timestamp"),
        ]
        assert scene.discord.edits() == []
        # The first genuine click takes the answer: nothing before it did.
        assert (await scene.people.send(click)).content == THANKS
        assert await running.text() == "deploy=True"


async def test_an_interaction_with_a_stale_or_future_timestamp_is_refused() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        button = message["components"][0]["components"][0]
        click = scene.people.payload(3, {"custom_id": button["custom_id"], "component_type": 2}, ADA, message)
        stale = await scene.people.send(click, timestamp=time.time() - 301)
        future = await scene.people.send(click, timestamp=time.time() + 301)
        assert (stale.status, stale.text) == (401, "Stale request timestamp")
        assert (future.status, future.text) == (401, "Stale request timestamp")
        assert scene.discord.edits() == []
        assert (await scene.people.click(message, "Reject", ADA)).content == THANKS
        assert await running.text() == "deploy=False"


async def test_a_replayed_interaction_is_refused() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        first = await scene.people.click(message, "Approve", ADA)
        replayed = await scene.people.post(*first.request)
        assert first.content == THANKS
        assert (replayed.status, replayed.text) == (401, "Replayed request")
        assert await running.text() == "deploy=True"


async def test_a_click_on_a_question_that_expired_is_refused_even_when_discord_kept_its_buttons() -> None:
    async with in_discord(asks_to_deploy(timeout=0.5)) as scene:
        scene.discord.failures["PATCH"].append(503)  # the message's update fails: its buttons stay
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        assert await running.text() == "timed out"
        await scene.discord.edit_of(message)
        assert [c.status for c in scene.discord.edits()] == [503]
        late = await scene.people.click(message, "Approve", ADA)
        assert late.ephemeral and late.content == CLOSED


async def test_someone_who_is_not_an_approver_is_told_so_and_the_question_waits_for_an_approver() -> None:
    async with in_discord(asks_to_deploy(approvers={ADA.id})) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        refused = await scene.people.click(message, "Approve", BOB)
        assert refused.ephemeral and refused.content == "Sorry bob, you are not one of the approvers of this question."
        assert scene.discord.edits() == [] and not running.done.is_set()

        # Ada answers where she reads it (a DM carries `user` instead of `member.user`).
        assert (await scene.people.click(message, "Approve", ADA, dm=True)).content == THANKS
        assert await running.text() == "deploy=True"
        assert (await scene.discord.edit_of(message))["embeds"][0]["fields"][0]["value"] == (
            "Answered by Ada Lovelace: value: True"
        )


async def test_an_invalid_form_is_refused_with_the_reason_and_the_question_stays_open() -> None:
    def tools(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def plan(ctx: Context) -> str:
            answer = await hitl.elicit(ctx, "Release details", Release, via=VIA)
            assert isinstance(answer, Accepted)
            return f"replicas={answer.data.replicas}"

    async with in_discord(tools) as scene:
        running = scene.call("plan")
        message = await scene.discord.message(1)
        answers = {"Version": "v2", "Replicas": "twelve", "Region": "us", "Release day": "2026-05-04"}
        opened = await scene.people.click(message, "Answer…", ADA)
        refused = await scene.people.submit(message, opened, answers, ADA)
        assert refused.ephemeral and refused.content.startswith("That answer is not valid:")
        assert "replicas" in refused.content and scene.discord.edits() == []

        opened = await scene.people.click(message, "Answer…", ADA)
        assert (await scene.people.submit(message, opened, answers | {"Replicas": "4"}, ADA)).content == THANKS
        assert await running.text() == "replicas=4"


# -- declining, closing ---------------------------------------------------------------------------------------------


async def test_decline_in_discord_declines_the_question_and_the_message_says_who_declined(mode: str) -> None:
    async with in_discord(asks_to_deploy(), mode) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        assert (await scene.people.decline(message, BOB)).content == THANKS
        assert await running.text() == "declined"
        edit = await scene.discord.edit_of(message)
        assert edit["components"] == []
        assert edit["embeds"][0]["fields"] == [{"name": "Outcome", "value": "Declined by bob"}]
        assert "elicitkit · " not in str(scene.discord.messages[message["id"]]["embeds"])


async def test_decline_in_discord_asks_why_and_the_tool_and_the_message_read_the_reason(mode: str) -> None:
    async with in_discord(asks_to_deploy(), mode) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        opened = await scene.people.click(message, "Decline", BOB)
        assert opened.json["type"] == 9
        assert response_problems(opened.json) == {}
        (label,) = opened.json["data"]["components"]
        assert (label["label"], label["component"]["required"], label["component"]["max_length"]) == (
            "Reason (optional)",
            False,
            1000,
        )
        assert scene.discord.edits() == []  # opening the modal answers nothing
        reply = await scene.people.submit(
            message, opened, {"Reason (optional)": "Freeze until **Monday** @everyone"}, BOB
        )
        assert reply.content == THANKS
        assert await running.text() == "declined: Freeze until **Monday** @everyone"
        edit = await scene.discord.edit_of(message)
        (outcome,) = edit["embeds"][0]["fields"]
        assert outcome["value"] == "Declined by bob: Freeze until \\*\\*Monday\\*\\* \\@everyone"
        assert edit["allowed_mentions"] == {"parse": []}


async def test_a_decline_modal_for_a_closed_question_or_another_message_answers_nothing() -> None:
    async with in_discord(asks_to_deploy(), "auto") as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        opened = await scene.people.click(message, "Decline", BOB)
        forged = dict(opened.json, data=dict(opened.json["data"], custom_id="ek:d:1234"))
        assert "not" in (await scene.people.submit(message, Reply(200, forged, "", (b"", {})), {}, BOB)).content.lower()
        await scene.people.click(message, "Approve", ADA)
        assert await running.text() == "deploy=True"
        late = await scene.people.submit(message, opened, {"Reason (optional)": "too late"}, BOB)
        assert late.content == "This is not an open elicitkit question."  # the closed message holds no token


async def test_a_second_answer_after_the_first_is_told_the_question_is_closed() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        assert (await scene.people.click(message, "Approve", ADA)).content == THANKS
        assert await running.text() == "deploy=True"
        late = scene.people.payload(3, {"custom_id": "ek:no", "component_type": 2}, BOB, message)
        assert (await scene.people.send(late)).content == CLOSED


async def test_a_rate_limited_post_is_retried_once_after_retry_after() -> None:
    async with in_discord(asks_to_deploy()) as scene:
        scene.discord.rate_limits.append(0.01)
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        assert [(c.method, c.status) for c in scene.discord.calls] == [("POST", 429), ("POST", 200)]
        await scene.people.click(message, "Approve", ADA)
        assert await running.text() == "deploy=True"


async def test_a_post_discord_refuses_or_cannot_take_fails_with_discords_reason() -> None:
    local = LocalDiscord()
    confirm = prompt(one({"type": "boolean"}))
    async with local.serve() as api_url:
        with pytest.raises(DiscordError, match="401 401: Unauthorized"):
            await DiscordChannel("not-the-token", local.public_key, api_url=api_url).post(confirm)
        channel = DiscordChannel(local.bot_token, local.public_key, api_url=api_url)
        with pytest.raises(DiscordError, match="404 Unknown Channel"):
            await channel.post(prompt({"type": "object", "properties": {}}, target="1234"))
        local.rate_limits.append(60)  # longer than a tool should be held: not waited for
        with pytest.raises(DiscordError, match="429 You are being rate limited"):
            await channel.post(confirm)
    with pytest.raises(DiscordError, match="Could not reach Discord"):
        await channel.post(confirm)  # the local Discord is gone


# -- secrets ---------------------------------------------------------------------------------------------------


class Login(BaseModel):
    user: str = Field(title="User")
    password: SecretStr = Field(title="Password")


async def test_a_question_with_secret_fields_sends_a_one_time_link_only_to_the_person_who_clicks() -> None:
    def tools(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def login(ctx: Context) -> str:
            answer = await hitl.secure_form(ctx, "Sign in to the registry", Login, via=VIA)
            assert isinstance(answer, Accepted)
            return f"user={answer.data.user} password={len(answer.data.password.get_secret_value())} characters"

    async with in_discord(tools) as scene:
        running = scene.call("login")
        message = await scene.discord.message(1)
        assert [b["label"] for b in message["components"][0]["components"]] == ["Answer on a secure page", "Decline"]
        link = await scene.people.click(message, "Answer on a secure page", ADA)
        assert link.ephemeral
        url = link.json["data"]["components"][0]["components"][0]["url"]
        assert url.startswith(f"{scene.hitl.public_url}/elicit/f/") and url in link.content
        assert url not in str([c.body for c in scene.discord.calls])  # never in a message everyone sees

        async with httpx.AsyncClient() as browser:
            page = await browser.get(url)
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            fields = {"ek:csrf": csrf.group(1), "ek:action": "accept", "user": "ada", "password": "hunter22"}
            assert (await browser.post(url, data=fields)).status_code == 200
        assert await running.text() == "user=ada password=8 characters"
        edit = await scene.discord.edit_of(message)
        assert edit["embeds"][0]["fields"][0]["value"] == "Answered by Ada Lovelace: User: ada; Password: ••••••"


# -- rendering, field by field -----------------------------------------------------------------------------------


def prompt(schema: dict[str, Any], secret: tuple[str, ...] = (), target: str = CHANNEL) -> Prompt:
    return Prompt("q1", "t" * 150, "Pick", schema, target, 2_000_000_000.0, "deploy", secret)


def one(prop: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": prop}, "required": ["value"]}


CHOICES = [f"option {i}" for i in range(26)]


@pytest.mark.parametrize(
    ("schema", "layout", "controls"),
    [
        (one({"type": "boolean"}), "confirm", ["Approve", "Reject", "Decline"]),
        (one({"type": "string", "enum": ["a", "b"]}), "buttons", ["a", "b", "Decline"]),
        (one({"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}]}), "buttons", ["Alpha", "Decline"]),
        (one({"type": "string", "enum": CHOICES[:6]}), "select", ["select", "Decline"]),
        (one({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}), "select", ["select", "Decline"]),
        (one({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}), "select", ["select", "Decline"]),
        (one({"type": "string"}), "form", ["Answer…", "Decline"]),
        (one({"type": "string", "format": "email"}), "form", ["Answer…", "Decline"]),
        (one({"type": "number", "minimum": 0}), "form", ["Answer…", "Decline"]),
        ({"type": "object", "properties": {}}, "submit", ["Submit", "Decline"]),
    ],
)
def test_every_one_field_question_renders_as_discord_controls(
    schema: dict[str, Any], layout: str, controls: list[str]
) -> None:
    asked = prompt(schema)
    assert layout_of(asked) == layout
    body = question_message(asked)
    shown = [c.get("label", "select") for row in body["components"] for c in row["components"]]
    assert shown == controls
    assert body["embeds"][0]["footer"]["text"] == "elicitkit · " + "t" * 150
    assert body["allowed_mentions"] == {"parse": []}


def test_every_field_type_in_a_form_becomes_a_modal_control_and_comes_back_typed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "maxLength": 500, "default": "Ada"},
            "count": {"type": "integer", "minimum": 1, "maximum": 9},
            "ratio": {"type": "number"},
            "ok": {"type": "boolean", "default": True},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}, "minItems": 1},
        },
        "required": ["name", "count", "tags"],
    }
    asked = prompt(schema)
    form = modal(asked, "42")
    controls = [label["component"] for label in form["components"]]
    assert form["custom_id"] == "ek:m:42"
    assert [c["type"] for c in controls] == [4, 4, 4, 23, 3]
    text = {"type": 4, "custom_id": "ek:f:0", "style": 2, "required": True, "max_length": 500, "value": "Ada"}
    assert controls[0] == text  # a paragraph: more than 200 characters allowed
    assert controls[1]["placeholder"] == "A whole number from 1 to 9"
    assert controls[3]["default"] is True
    assert (controls[4]["min_values"], controls[4]["max_values"], controls[4]["required"]) == (1, 3, True)

    submitted = [
        {"type": 18, "component": {"type": 4, "custom_id": "ek:f:0", "value": " Grace "}},
        {"type": 18, "component": {"type": 4, "custom_id": "ek:f:1", "value": "7"}},
        {"type": 18, "component": {"type": 4, "custom_id": "ek:f:2", "value": ""}},
        {"type": 18, "component": {"type": 23, "custom_id": "ek:f:3", "value": False}},
        {"type": 18, "component": {"type": 3, "custom_id": "ek:f:4", "values": ["0", "2"]}},
    ]
    assert content_of_modal(asked, submitted) == {"name": "Grace", "count": 7, "ok": False, "tags": ["x", "z"]}
    legacy = [{"type": 1, "components": [{"type": 4, "custom_id": "ek:f:2", "value": "2.5"}]}]
    assert content_of_modal(asked, legacy) == {"ratio": 2.5}
    assert content_of_modal(asked, [{"type": 18, "component": {"type": 4, "custom_id": "ek:f:1", "value": "2.5"}}]) == {
        "count": 2.5  # not a whole number: passed on as the number typed, for the desk to refuse with its reason
    }


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            one({"type": "string", "enum": CHOICES}),
            "field 'value' has 26 choices, and a Discord select menu holds at most 25",
        ),
        (one({"type": "string", "minLength": 5000}), "field 'value' needs at least 5000 characters"),
        (one({"type": "object"}), "field 'value' has type 'object'"),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(6)}},
            "the question has 6 fields, and a Discord modal holds at most 5",
        ),
    ],
)
def test_a_field_discord_cannot_show_is_refused_with_its_name_and_the_reason(
    schema: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ChannelRefused, match=re.escape(reason)):
        question_message(prompt(schema))


MERGE = "Merge [github.com/x](https://evil.example) <!channel> *now*?"


def shown(markdown: str) -> str:
    """What Discord shows for `markdown` made only of text and backslash escapes."""
    return re.sub(r"\\(.)", r"\1", markdown)


def test_markdown_mentions_and_links_from_the_question_stay_literal_in_discord_embeds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "who": {"type": "string", "title": "<@80351110224678912> **or** @everyone"},
            "why": {"type": "string", "title": "# Why\n- [docs](https://evil.example)"},
        },
        "required": ["who"],
    }
    asked = Prompt("q1", "t" * 150, MERGE, schema, CHANNEL, 2_000_000_000.0, "deploy")
    body = question_message(asked)
    embed = body["embeds"][0]
    assert embed["description"] == r"Merge \[github.com/x\]\(https\://evil.example\) \<!channel\> \*now\*?"
    assert shown(embed["description"]) == MERGE
    assert embed["fields"][1]["value"] == (
        "• \\<\\@80351110224678912\\> \\*\\*or\\*\\* \\@everyone (required)\n"
        "• \\# Why\n\\- \\[docs\\]\\(https\\://evil.example\\)"
    )
    assert body["allowed_mentions"] == {"parse": []}
    assert modal(asked, "42")["components"][0]["label"] == "<@80351110224678912> **or** @everyone"  # plain text

    mallory = Responder("discord", "80351110224678914", "@here ||Ada Lovelace||")
    closed = closed_message(asked, Closing("accept", mallory, "who: <@80351110224678912>; why: > `now`"))["embeds"][0]
    assert closed["description"] == embed["description"]
    assert closed["fields"][0]["value"] == (
        r"Answered by \@here \|\|Ada Lovelace\|\|: who: \<\@80351110224678912\>; why: \> \`now\`"
    )

    long = question_message(Prompt("q1", "t" * 150, "*" * 3000, schema, CHANNEL, 2e9))["embeds"][0]["description"]
    assert len(long) <= 4096
    assert long.endswith("\\*…")  # clipped between escapes, never inside one


async def test_a_bad_public_key_an_api_in_the_clear_or_a_question_without_a_channel_id_is_refused() -> None:
    key = Ed25519PrivateKey.generate().public_key().public_bytes_raw().hex()
    with pytest.raises(ValueError, match="Ed25519 public key in hex"):
        DiscordChannel("token", "not-hex")
    with pytest.raises(ValueError, match="https"):
        DiscordChannel("token", key, api_url="http://discord.example.com/api/v10")
    with pytest.raises(ChannelRefused, match="channel id"):
        await DiscordChannel("token", key).post(prompt(one({"type": "boolean"}), target="#deploys"))


def test_signatures_are_remembered_only_for_the_window_and_at_most_a_bounded_number() -> None:
    key = Ed25519PrivateKey.generate()
    signatures = Signatures(key.public_key(), tolerance=10, remember=2)

    def signed(body: bytes, at: float) -> tuple[str, str, bytes]:
        stamp = str(int(at))
        return key.sign(stamp.encode() + body).hex(), stamp, body

    first = signed(b"{}", 1000)
    assert signatures.check(*first, now=1000) is None
    assert signatures.check(*first, now=1005) == "Replayed request"
    assert signatures.check(*first, now=1011) == "Stale request timestamp"
    for n in range(3):
        assert signatures.check(*signed(b'{"n":%d}' % n, 1000), now=1000) is None
    assert len(signatures._seen) == 2
