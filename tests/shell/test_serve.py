"""`elicitkit serve DIR` as a user runs it: a real subprocess over stdio and over streamable HTTP, on both eras."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult

from elicitkit.shell import FolderError, add_shell_tools
from elicitkit.testing import ScriptedHuman, accept, decline
from tests.scenes import ERAS, new_server, text_of
from tests.shell.scenes import BIN, EXAMPLE

pytestmark = pytest.mark.anyio

ELICITKIT = str(Path(BIN) / "elicitkit")
RELEASED = {
    "success": True,
    "result": {"message": "Released 2.1", "channel": "beta", "build": "slim", "checks": "lint,unit"},
}


def release_answers(*more: ElicitResult) -> ScriptedHuman:
    return ScriptedHuman(
        accept({"confirmed": True}),
        accept({"choice": "beta"}),
        accept({"choice": "slim"}),
        accept({"choices": ["lint", "unit"]}),
        *more,
    )


async def test_elicitkit_serve_over_stdio_runs_the_mcp_bash_example(mode: str) -> None:
    human = release_answers(decline())
    server = StdioServerParameters(command=ELICITKIT, args=["serve", str(EXAMPLE)])
    with anyio.fail_after(30):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            assert client.protocol_version == ERAS[mode]
            assert [t.name for t in (await client.list_tools()).tools] == ["provision", "release", "restart"]
            released = await client.call_tool("release", {"version": "2.1"})
            stopped = await client.call_tool("release", {"version": "2.2"})
    assert released.structured_content == RELEASED
    assert stopped.structured_content == {"success": True, "result": {"message": "Stopped at confirm: decline"}}


@asynccontextmanager
async def served_over_http(*flags: str) -> AsyncIterator[str]:
    """`elicitkit serve --http 127.0.0.1:0 ...` running; yields the MCP URL it prints once it listens."""
    command = [ELICITKIT, "serve", "--http", "127.0.0.1:0", *flags, str(EXAMPLE)]
    async with await anyio.open_process(command, stderr=subprocess.PIPE) as process:
        assert process.stderr is not None
        printed = ""
        try:
            with anyio.fail_after(20):
                async for chunk in TextReceiveStream(process.stderr):
                    printed += chunk
                    if "listening on " in printed and printed.endswith("\n"):
                        break
            url = printed.split("listening on ", 1)[1].split()[0]
            yield url
        finally:
            process.terminate()
            with anyio.fail_after(10):
                await process.wait()


async def test_elicitkit_serve_over_http_runs_the_mcp_bash_example(mode: str) -> None:
    human = release_answers()
    async with served_over_http() as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        with anyio.fail_after(30):
            async with Client(url, mode=mode, elicitation_callback=human) as client:
                assert client.protocol_version == ERAS[mode]
                released = await client.call_tool("release", {"version": "2.1"})
    assert released.structured_content == RELEASED
    assert [x.message for x in human.transcript] == [
        "Release 2.1?",
        "Which channel?",
        "Which build?",
        "Which checks must pass?",
    ]


async def test_elicitkit_serve_over_http_with_a_durable_store_stops_at_a_decline(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELICITKIT_SECRET", "serve-durable-secret-0123456789abcdef0123")  # a durable store needs one
    async with served_over_http("--store", f"sqlite:///{tmp_path / 'runs.db'}") as url:
        with anyio.fail_after(30):
            async with Client(url, mode=mode, elicitation_callback=ScriptedHuman(decline())) as client:
                stopped = await client.call_tool("release", {"version": "3.0"})
    assert stopped.structured_content == {"success": True, "result": {"message": "Stopped at confirm: decline"}}


# --- folders that cannot be served: a clear message, never a half-started server ----------------------


def write_tool(folder: Path, meta: object | None, script: str | None = "tool.sh", *, executable: bool = True) -> None:
    folder.mkdir(parents=True)
    if meta is not None:
        (folder / "tool.meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    if script is not None:
        (folder / script).write_text("#!/bin/sh\necho hi\n")
        if executable:
            (folder / script).chmod(0o755)


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda root: None, "is not a folder"),
        (lambda root: write_tool(root / "tools" / "a", "{nope"), "tool.meta.json: not readable JSON"),
        (lambda root: write_tool(root / "tools" / "a", ["a"]), "tool.meta.json: must be a JSON object"),
        (lambda root: write_tool(root / "tools" / "a", {"name": "a b"}), "the tool name 'a b' must be 1-128"),
        (
            lambda root: write_tool(root / "tools" / "a", {"name": "a"}, script=None),
            "has tool.meta.json but no tool script",
        ),
        (
            lambda root: write_tool(root / "tools" / "a", {"inputSchema": {"type": "array"}}),
            'inputSchema must describe an object ("type": "object")',
        ),
        (
            lambda root: write_tool(root / "tools" / "a", {"inputSchema": {"properties": {"n": {"type": "nope"}}}}),
            "inputSchema is not a valid JSON schema",
        ),
        (lambda root: write_tool(root / "tools" / "a", {"timeoutSecs": 0}), "timeoutSecs must be a positive number"),
        (
            lambda root: (
                write_tool(root / "tools" / "a", {"name": "x"}),
                write_tool(root / "tools" / "b", {"name": "x"}),
            ),
            "two tools are named 'x'",
        ),
    ],
)
def test_a_folder_that_cannot_be_served_is_refused_naming_the_file_and_the_reason(
    tmp_path: Path, build: object, says: str
) -> None:
    root = tmp_path / "project"
    if callable(build):
        build(root)
    _, hitl = new_server()
    with pytest.raises(FolderError) as raised:
        add_shell_tools(hitl, root)
    assert says in str(raised.value)
    cli = subprocess.run([ELICITKIT, "serve", str(root)], capture_output=True, text=True, timeout=30)
    assert cli.returncode == 2
    assert cli.stderr.startswith("elicitkit serve: ") and says in cli.stderr


def test_a_tool_folder_without_metadata_serves_under_its_folder_name_taking_any_arguments(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools" / "hello", None)
    (tmp_path / "tools" / "notes").mkdir()  # no script and no metadata: not a tool
    _, hitl = new_server()
    [tool] = add_shell_tools(hitl, tmp_path / "tools")
    assert (tool.name, tool.input_schema) == ("hello", {"type": "object", "properties": {}})
    assert tool.script == tmp_path / "tools" / "hello" / "tool.sh"


async def test_a_served_tool_runs_in_the_project_folder_with_a_minimal_environment(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tool(tmp_path / "tools" / "where", {"name": "where"})
    (tmp_path / "tools" / "where" / "tool.sh").write_text(
        '#!/bin/sh\npwd\necho "secret=${ELICITKIT_SECRET:-unset} other=${OTHER:-unset} extra=${EXTRA:-unset}"\n'
    )
    monkeypatch.setenv("ELICITKIT_SECRET", "s3cret-s3cret-s3cret-s3cret-s3cret")
    monkeypatch.setenv("OTHER", "from the server")
    for inherit, other in [(False, "unset"), (True, "from the server")]:
        server, hitl = new_server()
        add_shell_tools(hitl, tmp_path, inherit_env=inherit, env={"EXTRA": "given"})
        async with Client(server, mode=mode) as client:
            result = await client.call_tool("where", {})
        assert text_of(result).splitlines() == [str(tmp_path), f"secret=unset other={other} extra=given"]
    assert os.environ["ELICITKIT_SECRET"]  # the server keeps it; no tool ever sees it
