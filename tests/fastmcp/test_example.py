"""examples/fastmcp_server.py: deploy-desk on fastmcp, through fastmcp's client and as a real stdio subprocess."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.examples import load_example
from tests.fastmcp.scenes import fastmcp_handler
from tests.scenes import ERAS, text_of

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def person() -> ScriptedHuman:
    return ScriptedHuman(
        accept({"approved": True, "note": "after the standup"}),
        accept({"value": "prod-eu"}),
        accept({"value": ["lint"]}),
        accept({"when": "tonight", "notify": False}),
        decline(),
    )


async def test_the_example_deploys_schedules_and_takes_no_for_an_answer_through_fastmcp_s_client(mode: str) -> None:
    example = load_example("fastmcp_server")
    human = person()
    async with Client(example.server, mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
        assert client.protocol_version == ERAS[mode]
        deployed = await client.call_tool("deploy", {"version": "2.1"})
        scheduled = await client.call_tool("schedule", {"version": "2.3"})
        declined = await client.call_tool("deploy", {"version": "2.2"})
    assert text_of(deployed) == "Deployed 2.1 to Production (EU) after lint. Note: after the standup"
    assert text_of(scheduled) == "2.3 scheduled tonight."
    assert text_of(declined) == "2.2 was not deployed."
    assert example.hitl.active_runs == 0


async def test_the_example_runs_as_a_stdio_server_for_the_sdk_s_client(mode: str) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "examples" / "fastmcp_server.py")],
        env={"PYTHONPATH": str(ROOT / "src")},  # this checkout's elicitkit, whichever one is installed
    )
    human = person()
    with anyio.fail_after(30):
        async with SdkClient(server, mode=mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]
            deployed = await client.call_tool("deploy", {"version": "2.1"})
            scheduled = await client.call_tool("schedule", {"version": "2.3"})
    assert not deployed.is_error, text_of(deployed)
    assert text_of(deployed) == "Deployed 2.1 to Production (EU) after lint. Note: after the standup"
    assert text_of(scheduled) == "2.3 scheduled tonight."
    assert [x.message for x in human.transcript] == [
        "Deploy 2.1?",
        "Where to?",
        "Which checks must pass first?",
        "When should 2.3 go out?",
    ]


def stdio_example() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "examples" / "fastmcp_server.py")],
        env={"PYTHONPATH": str(ROOT / "src")},
    )


async def test_over_stdio_an_invalid_answer_is_asked_again_and_decline_and_cancel_end_the_tool(mode: str) -> None:
    human = ScriptedHuman(
        accept({"approved": True, "note": "x" * 201}),  # breaks max_length: asked again, saying why
        accept({"approved": True}),
        cancel(),
        decline(),
    )
    with anyio.fail_after(30):
        async with SdkClient(stdio_example(), mode=mode, elicitation_callback=human) as client:
            cancelled = await client.call_tool("deploy", {"version": "2.4"})
            declined = await client.call_tool("schedule", {"version": "2.5"})
    assert text_of(cancelled) == "2.4 was not deployed: no target chosen."
    assert text_of(declined) == "2.5 not scheduled (decline)."
    again = human.transcript[1].message
    assert again.startswith("Deploy 2.4?") and "note" in again, again
    assert [x.message for x in human.transcript][2:] == ["Where to?", "When should 2.5 go out?"]


async def test_over_stdio_a_client_without_forms_is_asked_through_the_model(mode: str) -> None:
    human = ScriptedHuman(accept({"when": "weekend", "notify": True}))
    with anyio.fail_after(30):
        async with SdkClient(stdio_example(), mode=mode) as client:
            result = await call_through_model(client, "schedule", {"version": "2.6"}, human)
    assert text_of(result) == "2.6 scheduled weekend, #releases told."
    assert [x.message for x in human.transcript] == ["When should 2.6 go out?"]


def docs_example(index: int) -> dict[str, Any]:
    """The docs' block `index`, loaded without the `server.run()` it ends with (its server is driven here)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "fastmcp.md").read_text(), flags=re.S)
    source = re.sub(r"\nserver\.run\([^\n]*\)\s*$", "\n", blocks[index])
    namespace: dict[str, Any] = {"__name__": f"fastmcp_docs_example_{index}"}
    exec(compile(source, "docs/fastmcp.md", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("index", [0, 1], ids=["hitl.elicit", "adopt"])
async def test_the_docs_examples_ask_on_both_eras(mode: str, index: int) -> None:
    namespace = docs_example(index)
    human = ScriptedHuman(accept({"approved": True} if index == 0 else {"value": True}), decline())
    async with Client(namespace["server"], mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
        first = await client.call_tool("deploy", {"version": "2.1"})
        second = await client.call_tool("deploy", {"version": "2.2"})
    assert text_of(first) == "Deployed 2.1"
    assert text_of(second) == "Not deployed"


async def test_the_docs_background_task_asks_and_waits_on_both_eras(mode: str) -> None:
    namespace = docs_example(2)
    human = ScriptedHuman(accept({"value": True}), decline())
    async with Client(namespace["server"], mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
        first = await client.call_tool("release", {"version": "2.1"}, raise_on_error=False)
        second = await client.call_tool("release", {"version": "2.2"}, raise_on_error=False)
    assert text_of(first) == "released 2.1"
    assert text_of(second) == "2.2 not released"
