"""An mcp-bash project served as it is: a realistic project written for these tests (tests/shell/mcp_bash_project),
run under `elicitkit serve` over stdio and streamable HTTP on both eras, answering as mcp-bash documents it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import EmbeddedResource, TextResourceContents

from elicitkit import Elicitation
from elicitkit.shell import add_shell_tools
from elicitkit.shell._project import find_project
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import ERAS, Transport, connect, text_of
from tests.shell.scenes import BIN, PATH

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "mcp_bash_project"
REGISTRY = HERE / "mcp_bash_registry"
ELICITKIT = str(Path(BIN) / "elicitkit")
TOOLS = ["build", "console", "deploy", "flaky", "inventory", "settings", "status"]

DEPLOY_ANSWERS = [
    accept({"confirmed": True}),
    accept({"approver": "Ada"}),
    accept({"choice": "production"}),
    accept({"choices": []}),  # refused (the titled choice is required): asked again, below
    accept({"choice": "blue-green"}),
    accept({"choices": ["smoke", "load"]}),
    accept({"choices": ["sec"]}),
    accept({"minutes": 15}),
]
DEPLOYED = {
    "success": True,
    "result": {
        "service": "api",
        "approver": "Ada",
        "environment": "production",
        "strategy": "blue-green",
        "checks": "smoke,load",
        "notify": "sec",
        "minutes": 15,
    },
}
# The requestedSchema of each question, as mcp-bash's helpers build it (a titled multi-select goes out as the
# spec's items.anyOf, where mcp-bash writes items.oneOf).
DEPLOY_SCHEMAS = [
    {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]},
    {"type": "object", "properties": {"approver": {"type": "string"}}, "required": ["approver"]},
    {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": ["staging", "production"]}},
        "required": ["choice"],
    },
    {
        "type": "object",
        "properties": {
            "choice": {
                "type": "string",
                "oneOf": [
                    {"const": "rolling", "title": "Rolling (one node at a time)"},
                    {"const": "blue-green", "title": "Blue/green"},
                ],
            }
        },
        "required": ["choice"],
    },
    {
        "type": "object",
        "properties": {"choices": {"type": "array", "items": {"type": "string", "enum": ["smoke", "load"]}}},
        "required": ["choices"],
    },
    {
        "type": "object",
        "properties": {
            "choices": {
                "type": "array",
                "items": {"anyOf": [{"const": "ops", "title": "Operations"}, {"const": "sec", "title": "Security"}]},
            }
        },
        "required": ["choices"],
    },
    {"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 5}}, "required": ["minutes"]},
]


def served_env() -> dict[str, str]:
    """What `elicitkit serve` is started with: this interpreter's `elicitkit` and sources first on PATH."""
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@asynccontextmanager
async def project_client(
    way: Literal["stdio", "http"], mode: str, folder: Path = PROJECT, **options: Any
) -> AsyncIterator[Client]:
    """A client of `elicitkit serve FOLDER`, a real subprocess, over stdio or streamable HTTP."""
    if way == "stdio":
        params = StdioServerParameters(command=ELICITKIT, args=["serve", str(folder)], env=served_env())
        async with Client(params, mode=mode, **options) as client:
            yield client
        return
    command = [ELICITKIT, "serve", "--http", "127.0.0.1:0", str(folder)]
    async with await anyio.open_process(command, stderr=subprocess.PIPE, env={**os.environ, **served_env()}) as process:
        assert process.stderr is not None
        printed = ""
        try:
            with anyio.fail_after(20):
                async for chunk in TextReceiveStream(process.stderr):
                    printed += chunk
                    if "listening on " in printed and printed.endswith("\n"):
                        break
            url = printed.split("listening on ", 1)[1].split()[0]
            async with Client(url, mode=mode, **options) as client:
                yield client
        finally:
            process.terminate()
            with anyio.fail_after(10):
                await process.wait()


