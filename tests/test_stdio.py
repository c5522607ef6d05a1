"""examples/deploy_desk.py as a real stdio subprocess, on both protocol eras."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from elicitkit.testing import ScriptedHuman, accept, decline

pytestmark = pytest.mark.anyio

DEPLOY_DESK = Path(__file__).resolve().parents[1] / "examples" / "deploy_desk.py"
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def text_of(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def deploy_desk() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(DEPLOY_DESK)])


async def test_deploy_desk_over_stdio_deploys_and_schedules_with_a_persons_answers(mode: str) -> None:
    human = ScriptedHuman(
        accept({"approved": True}),
        accept({"value": "prod-eu"}),
        accept({"value": ["lint"]}),
        accept({"when": "tonight", "notify": False}),
    )
    with anyio.fail_after(20):
        async with Client(deploy_desk(), mode=mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]

            deployed = await client.call_tool("deploy", {"version": "2.1"})
            assert not deployed.is_error, text_of(deployed)
            assert text_of(deployed) == "Deployed 2.1 to Production (EU) after lint."

            scheduled = await client.call_tool("schedule", {"version": "2.3"})
            assert not scheduled.is_error, text_of(scheduled)
            assert text_of(scheduled) == "2.3 scheduled tonight."

    assert [x.message for x in human.transcript] == [
        "Deploy 2.1?",
        "Where to?",
        "Which checks must pass first?",
        "When should 2.3 go out?",
    ]


async def test_deploy_desk_over_stdio_does_not_deploy_when_the_person_declines(mode: str) -> None:
    human = ScriptedHuman(decline(), decline())
    with anyio.fail_after(20):
        async with Client(deploy_desk(), mode=mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]
            deployed = await client.call_tool("deploy", {"version": "2.2"})
            assert text_of(deployed) == "2.2 was not deployed."
            scheduled = await client.call_tool("schedule", {"version": "2.2"})
            assert text_of(scheduled) == "2.2 not scheduled (decline)."
    assert [x.message for x in human.transcript] == ["Deploy 2.2?", "When should 2.2 go out?"]
