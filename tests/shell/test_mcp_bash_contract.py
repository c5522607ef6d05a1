"""Each place elicitkit once parted from mcp-bash, on mcp-bash's own names: one test each, on both eras.

The project is tests/shell/mcp_bash_project (it has `server.d/`, so a failing script fails the call as
mcp-bash fails it); the SDK's own contract is checked against a stand-in server on the call's FIFO.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.context import ClientRequestContext
from mcp.client.extension import ClientExtension
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitResult, ErrorData, ListRootsResult, Root, TextResourceContents

from elicitkit import Elicitation
from elicitkit.shell import FolderError, add_shell_tools, sdk_path
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import Transport, connect, settled, text_of
from tests.shell.scenes import PATH

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "mcp_bash_project"

# Every public function of mcp-bash's tool SDK (v1.3.0: sdk/tool-sdk.sh, sdk/ui-sdk.sh and the helpers it
# loads from lib/: path.sh, progress-passthrough.sh).
MCP_BASH_SDK = [
    "mcp_sdk_load_path_helpers",
    "mcp_path_normalize",
    "mcp_run_with_progress",
    "mcp_json_escape",
    "mcp_json_obj",
    "mcp_json_arr",
    "mcp_args_raw",
    "mcp_meta_raw",
    "mcp_meta_get",
    "mcp_args_get",
    "mcp_args_require",
    "mcp_args_bool",
    "mcp_args_int",
    "mcp_is_cancelled",
    "mcp_progress",
    "mcp_log",
    "mcp_log_debug",
    "mcp_log_info",
    "mcp_log_warn",
    "mcp_log_error",
    "mcp_debug",
    "mcp_with_retry",
    "mcp_fail",
    "mcp_fail_invalid_args",
    "mcp_emit_text",
    "mcp_emit_json",
    "mcp_roots_list",
    "mcp_roots_count",
    "mcp_roots_contains",
    "mcp_require_path",
    "mcp_elicit",
    "mcp_elicit_url",
    "mcp_elicit_string",
    "mcp_elicit_confirm",
    "mcp_elicit_choice",
    "mcp_elicit_titled_choice",
    "mcp_elicit_multi_choice",
    "mcp_elicit_titled_multi_choice",
    "mcp_is_valid_json",
    "mcp_extract_cli_error",
    "mcp_byte_length",
    "mcp_result_success",
    "mcp_result_error",
    "mcp_error",
    "mcp_result_text_with_resource",
    "mcp_config_load",
    "mcp_config_get",
    "mcp_json_truncate",
    "mcp_download_safe",
    "mcp_download_safe_or_fail",
    "mcp_client_supports_ui",
    "mcp_result_with_ui",
    "mcp_result_with_ui_data",
    "mcp_ui_form",
    "mcp_ui_table",
    "mcp_tool_meta_with_ui",
]


def project_server(**options: Any) -> tuple[MCPServer, Elicitation]:
    server = MCPServer("field-desk")
    hitl = Elicitation(server, **options)
    add_shell_tools(hitl, PROJECT, env=PATH)
    return server, hitl


def bash(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env={"PATH": os.environ["PATH"], **env}, timeout=30
    )


# --- the project, as it is ---------------------------------------------------------------------------------


async def test_a_script_without_the_executable_bit_is_run_not_refused(mode: str, transport: Transport) -> None:
    assert not os.access(PROJECT / "tools" / "status" / "status.py", os.X_OK)
    server, _ = project_server()
    async with connect(server, transport, mode, elicitation_callback=ScriptedHuman()) as client:
        result = await client.call_tool("status", {"service": "db"})
    assert result.structured_content == {"service": "db", "healthy": True}


def test_a_folder_of_projects_serves_each_in_its_own_folder_and_a_name_twice_is_refused(tmp_path: Path) -> None:
    for project in ("one", "two"):
        shutil.copytree(PROJECT / "tools" / "status", tmp_path / "examples" / project / "tools" / "status")
    server = MCPServer("examples")
    with pytest.raises(FolderError) as raised:
        add_shell_tools(Elicitation(server), tmp_path / "examples")
    assert "two tools are named 'status'" in str(raised.value)
    assert str(tmp_path / "examples" / "one" / "tools" / "status" / "status.py") in str(raised.value)
    shutil.rmtree(tmp_path / "examples" / "two")
    [tool] = add_shell_tools(Elicitation(MCPServer("examples")), tmp_path / "examples")
    assert (tool.name, tool.project) == ("status", tmp_path / "examples" / "one")


@pytest.mark.parametrize(
    ("register", "says"),
    [
        ({"version": 2, "tools": []}, '"version" must be 1'),
        ({"version": 1, "tools": [], "widgets": []}, "unknown keys: widgets"),
        ({"version": 1, "tools": {}}, "tools must be an array or null"),
        ({"version": 1, "tools": [{"name": "x"}]}, 'needs a "name" and a "path"'),
        ({"version": 1, "tools": [{"name": "x", "path": "../../etc/passwd"}]}, "is outside"),
        ({"version": 1, "tools": [{"name": "x", "path": "missing.sh"}]}, "no script at"),
    ],
)
def test_a_register_json_that_cannot_be_honoured_is_refused_naming_the_file(
    tmp_path: Path, register: dict[str, Any], says: str
) -> None:
    (tmp_path / "server.d").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "server.d" / "register.json").write_text(json.dumps(register))
    with pytest.raises(FolderError) as raised:
        add_shell_tools(Elicitation(MCPServer("t")), tmp_path)
    assert str(tmp_path / "server.d" / "register.json") in str(raised.value)
    assert says in str(raised.value)


def test_the_shell_sdk_defines_every_public_function_of_mcp_bashs_tool_sdk() -> None:
    ran = bash(
        f'source "{sdk_path()}"; for f in {" ".join(MCP_BASH_SDK)}; do declare -F "$f" >/dev/null || echo "$f"; done'
    )
    assert (ran.returncode, ran.stdout) == (0, "")


def test_sourcing_the_sdk_sets_the_shell_options_mcp_bashs_does() -> None:
    ran = bash(f'set +euo pipefail; source "{sdk_path()}"; echo "$-"; shopt -o pipefail')
    flags, pipefail = ran.stdout.splitlines()
    assert "e" in flags and "u" in flags
    assert pipefail.split() == ["pipefail", "on"]


# --- questions: mcp-bash's outputs, exit codes, errors and timeouts -----------------------------------------


async def test_a_client_that_fails_the_question_gives_mcp_bashs_error_action_with_status_0(
    transport: Transport,
) -> None:
    # 2025-11-25 only: on 2026-07-28 a client that fails an input request gives up the call itself.
    server, hitl = project_server()
    asked: list[ElicitRequestParams] = []

    async def client_fails_then_answers(context: ClientRequestContext, params: ElicitRequestParams) -> Any:
        asked.append(params)
        if len(asked) == 1:
            return ErrorData(code=-32600, message="the client cannot show this form")
        return ElicitResult(action="accept", content={"choice": "b"})

    with anyio.fail_after(30):
        async with connect(server, transport, "legacy", elicitation_callback=client_fails_then_answers) as client:
            result = await client.call_tool("flaky", {"mode": "raw"})
    # With `set -e`, mcp-bash's script goes on after a client error: the helper returned 0.
    assert text_of(result) == '{"action":"error","content":null}|0{"action":"accept","content":{"choice":"b"}}|0'
    await settled(hitl)


async def test_an_argument_that_looks_like_an_option_is_asked_as_mcp_bash_asks_it(mode: str) -> None:
    server, hitl = project_server()
    human = ScriptedHuman(accept({"confirmed": False}), accept({"choice": "a"}))
    async with connect(server, "memory", mode, elicitation_callback=human) as client:
        result = await client.call_tool("flaky", {"mode": "raw"})
    assert text_of(result) == (
        '{"action":"accept","content":{"confirmed":false}}|0{"action":"accept","content":{"choice":"a"}}|0'
    )
    assert human.transcript[1].message == "--title"  # mcp_elicit_choice "--title" a b: the message, not an option
    assert human.transcript[1].schema == {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": ["a", "b"]}},
        "required": ["choice"],
    }
    await settled(hitl)


async def test_a_client_nobody_can_be_asked_through_fails_the_call_with_mcp_bashs_32603(
    mode: str, transport: Transport
) -> None:
    server, hitl = project_server(fallback="error")  # no forms, and no fallback to the model
    async with connect(server, transport, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("flaky", {"mode": "ask"})
    assert (raised.value.error.code, raised.value.error.message) == (
        -32603,
        "mcp_elicit: Client does not support elicitation",
    )
    await settled(hitl)


async def test_mcpbash_elicitation_timeout_bounds_the_wait_and_the_question_is_withdrawn(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPBASH_ELICITATION_TIMEOUT", "1")  # the server's setting reaches its tools, as in mcp-bash
    server, hitl = project_server()

    async def too_slow(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep(1.5)  # a person slower than the second the tool waits, not a wait for something to happen
        return ElicitResult(action="accept", content={"confirmed": True})

    with anyio.fail_after(20):
        async with connect(server, "memory", mode, elicitation_callback=too_slow) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("flaky", {"mode": "ask"})
    assert (raised.value.error.code, raised.value.error.message) == (
        -32603,
        "mcp_elicit: Timeout waiting for user response",
    )
    await settled(hitl)


@pytest.mark.parametrize(("setting", "sent"), [(None, 30), ("7", 7), ("2.5", 2.5)])
def test_mcp_bashs_helpers_wait_30_seconds_unless_mcpbash_elicitation_timeout_says(
    tmp_path: Path, setting: str | None, sent: float
) -> None:
    env = {"MCPBASH_ELICITATION_TIMEOUT": setting} if setting is not None else {}
    request, _ = ask_a_stand_in(tmp_path, "mcp_elicit_confirm 'Go?'", '{"action":"cancel","content":null}', **env)
    assert request["timeout"] == sent


@pytest.mark.parametrize(
    ("reply", "printed", "status"),
    [
        ('{"action":"accept","content":{"confirmed":true}}', '{"action":"accept","content":{"confirmed":true}}', 0),
        ('{"action":"decline","content":null}', '{"action":"decline","content":null}', 0),
        ('{"action":"cancel","content":null}', '{"action":"cancel","content":null}', 0),
        ('{"action":"error","content":null,"error":"refused","message":"x"}', '{"action":"error","content":null}', 0),
        ('{"action":"decline","content":null,"error":"not_supported"}', '{"action":"decline","content":null}', 0),
        ('{"action":"error","content":null,"error":"timeout"}', '{"action":"error","content":null}', 1),
    ],
)
def test_mcp_bashs_helpers_print_its_reply_without_a_newline_and_return_its_status(
    tmp_path: Path, reply: str, printed: str, status: int
) -> None:
    _, ran = ask_a_stand_in(tmp_path, "mcp_elicit_confirm 'Go?' || echo -n \"|$?\"", reply)
    assert ran.stdout == printed + (f"|{status}" if status else "")
    assert ran.returncode == 0


async def test_json_a_tool_prints_without_an_output_schema_is_also_its_structured_content(
    mode: str, transport: Transport
) -> None:
    server, _ = project_server()
    async with connect(server, transport, mode, elicitation_callback=ScriptedHuman()) as client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["status"]
        result = await client.call_tool("status", {})
    assert tool.output_schema is None
    assert result.structured_content == {"service": "all", "healthy": True}
    assert text_of(result) == '{"service": "all", "healthy": true}\n'  # the text as printed, nothing stripped


async def test_arguments_too_large_for_a_variable_reach_the_script_through_a_file_as_in_mcp_bash(
    mode: str, tmp_path: Path
) -> None:
    (tmp_path / "tools" / "measure").mkdir(parents=True)
    (tmp_path / "tools" / "measure" / "measure.sh").write_text(
        'source "${MCP_SDK}/tool-sdk.sh"\nprintf \'%s %s\' "$(mcp_args_get \'.blob | length\')" "${MCP_TOOL_ARGS_FILE:+file}"\n'
    )
    server = MCPServer("t")
    add_shell_tools(Elicitation(server), tmp_path, env=PATH)
    async with connect(server, "memory", mode, elicitation_callback=ScriptedHuman()) as client:
        small = await client.call_tool("measure", {"blob": "x" * 10})
        large = await client.call_tool("measure", {"blob": "x" * 300_000})  # past the 128 KiB a variable holds
    assert (text_of(small), text_of(large)) == ("10 ", "300000 file")


async def test_a_script_whose_interpreter_is_missing_fails_the_call_saying_so(mode: str, tmp_path: Path) -> None:
    (tmp_path / "tools" / "old").mkdir(parents=True)
    (tmp_path / "tools" / "old" / "old.sh").write_text("#!/opt/nowhere/bash\necho hi\n")
    (tmp_path / "tools" / "old" / "old.sh").chmod(0o755)
    server = MCPServer("t")
    add_shell_tools(Elicitation(server), tmp_path, env=PATH)
    async with connect(server, "memory", mode, elicitation_callback=ScriptedHuman()) as client:
        result = await client.call_tool("old", {})
    assert result.is_error
    assert text_of(result).endswith(
        "old.sh could not be started (No such file or directory; is the program on its #! line installed?)"
    )


# --- roots, resources and the UI helpers ----------------------------------------------------------------------


async def test_the_clients_roots_bound_the_tool_on_2025_11_25_and_the_projects_own_on_2026_07_28(
    mode: str, tmp_path: Path
) -> None:
    (tmp_path / "inventory.txt").write_text("rack-1: 2 nodes\n")

    async def lab_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=tmp_path.as_uri(), name="Lab")])

    server, hitl = project_server()
    async with connect(
        server, "memory", mode, list_roots_callback=lab_roots, elicitation_callback=ScriptedHuman()
    ) as client:
        inside = await client.call_tool("inventory", {})
        with pytest.raises(MCPError) as outside:
            await client.call_tool("inventory", {"path": "/etc"})
    # 2026-07-28 has no roots/list: config/roots.json's, as mcp-bash falls back to.
    root = tmp_path if mode == "legacy" else PROJECT / "data"
    assert inside.structured_content == {
        "success": True,
        "result": {"path": str(root / "inventory.txt"), "lines": 1 if mode == "legacy" else 2, "roots": 1},
    }
    [embedded] = [c.resource for c in inside.content if c.type == "resource"]
    assert isinstance(embedded, TextResourceContents)
    assert embedded.text == (root / "inventory.txt").read_text()
    assert (outside.value.error.code, outside.value.error.message) == (-32602, ".path is outside configured MCP roots")
    await settled(hitl)


class McpApps(ClientExtension):
    """A client that shows MCP Apps UIs (it declares the extension, nothing more)."""

    identifier = "io.modelcontextprotocol/ui"

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": ["text/html;profile=mcp-app"]}


async def test_a_client_declaring_mcp_apps_gets_the_tools_ui_data_and_others_get_its_text(mode: str) -> None:
    server, _ = project_server()
    async with connect(server, "memory", mode, elicitation_callback=ScriptedHuman(), extensions=[McpApps()]) as client:
        with_ui = await client.call_tool("console", {})
    async with connect(server, "memory", mode, elicitation_callback=ScriptedHuman()) as client:
        without = await client.call_tool("console", {})
    assert with_ui.structured_content == {"nodes": 16}
    assert text_of(with_ui).startswith("Console (ui=yes, escaped=1")
    assert without.structured_content is not None
    assert without.structured_content["result"].startswith("Console (ui=no, escaped=1")


def test_the_ui_helpers_give_structured_data_to_a_client_with_mcp_apps_and_text_to_the_rest() -> None:
    script = f'source "{sdk_path()}"; mcp_result_with_ui "" "3 nodes" \'{{"nodes":3}}\''
    with_ui = json.loads(bash(script, MCPBASH_CLIENT_SUPPORTS_UI="1").stdout)
    without = json.loads(bash(script, MCPBASH_CLIENT_SUPPORTS_UI="0").stdout)
    assert with_ui == {
        "content": [{"type": "text", "text": "3 nodes"}],
        "structuredContent": {"nodes": 3},
        "isError": False,
    }
    assert without["structuredContent"] == {"success": True, "result": "3 nodes"}
    table = bash(f'source "{sdk_path()}"; echo \'[{{"n":"<b>"}}]\' | mcp_ui_table --columns n --title "T&C"').stdout
    assert "<td>&lt;b&gt;</td>" in table and "<h1>T&amp;C</h1>" in table


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ("--url http://example.com/x --out f", {"type": "invalid_url", "message": "URL must use https://"}),
        ("--url https://example.com/x --out f", {"type": "host_blocked", "message": "Host blocked by policy"}),
        (
            "--url https://127.0.0.1/x --out f --allow 127.0.0.1",
            {"type": "host_blocked", "message": "Host blocked by policy"},
        ),
        (
            "--url https://localhost/x --out f --allow localhost",
            {"type": "host_blocked", "message": "Host blocked by policy"},
        ),
        (
            "--url https://2130706433/x --out f --allow 2130706433",
            {"type": "host_blocked", "message": "Host blocked by policy"},
        ),
        (
            "--url https://example.com/x --out f --alow example.com",
            {"type": "invalid_params", "message": "Unknown option: --alow"},
        ),
        (
            "--url https://example.com/x --out f --timeout 61",
            {"type": "invalid_params", "message": "--timeout cannot exceed 60 seconds"},
        ),
    ],
)
def test_mcp_download_safe_refuses_what_mcp_bashs_policy_refuses_before_any_request(
    tmp_path: Path, arguments: str, error: dict[str, str]
) -> None:
    ran = bash(f'cd "{tmp_path}"; source "{sdk_path()}"; mcp_download_safe {arguments}')
    assert (ran.returncode, json.loads(ran.stdout)) == (0, {"success": False, "error": error})
    assert not (tmp_path / "f").exists()


# --- a stand-in for the server on the call's ask FIFO ---------------------------------------------------------


def ask_a_stand_in(
    tmp_path: Path, command: str, reply: str, **env: str
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """Run `command` with the SDK as a served tool would, answer its one question with `reply`; return the
    request it sent and how it ended."""
    call = tmp_path / "call"
    call.mkdir()
    os.mkfifo(call / "ask")
    listening = os.open(call / "ask", os.O_RDWR | os.O_NONBLOCK)
    tool_env = {"MCP_ELICIT_SUPPORTED": "1", "ELICITKIT_ASK": str(call / "ask"), "ELICITKIT_CALL_DIR": str(call)}
    script = f'source "{sdk_path()}"; {command}'
    with subprocess.Popen(
        ["bash", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"], **tool_env, **env},
    ) as process:
        try:
            name = _read_line(listening)
            request = json.loads((call / f"{name}.json").read_text())
            with open(call / f"{name}.fifo", "w") as answer:
                answer.write(reply + "\n")
            out, err = process.communicate(timeout=30)
        finally:
            os.close(listening)
            process.kill()
    return request, subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _read_line(fd: int) -> str:
    """One line from the FIFO, waiting for the kernel to say there is something to read."""
    import selectors

    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while not data.endswith(b"\n"):
            assert selector.select(timeout=30), "the tool never asked"
            data += os.read(fd, 4096)
    return data.decode().strip()
