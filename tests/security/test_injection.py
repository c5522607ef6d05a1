"""HTML, JavaScript and markdown injection: every string a question carries stays text wherever it is shown.

One hostile question — its message, field titles and descriptions, option titles and values, text and URL
defaults each carrying a `<script>`, an event handler, a masked link, a Slack link, and `@everyone` — is
shown on elicitkit's secure form page, in the web inbox, and in Slack, Discord and Teams messages (and the
forms they open). In HTML nothing becomes a tag, a handler or a link, and the text is there, escaped; in
Slack's mrkdwn `<`, `>` and `&` are escaped and URLs are not linked; in Discord's and Teams' markdown links,
bare URLs and mentions are escaped, and Discord is told to ping nobody. (A tool's own URL only ever becomes
the `Location` of the `/elicit/go/` hop: tests/security/test_redirects.py.)
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from html.parser import HTMLParser
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Elicitation
from elicitkit.channels import SlackChannel, WebInbox
from elicitkit.channels.base import Via, discord, slack, teams, web
from tests.channels.discord_server import CHANNEL
from tests.channels.slack_server import LocalSlack
from tests.channels.test_discord import ADA, in_discord
from tests.channels.test_slack import ALICE
from tests.channels.test_teams import DEPLOYS
from tests.channels.test_teams import desk as teams_desk
from tests.channels.test_web_inbox import header_identity, person
from tests.scenes import new_server, serving
from tests.test_urlmode import Links, assert_locked_down, open_form, press

pytestmark = pytest.mark.anyio


def hostile(where: str) -> str:
    return (
        f"{where}: <script>alert('{where}')</script><img src=x onerror=alert('{where}')><svg onload=alert(1)> "
        f"[{where}](https://evil.example/{where}) <https://evil.example/{where}|{where}> <!channel> @everyone"
    )


EVIL_VALUE = "\"'><img src=x onerror=alert('value')>"
EVIL_URL = "javascript:alert(document.cookie)//<b>url</b>"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": "string", "title": hostile("title"), "description": hostile("description"), "default": hostile("default")},
        "homepage": {"type": "string", "format": "uri", "title": "Homepage", "default": EVIL_URL},
        "plan": {"type": "string", "title": "Plan", "oneOf": [{"const": EVIL_VALUE, "title": hostile("option")}, {"const": "basic", "title": "Basic"}]},
        "checks": {"type": "array", "title": "Checks", "items": {"anyOf": [{"const": "lint", "title": hostile("multi")}, {"const": "unit", "title": "Unit"}]}},
        "go": {"type": "boolean", "title": hostile("boolean"), "default": False},
    },
    "required": ["plan"],
}  # fmt: skip
SHOWN_AS_TEXT = ["message", "title", "description", "option", "multi", "boolean"]


# --- HTML: the secure form page and the web inbox ----------------------------------------------------------


class Parsed(HTMLParser):
    """Every tag with its attributes, the text inside <script> elements, and all other text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text = ""
        self.text = ""
        self._in_script = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_text += data
        else:
            self.text += data


def assert_inert_html(page: str, *, own_scripts: frozenset[str] = frozenset()) -> Parsed:
    parsed = Parsed(page)
    assert parsed.script_text.strip() == ""
    for tag, attrs in parsed.tags:
        assert tag not in ("img", "svg", "iframe", "object", "embed", "base"), (tag, attrs)
        if tag == "script":
            assert attrs.get("src") in own_scripts, attrs
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src", "action", "formaction"):
                assert "evil.example" not in (value or "") and not (value or "").startswith("javascript:"), (tag, attrs)
    return parsed


def assert_shown_literally(parsed: Parsed) -> None:
    for where in SHOWN_AS_TEXT:
        assert hostile(where) in parsed.text, where
    values = {attrs.get("value") for _, attrs in parsed.tags}
    assert {hostile("default"), EVIL_URL, EVIL_VALUE} <= values


async def test_every_string_of_a_question_stays_text_on_the_secure_form_page(mode: str) -> None:
    server, hitl = new_server("injection", timeout=10)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await hitl.secure_form(ctx, hostile("message"), SCHEMA)).action

    links = Links()
    async with (
        serving(hitl) as url,
        Client(url, mode=mode, elicitation_callback=links) as client,
        httpx.AsyncClient() as browser,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(client.call_tool, "ask", {})
        link = (await links.next()).url
        page = await open_form(browser, link)
        refused = await press(browser, link, page, "accept", {"note": hostile("answer"), "homepage": "x"})
        assert refused.status_code == 422
        await press(browser, link, page, "decline")
    assert_locked_down(page.response)
    assert_shown_literally(assert_inert_html(page.response.text))
    assert_locked_down(refused)  # shown again with what was typed: the answer is as inert as the question
    assert hostile("answer") in {attrs.get("value") for _, attrs in assert_inert_html(refused.text).tags}


async def test_every_string_of_a_question_stays_text_in_the_web_inbox(mode: str) -> None:
    server, hitl = new_server("injection", timeout=10, channels=[WebInbox()], page_identity=header_identity)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await hitl.elicit(ctx, hostile("message"), SCHEMA, via=web("alice"))).action

    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serving(hitl))
        alice = await stack.enter_async_context(person(url, "alice"))
        events = await stack.enter_async_context(alice.events())
        client = await stack.enter_async_context(Client(url, mode=mode))
        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(client.call_tool, "ask", {})
        question = await alice.arrival(events, hostile("message"))
        pages = [await alice.http.get("/elicit/inbox"), await alice.http.get("/elicit/inbox", params={"part": "list"})]
        assert (await alice.answer(question, "decline")).status_code == 200
    for response in pages:
        assert response.status_code == 200
        assert_shown_literally(assert_inert_html(response.text, own_scripts=frozenset({"/elicit/static/inbox.js"})))
    assert "script-src 'self'" in pages[0].headers["content-security-policy"]  # the inbox's own script, no inline


