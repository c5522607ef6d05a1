"""The shell examples a user copies from: elicitkit's own helpers, and a Python tool under a bare `elicitkit serve`."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from elicitkit.testing import ScriptedHuman, accept, cancel, decline
from tests.scenes import ERAS, settled, text_of
from tests.shell.scenes import BIN, EXAMPLE, shell_server

pytestmark = pytest.mark.anyio

ELICITKIT = str(Path(BIN) / "elicitkit")


async def test_the_ek_helpers_send_titles_defaults_bounds_and_the_specs_titled_multi_select(mode: str) -> None:
    server, hitl = shell_server(EXAMPLE)
    human = ScriptedHuman(
        accept({"gib": 50}),
        accept({"choice": "us"}),
        accept({"choices": ["pgcrypto", "vector"]}),
        accept({"value": "dba@example.com"}),
    )
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("provision", {"name": "orders"})
    assert result.structured_content == {
        "success": True,
        "result": {
            "message": "Provisioned orders",
            "size_gib": "50",
            "region": "us",
            "extensions": "pgcrypto,vector",
            "owner": "dba@example.com",
        },
    }
    size, region, extensions, owner = (x.schema["properties"] for x in human.transcript)
    assert size["gib"] == {
        "type": "integer",
        "title": "Size (GiB)",
        "minimum": 10,
        "maximum": 500,
        "default": 20,
    }
    assert region["choice"]["oneOf"][0] == {"const": "eu", "title": "Europe (Frankfurt)"}
    assert region["choice"]["default"] == "eu"
    assert extensions["choices"]["items"] == {
        "anyOf": [
            {"const": "pgcrypto", "title": "pgcrypto"},
            {"const": "postgis", "title": "PostGIS"},
            {"const": "vector", "title": "pgvector"},
        ]
    }
    assert extensions["choices"]["default"] == ["pgcrypto"]
    assert owner["value"]["format"] == "email"
    assert human.transcript[3].schema["required"] == ["value"]
    await settled(hitl)


@pytest.mark.parametrize(("reply", "says"), [(decline(), "declined"), (cancel(), "cancelled")])
async def test_the_ek_helpers_exit_codes_tell_the_script_what_happened(mode: str, reply: object, says: str) -> None:
    server, hitl = shell_server(EXAMPLE)
    human = ScriptedHuman(accept({"gib": 20}), reply)
    async with Client(server, mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("provision", {"name": "orders"})
    assert result.structured_content == {"success": True, "result": {"message": f"Not provisioned: {says}"}}
    await settled(hitl)


async def test_a_python_tool_finds_elicitkit_ask_when_the_server_runs_from_a_virtualenv_not_on_path(mode: str) -> None:
    # As a user runs it: `.venv/bin/elicitkit serve examples/shell`, no virtualenv activated.
    server = StdioServerParameters(command=ELICITKIT, args=["serve", str(EXAMPLE)], env={"PATH": "/usr/bin:/bin"})
    human = ScriptedHuman(accept({"env": "prod"}), accept({"value": True}), accept({"env": "prod"}), decline())
    with anyio.fail_after(30):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]
            restarted = await client.call_tool("restart", {"service": "api"})
            refused = await client.call_tool("restart", {"service": "api"})
    assert text_of(restarted).strip() == "Restarted api in prod"
    assert text_of(refused).strip() == "Not restarted: declined"
    assert human.transcript[0].schema["properties"]["env"]["oneOf"][1] == {"const": "prod", "title": "Production"}
    assert human.transcript[1].schema["properties"]["value"]["title"] == "Restart production"
