"""Secrets in logs and spans: the value a person types into a `SecretStr` field is in no log record and no
OpenTelemetry span, whichever way it is asked — elicitkit's page through a client that opens links or through
the model, the web inbox, or the secure page a Slack approver opens — on both eras, with every logger at DEBUG
(uvicorn's and the SDK's included), also when the first value typed is refused and typed again.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field, SecretStr

from elicitkit import Accepted, Elicitation
from elicitkit.channels import SlackChannel, WebInbox
from elicitkit.channels.base import slack, web
from tests.channels.slack_server import LocalSlack
from tests.channels.test_slack import ALICE
from tests.channels.test_web_inbox import header_identity, person
from tests.scenes import new_server, pending_id, send_answer, serving, text_of
from tests.security.conftest import Logs
from tests.telemetry import Telemetry
from tests.test_urlmode import Links, Page, open_form, press

pytestmark = pytest.mark.anyio

TOO_SHORT = f"sk-short-{secrets.token_hex(6)}"  # 21 characters: refused, and must not be echoed either
SECRET = f"sk-live-{secrets.token_hex(16)}"  # 40 characters


class Vault(BaseModel):
    owner: str
    api_key: SecretStr = Field(min_length=30)


def vault_server(where: str, **options: Any) -> Elicitation:
    server, hitl = new_server("vault", timeout=10, **options)

    @server.tool()
    async def unlock(ctx: Context) -> str:
        via = {"inbox": web("alice"), "slack": slack("#deploys", approvers=[ALICE.id])}.get(where)
        answer = await hitl.secure_form(ctx, "The vault key, please", Vault, via=via)
        assert isinstance(answer, Accepted)
        return f"unlocked with {len(answer.data.api_key.get_secret_value())} characters"

    return hitl


async def type_twice(browser: httpx.AsyncClient, link: str) -> None:
    """Type a key the form refuses, then the right one."""
    refused = await press(
        browser, link, await open_form(browser, link), "accept", {"owner": "ops", "api_key": TOO_SHORT}
    )
    assert refused.status_code == 422, refused.text
    assert TOO_SHORT not in refused.text
    taken = await press(browser, link, Page(refused), "accept", {"owner": "ops", "api_key": SECRET})
    assert taken.status_code == 200, taken.text


@asynccontextmanager
async def background(client: Client) -> AsyncIterator[list[str]]:
    """Call `unlock` in the background; the list gets its result's text when it ends."""
    results: list[str] = []
    done = anyio.Event()

    async def call() -> None:
        results.append(text_of(await client.call_tool("unlock", {})))
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        yield results
        with anyio.fail_after(10):
            await done.wait()


async def through_a_client_that_opens_links(mode: str) -> list[str]:
    hitl, links = vault_server("page"), Links()
    async with (
        serving(hitl) as url,
        Client(url, mode=mode, elicitation_callback=links) as client,
        httpx.AsyncClient() as browser,
        background(client) as results,
    ):
        await type_twice(browser, (await links.next()).url)
    return results


async def through_the_model(mode: str) -> list[str]:
    hitl = vault_server("model")
    async with serving(hitl) as url, Client(url, mode=mode) as client, httpx.AsyncClient() as browser:
        pending = await client.call_tool("unlock", {})
        found = re.search(rf"{re.escape(hitl.public_url or '')}/elicit/f/[\w-]+", text_of(pending))
        assert found is not None
        await type_twice(browser, found[0])
        return [text_of(await send_answer(client, pending_id(pending), "accept", {}))]


async def through_the_web_inbox(mode: str) -> list[str]:
    hitl = vault_server("inbox", channels=[WebInbox()], page_identity=header_identity)
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serving(hitl))
        alice = await stack.enter_async_context(person(url, "alice"))
        events = await stack.enter_async_context(alice.events())
        results = await stack.enter_async_context(background(await stack.enter_async_context(Client(url, mode=mode))))
        question = await alice.arrival(events, "The vault key, please")
        refused = await alice.answer(question, owner="ops", api_key=TOO_SHORT)
        assert refused.status_code == 422, refused.text
        assert TOO_SHORT not in refused.text
        assert (await alice.answer(question, owner="ops", api_key=SECRET)).status_code == 200
    return results


async def through_a_slack_secure_page(mode: str) -> list[str]:
    async with LocalSlack().serving() as local:
        hitl = vault_server("slack", channels=[SlackChannel(local.token, local.signing_secret, api_url=local.api_url)])
        async with (
            serving(hitl) as url,
            Client(url, mode=mode) as client,
            httpx.AsyncClient() as browser,
            background(client) as results,
        ):
            local.request_url = f"{hitl.public_url}/elicit/channels/slack/interactions"
            await local.click(ALICE, await local.message(1), "Answer on a secure page")
            [link] = re.findall(r"<(http://[^|>]+)\|", (await local.ephemeral_for(ALICE)).text)
            await type_twice(browser, link)
        assert SECRET not in json.dumps(local.calls)
    return results


WAYS = {
    "page": through_a_client_that_opens_links,
    "model": through_the_model,
    "web inbox": through_the_web_inbox,
    "slack secure page": through_a_slack_secure_page,
}


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_secret_typed_by_a_person_appears_in_no_log_record_and_no_span(
    way: str, mode: str, telemetry_installed: Telemetry, logs: Logs
) -> None:
    telemetry_installed.spans.clear()
    assert await WAYS[way](mode) == ["unlocked with 40 characters"]
    spans = telemetry_installed.spans.get_finished_spans()
    assert any(span.name == "elicit unlock" for span in spans)
    exported = json.dumps([json.loads(span.to_json()) for span in spans])
    audited = [r.audit for r in logs.records if r.name == "elicitkit.audit"]  # type: ignore[attr-defined]
    assert audited[-1]["content"] == {"owner": "ops", "api_key": "**********"}  # the answer was logged, masked
    for typed in (SECRET, TOO_SHORT):
        assert typed not in exported
        for record in logs.records:
            assert typed not in record.getMessage(), record.name
            assert typed not in json.dumps(vars(record), default=str), record.name