# --- chats ---------------------------------------------------------------------------------------------------

LINKS = [(r"(?<!\\)\]\(", "a masked link"), (r"(?<!\\)://", "a bare URL")]
DISCORD_MENTIONS = [(r"(?<!\\)@(everyone|here)", "a mass mention"), (r"(?<!\\)<[@#!&]", "a mention")]
TEAMS_MENTIONS = [(r"(?<!\\)<at>", "a mention")]  # Teams notifies only for <at> with an entity; "@x" is text


def assert_none_of(patterns: list[tuple[str, str]], text: str) -> None:
    for pattern, what in patterns:
        assert re.search(pattern, text) is None, f"{what} in {text!r}"


def objects(tree: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in `tree`, depth first."""
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from objects(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from objects(item)


def asker(via: Via) -> Any:
    def tools(server: MCPServer, hitl: Elicitation) -> None:
        @server.tool()
        async def ask(ctx: Context) -> str:
            return (await hitl.elicit(ctx, hostile("message"), SCHEMA, via=via)).action

    return tools


@asynccontextmanager
async def slack_desk(mode: str) -> AsyncIterator[tuple[LocalSlack, Client]]:
    async with LocalSlack().serving() as local:
        server, hitl = new_server(
            "injection", channels=[SlackChannel(local.token, local.signing_secret, api_url=local.api_url)]
        )
        asker(slack("#deploys"))(server, hitl)
        async with serving(hitl) as url, Client(url, mode=mode) as client:
            local.request_url = f"{hitl.public_url}/elicit/channels/slack/interactions"
            yield local, client


OWN_DATE = re.compile(r"<!date\^\d+\^[^|>]*\|[^<>]*>")  # elicitkit's own: "answer before <!date^…|…>"


def assert_inert_mrkdwn(tree: Any) -> int:
    """Slack's mrkdwn: no unescaped `<` or `>` (links, mentions, `<!channel>`) but elicitkit's own date, and
    question text `verbatim` (so that Slack does not link bare URLs); how many texts carried question text."""
    checked = 0
    for obj in objects(tree):
        if obj.get("type") == "mrkdwn":
            bare = OWN_DATE.sub("", obj["text"])
            assert "<" not in bare and ">" not in bare, obj
            if "evil" in obj["text"]:
                assert obj.get("verbatim") is True, obj  # Slack would otherwise link bare URLs
                checked += 1
    return checked


async def test_every_string_of_a_question_stays_text_in_slack(mode: str) -> None:
    async with slack_desk(mode) as (local, client), anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "ask", {})
        message = await local.message(1)
        assert "<" not in message.text and ">" not in message.text
        assert "&lt;!channel&gt;" in message.text
        assert assert_inert_mrkdwn(message.blocks) >= 1
        await local.click(ALICE, message, "Answer…")
        view = await local.opened_view(ALICE)
        assert_inert_mrkdwn(view.view)
        await local.decline(ALICE, message)


async def test_every_string_of_a_question_stays_text_in_discord(mode: str) -> None:
    async with in_discord(asker(discord(CHANNEL)), mode) as scene:
        running = scene.call("ask")
        message = await scene.discord.message(1)
        [posted] = [c.body for c in scene.discord.calls if c.method == "POST"]
        assert posted["allowed_mentions"] == {"parse": []}
        shown = [posted.get("content") or ""] + [
            text
            for embed in message["embeds"]
            for text in [
                embed.get("description", ""),
                embed.get("title", ""),
                (embed.get("footer") or {}).get("text", ""),
            ]
            + [part for field in embed.get("fields", []) for part in (field["name"], field["value"])]
        ]
        assert any("evil" in text for text in shown)
        for text in shown:
            assert_none_of(LINKS + DISCORD_MENTIONS, text)
        opened = await scene.people.click(message, "Answer…", ADA)
        for obj in objects(opened.json):
            if obj.get("type") == 10:  # a Text Display renders markdown
                assert_none_of(LINKS + DISCORD_MENTIONS, obj["content"])
        await scene.people.decline(message, ADA)
        assert await running.text() == "decline"


async def test_every_string_of_a_question_stays_text_in_teams(mode: str) -> None:
    async with teams_desk(asker(teams(DEPLOYS)), mode) as scene:
        question = await scene.bf.question(1)
        texts = [obj["text"] for obj in objects(question.card) if obj.get("type") == "TextBlock"]
        assert any("evil" in text for text in texts)
        for text in texts:
            assert_none_of(LINKS + TEAMS_MENTIONS, text)
            assert "evil.example" not in text  # the domain's dot is escaped too, so it is no link
        await scene.said(question, "Decline")
        assert await scene.outcome() == "decline"
