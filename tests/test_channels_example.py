"""examples/channels.py: the release manager answers in the web inbox; an agent asks through the `elicit` tool."""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.examples import load_example
from tests.scenes import serving, text_of

pytestmark = pytest.mark.anyio

_QUESTION = re.compile(r'name="ek:csrf" value="(?P<csrf>[^"]*)".*?name="ek:token" value="(?P<token>[^"]*)"', re.S)


async def answer_in_the_inbox(base: str, fields: dict[str, str], seen: str) -> None:
    """Open the release manager's inbox until the question saying `seen` is there, then submit `fields`."""
    async with httpx.AsyncClient(base_url=base) as browser:
        async with browser.stream("GET", "/elicit/inbox/events") as events:
            lines = events.aiter_lines()
            while True:
                page = await browser.get("/elicit/inbox", params={"part": "list"})
                if seen in page.text:
                    break
                while not (await anext(lines)).startswith("event:"):
                    pass
        found = _QUESTION.search(page.text)
        assert found is not None, page.text
        form = {"ek:csrf": found["csrf"], "ek:token": found["token"], "ek:action": "accept", **fields}
        posted = await browser.post("/elicit/inbox/answer", data=form)
        assert posted.status_code == 200, posted.text


async def test_the_release_waits_for_the_inbox_and_the_elicit_tool_asks_there_too(mode: str) -> None:
    example = load_example("channels")
    _, hitl = example.build()
    got: dict[str, Any] = {}
    async with serving(hitl) as url, Client(url, mode=mode) as client:
        base = url.removesuffix("/mcp")
        async with anyio.create_task_group() as tg:

            async def release() -> None:
                got["release"] = await client.call_tool("release", {"version": "2.1"})

            tg.start_soon(release)
            with anyio.fail_after(10):
                await answer_in_the_inbox(base, {"go": "true", "notes": "ship it"}, "Release 2.1?")
        schema = {"type": "object", "properties": {"seats": {"type": "integer", "minimum": 1}}}
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                got["elicit"] = await client.call_tool("elicit", {"message": "How many seats?", "schema": schema})

            tg.start_soon(ask)
            with anyio.fail_after(10):
                await answer_in_the_inbox(base, {"seats": "12"}, "How many seats?")
    assert text_of(got["release"]) == "Released 2.1: ship it"
    assert text_of(got["elicit"]) == 'User provided: {"seats":12}'  # as mcp.do writes it: no spaces