@pytest.mark.parametrize("way", ["stdio", "http"])
async def test_an_mcp_bash_project_is_served_as_it_is_with_every_layout_and_its_server_d(
    mode: str, way: Literal["stdio", "http"]
) -> None:
    human = ScriptedHuman(*DEPLOY_ANSWERS)
    with anyio.fail_after(60):
        async with project_client(way, mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]
            # server.d/server.meta.json: name, title, version and instructions.
            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.title, client.server_info.version) == (
                "field-desk",
                "Field Desk",
                "1.4.2",
            )
            assert client.instructions == "Ask before deploying; read inventory only inside the roots."
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(tools) == TOOLS  # smoke.sh, README.md and ui/index.html are not tools
            assert tools["deploy"].input_schema["required"] == ["service"]  # read from "arguments"
            assert tools["status"].input_schema["properties"] == {"service": {"type": "string"}}  # from "# mcp:"
            assert (tools["console"].meta or {})["ui"]["resourceUri"] == "ui://field-desk/console"
            deployed = await client.call_tool("deploy", {"service": "api"})  # tool.sh without +x
            status = await client.call_tool("status", {"service": "db"})  # status.py without +x, no metadata
            inventory = await client.call_tool("inventory", {})  # inventory.sh + inventory.meta.json
            with pytest.raises(MCPError) as failed:
                await client.call_tool("flaky", {"mode": "crash"})
    assert deployed.structured_content == DEPLOYED, text_of(deployed)
    asked = [(x.message, x.schema) for x in human.transcript]
    assert [message for message, _ in asked][:3] == ["Deploy api?", "Who approves?", "Which environment?"]
    assert [schema for _, schema in asked if schema] == DEPLOY_SCHEMAS[:3] + DEPLOY_SCHEMAS[3:4] * 2 + DEPLOY_SCHEMAS[
        4:
    ]
    assert status.structured_content == {"service": "db", "healthy": True}
    assert (status.meta or {})["exitCode"] == 0  # as mcp-bash marks every result
    assert text_of(status) == '{"service": "db", "healthy": true}\n'  # stdout as printed
    assert inventory.structured_content == {
        "success": True,
        "result": {"path": str(PROJECT / "data" / "inventory.txt"), "lines": 2, "roots": 1},
    }
    [embedded] = [c for c in inventory.content if isinstance(c, EmbeddedResource)]
    assert isinstance(embedded.resource, TextResourceContents)
    assert (embedded.resource.mime_type, embedded.resource.text) == (
        "text/plain",
        "rack-7: 12 nodes\nrack-9: 4 nodes\n",
    )
    assert (failed.value.error.code, failed.value.error.message) == (-32603, "disk full on /var")
    assert failed.value.error.data == {
        "exitCode": 3,
        "_meta": {"exitCode": 3, "stderr": "disk full on /var\nsecond line"},
        "stderrTail": "disk full on /var\nsecond line",
    }


async def test_register_json_declares_the_tools_a_project_serves(mode: str, transport: Transport) -> None:
    server = MCPServer("registry")
    add_shell_tools(Elicitation(server), REGISTRY, env=PATH)
    async with connect(server, transport, mode, elicitation_callback=ScriptedHuman()) as client:
        [tool] = (await client.list_tools()).tools  # tools/ignored/tool.sh is not scanned: tools are declared
        result = await client.call_tool("nightly.report", {"day": "mon"})
    assert (tool.name, tool.input_schema["properties"]) == ("nightly.report", {"day": {"type": "string"}})
    assert result.structured_content == {"success": True, "result": {"day": "mon", "status": "green"}}


async def test_every_helper_family_answers_as_mcp_bash_documents_it(mode: str) -> None:
    with anyio.fail_after(60):
        async with project_client("stdio", mode) as client:
            settings = await client.call_tool("settings", {})
            console = await client.call_tool("console", {})
            progress: list[tuple[float, str | None]] = []

            async def seen(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, message))

            build = await client.call_tool("build", {}, progress_callback=seen)
    assert settings.structured_content == {
        "region": "eu-west",  # config/settings.example.json over the --defaults
        "owner": "ops",  # from the defaults
        "dryRun": "false",  # false is a value, not a missing one
        "missing": "fallback",
        "truncated": {"result": [1, 2, 3, 4, 5], "truncated": True, "kept": 5, "total": 10},
        "attempts": 2,  # mcp_with_retry: exit 3 is retried, then 0
        "download": {"success": False, "error": {"type": "host_blocked", "message": "Host blocked by policy"}},
        "obj": '{"k":"v \\"q\\""}',
    }
    # A client without MCP Apps gets the text fallback; mcp_ui_form escapes what it is given.
    meta = '{"ui":{"resourceUri":"ui://field-desk/console","visibility":["model","app"]}}'
    assert console.structured_content == {"success": True, "result": f"Console (ui=no, escaped=1, meta={meta})"}
    assert text_of(build) == "built artifact.tar"
    assert progress == [(10, "Preparing"), (25, "1/4 compiled"), (75, "3/4 linked"), (100, "Done")]


def test_find_project_reads_each_layout_and_runs_scripts_without_the_executable_bit_through_their_interpreter() -> None:
    project = find_project(PROJECT)
    by_name = {tool.name: tool for tool in project.tools}
    assert sorted(by_name) == TOOLS
    assert project.mcp_bash
    assert (project.server.name, project.server.version) == ("field-desk", "1.4.2")
    assert by_name["deploy"].command == ["/usr/bin/env", "bash", str(PROJECT / "tools" / "deploy" / "tool.sh")]
    assert by_name["status"].command == ["/usr/bin/env", "python3", str(PROJECT / "tools" / "status" / "status.py")]
    assert by_name["inventory"].command == [str(PROJECT / "tools" / "inventory" / "inventory.sh")]
    assert by_name["settings"].metadata["description"].startswith("Configuration, truncation")  # <file>.meta.json
    assert json.dumps(by_name["deploy"].input_schema["properties"]) == (
        '{"service": {"type": "string", "description": "The service to deploy"}}'
    )


def test_a_script_without_the_executable_bit_or_a_shebang_runs_through_bash(tmp_path: Path) -> None:
    (tmp_path / "tools" / "hello").mkdir(parents=True)
    (tmp_path / "tools" / "hello" / "hello.sh").write_text("echo hi\n")
    [tool] = find_project(tmp_path).tools
    assert (tool.name, tool.command) == ("hello", ["bash", str(tmp_path / "tools" / "hello" / "hello.sh")])
