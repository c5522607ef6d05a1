"""Shell tools on a fastmcp server: `add_shell_tools(hitl, folder)` serves mcp-bash-style scripts whose questions
go through elicitkit, on both eras, through fastmcp's client and the SDK's over streamable HTTP."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

pytest.importorskip("fastmcp")

from elicitkit.shell import FolderError, add_shell_tools
from elicitkit.testing import ScriptedHuman, accept
from tests.fastmcp.scenes import connect, new_server
from tests.scenes import text_of
from tests.shell.scenes import EXAMPLE, PATH

pytestmark = pytest.mark.anyio


async def test_a_shell_tool_asks_its_questions_on_a_fastmcp_server(driver: str, mode: str) -> None:
    _, hitl = new_server("shell")
    add_shell_tools(hitl, EXAMPLE, env=PATH)
    human = ScriptedHuman(
        accept({"gib": 50}),
        accept({"choice": "us"}),
        accept({"choices": ["pgcrypto", "vector"]}),
        accept({"value": "dba@example.com"}),
    )
    with anyio.fail_after(20):
        async with connect(hitl, driver, mode, human) as client:
            result = await client.call("provision", {"name": "orders"})
    assert not result.is_error, text_of(result)
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
    assert human.transcript[0].schema is not None
    assert human.transcript[0].schema["properties"]["gib"]["title"] == "Size (GiB)"


async def test_shell_tool_arguments_are_checked_against_the_tools_own_schema(mode: str) -> None:
    _, hitl = new_server("shell")
    add_shell_tools(hitl, EXAMPLE, env=PATH)
    async with connect(hitl, "fastmcp", mode, ScriptedHuman()) as client:
        tools = {tool.name: tool for tool in await client.client.list_tools()}
        result = await client.call("provision", {})
    assert tools["provision"].input_schema["required"] == ["name"]
    assert result.is_error
    assert "Invalid arguments for tool provision" in text_of(result)


def test_a_shell_tool_named_like_a_tool_the_fastmcp_server_has_is_refused(tmp_path: Path) -> None:
    server, hitl = new_server("shell")

    @server.tool
    def provision() -> str:
        return "mine"

    with pytest.raises(FolderError, match="already has a tool named 'provision'"):
        add_shell_tools(hitl, EXAMPLE, env=PATH)
