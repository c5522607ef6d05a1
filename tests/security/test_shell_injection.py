"""Shell injection and path traversal through `elicitkit serve`: the real subprocess, over stdio, both eras.

A client picks the tool name and its arguments; a person picks the answers. None of it is ever run as a
command or used as a path: an unknown name (with `../`, `;`, `$()`, backticks, a script's path) calls
nothing, and arguments and answers full of shell syntax reach the script, the question and the result as
the very text that was sent. A tool folder that names itself with a path or shell syntax is refused before
the server starts.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from elicitkit.testing import ScriptedHuman, accept
from tests.shell.test_serve import ELICITKIT, write_tool

pytestmark = pytest.mark.anyio

# Each would leave a file named pwned-N in the tool's working directory (the project) if a shell ran it.
NAME = "$(touch pwned-1); `touch pwned-2`; touch pwned-3 && cat ../../../../etc/passwd '\"|| touch pwned-4"
NOTE = "$(touch pwned-5)`touch pwned-6`\"; touch pwned-7; echo '"
AGAIN = "../../../../etc/passwd $(touch pwned-8) ${HOME} %s %n \\\n; touch pwned-9"

TOOL = """#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
name="$(mcp_args_require '.name')"
reply="$(ek_string --title "Note for ${name}" "Note for ${name}?")"
note="$(jq -r '.content.value' <<<"${reply}")"
again="$(elicitkit ask text "Again for ${name}?" --value)"
mcp_result_success "$(mcp_json_obj name "${name}" note "${note}" again "${again}")"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_tool(
        root / "tools" / "echo",
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
    )
    (root / "tools" / "echo" / "tool.sh").write_text(TOOL)
    return root


def pwned(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("pwned-*"))


def serve(project: Path) -> StdioServerParameters:
    return StdioServerParameters(command=ELICITKIT, args=["serve", str(project)])


async def test_arguments_and_answers_full_of_shell_syntax_reach_the_script_as_text(mode: str, project: Path) -> None:
    human = ScriptedHuman(accept({"value": NOTE}), accept({"value": AGAIN}))
    with anyio.fail_after(30):
        async with Client(serve(project), mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("echo", {"name": NAME})
    assert not result.is_error, result
    assert result.structured_content == {"success": True, "result": {"name": NAME, "note": NOTE, "again": AGAIN}}
    assert [e.message for e in human.transcript] == [f"Note for {NAME}?", f"Again for {NAME}?"]
    assert pwned(project.parent) == []


UNKNOWN = [
    "../echo",
    "echo/../../echo",
    "tools/echo/tool.sh",
    "/bin/sh",
    "echo; touch pwned-10",
    "$(touch pwned-11)",
    "`touch pwned-12`",
    "echo && touch pwned-13",
]


async def test_a_tool_name_with_a_path_or_shell_syntax_calls_nothing(mode: str, project: Path) -> None:
    with anyio.fail_after(30):
        async with Client(serve(project), mode=mode, elicitation_callback=ScriptedHuman()) as client:
            for name in UNKNOWN:
                try:
                    result = await client.call_tool(name, {"name": "x"})
                except MCPError as exc:
                    said = exc.error.message
                else:
                    assert result.is_error, name
                    said = json.dumps(result.model_dump(mode="json"))
                assert "Unknown tool" in said, (name, said)
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
    assert pwned(project.parent) == []


@pytest.mark.parametrize("name", ["../escape", "a/b", "..\\b", "$(touch pwned-14)", "a;b", "a b", ""])
def test_a_tool_folder_naming_itself_with_a_path_or_shell_syntax_is_refused_before_serving(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "project"
    write_tool(root / "tools" / "a", {"name": name})
    cli = subprocess.run([ELICITKIT, "serve", str(root)], capture_output=True, text=True, timeout=30)
    assert cli.returncode == 2, cli.stderr
    assert f"the tool name {name!r} must be 1-128 letters" in cli.stderr
    assert pwned(tmp_path) == []


COUNT_TOOL = """#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
count="$(mcp_args_int '.count' --min "$(mcp_args_get '.min')" --max 20)"
mcp_result_success "$(mcp_json_obj count "${count}")"
"""


async def test_mcp_args_int_never_evaluates_a_value_or_a_bound_as_arithmetic(mode: str, tmp_path: Path) -> None:
    # Bash arithmetic runs a $(...) it is given and reads 08 as a bad octal number: mcp_args_int checks
    # every operand is an integer first and compares in base 10. A bound that is not one is the tool's fault.
    root = tmp_path / "project"
    schema = {"type": "object", "properties": {"count": {"type": "string"}, "min": {"type": "string"}}}
    write_tool(root / "tools" / "count", {"name": "count", "inputSchema": schema})
    (root / "tools" / "count" / "tool.sh").write_text(COUNT_TOOL)
    evil = "$(touch pwned-20)"
    with anyio.fail_after(30):
        async with Client(serve(root), mode=mode) as client:
            counted = await client.call_tool("count", {"count": "09", "min": "08"})
            assert counted.structured_content == {"success": True, "result": {"count": "09"}}
            for arguments, message in (
                ({"count": "07", "min": "08"}, ".count must be >= 08"),
                ({"count": evil, "min": "1"}, ".count must be an integer"),
                ({"count": "5", "min": evil}, "mcp_args_int: --min must be an integer"),
                ({"count": "5", "min": "a[$(touch pwned-21)]"}, "mcp_args_int: --min must be an integer"),
            ):
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("count", arguments)
                assert raised.value.error.message == message
    assert pwned(root.parent) == []
