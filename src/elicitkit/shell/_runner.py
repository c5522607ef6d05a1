"""Running one shell tool call: the process, what it is given, what becomes of its output.

The script runs in its own process group, in the project folder, with
mcp-bash's environment (arguments in `MCP_TOOL_ARGS_JSON`, the SDK in
`MCP_SDK`, the elicitation files, the roots, the resources file, and the
server's own `MCP_*` / `MCPBASH_*` settings) plus elicitkit's ask FIFO. A
script without the executable bit runs through its `#!` program, or bash.
What its output becomes is `_results`' job. Cancelling the call terminates
the process group (SIGTERM, then SIGKILL), and a script killed mid-question
leaves nothing pending: its questions are withdrawn.

The tool's own time limit counts the script's running time only: while a
person is being asked, the clock stops.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from mcp_types import CallToolResult

from elicitkit import _mcp
from elicitkit._mcp import ToolContext
from elicitkit._timeouts import SERVER_DEFAULT, Timeout
from elicitkit.shell._channel import CallFolder
from elicitkit.shell._folder import ShellTool
from elicitkit.shell._handoff import MOVED as SECRETS
from elicitkit.shell._questions import Reply, ShellQuestion, ask
from elicitkit.shell._results import Finished, timed_out, tool_result
from elicitkit.shell._roots import Root, roots_env, roots_for
from elicitkit.shell._streams import Notifications

if TYPE_CHECKING:
    from elicitkit._elicitation import Elicitation

__all__ = ["Options", "run_tool"]

logger = logging.getLogger("elicitkit.shell")

SDK_DIR = Path(__file__).resolve().parent / "sdk"
# What a tool sees of the server's environment unless the server inherits it whole (mcp-bash's "minimal").
_ENV_PAYLOAD_LIMIT = 64 * 1024  # mcp-bash's MCPBASH_ENV_PAYLOAD_THRESHOLD default
_UI_EXTENSION = "io.modelcontextprotocol/ui"  # MCP Apps: mcp_client_supports_ui
_MINIMAL_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM")


@dataclass(frozen=True)
class Options:
    """How a folder of tools is run; `elicitkit serve` sets these from its flags."""

    timeout: float | None = None  # a tool's running time unless its metadata says timeoutSecs; None: no limit
    question_timeout: Timeout = SERVER_DEFAULT  # how long a question waits unless the script says
    file_question_timeout: float = 30.0  # mcp-bash's helpers give up after 30 s (MCPBASH_ELICITATION_TIMEOUT)
    mcp_bash: bool = False  # a failing script fails the call as mcp-bash fails it (a JSON-RPC error)
    inherit_env: bool = False
    env: Mapping[str, str] | None = None  # added to every tool's environment
    max_output: int = 10 * 1024 * 1024
    stderr_tail: int = 4096
    kill_grace: float = 2.0


async def run_tool(
    hitl: Elicitation,
    tool: ShellTool,
    project: Path,
    options: Options,
    arguments: dict[str, Any],
    ctx: ToolContext,
) -> CallToolResult:
    """Run `tool` once with `arguments`, asking its questions through `hitl`, and return its result."""
    project = tool.project or project
    roots = await roots_for(ctx, project, os.environ)
    folder = CallFolder()
    clock = _Clock(tool.timeout if tool.timeout is not None else options.timeout)
    try:
        env = _environment(hitl, tool, project, options, arguments, ctx, folder) | roots_env(roots)
        try:
            process = await anyio.open_process(
                tool.command,
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, so everything it started goes with it
            )
        except OSError as exc:  # its #! program is missing, say: the tool's fault, told as a failed start
            said = f"{tool.command[0]} could not be started ({exc.strerror}; is the program on its #! line installed?)"
            done = Finished(tool.name, 127, "", said)
            return tool_result(done, mcp_bash=options.mcp_bash, roots=roots)
        try:
            return await _supervise(hitl, tool, options, ctx, folder, process, clock, roots)
        finally:
            with anyio.CancelScope(shield=True):
                await _end_group(process, options.kill_grace, folder)
    finally:
        folder.remove()


async def _supervise(
    hitl: Elicitation,
    tool: ShellTool,
    options: Options,
    ctx: ToolContext,
    folder: CallFolder,
    process: Process,
    clock: _Clock,
    roots: list[Root],
) -> CallToolResult:
    async def asker(question: ShellQuestion) -> Reply:
        # mcp-bash's helpers stop waiting after 30 s; the question is withdrawn with them.
        default = options.file_question_timeout if question.origin == "file" else options.question_timeout
        with clock.stopped():
            return await ask(hitl, ctx, question, default)

    stdout = _Capture(options.max_output)
    stderr = _Capture(options.stderr_tail, keep_tail=True)
    notifications = Notifications(folder, ctx, tool.name)
    async with anyio.create_task_group() as tg:
        tg.start_soon(folder.serve, tg, asker)
        tg.start_soon(notifications.run)
        with clock.scope:
            async with anyio.create_task_group() as io:
                assert process.stdout is not None
                assert process.stderr is not None
                io.start_soon(stdout.drain, process.stdout)
                io.start_soon(stderr.drain, process.stderr)
                await process.wait()
                # What the script left running in the background would hold its output open: the call is over.
                _signal_group(process.pid, signal.SIGKILL)
        tg.cancel_scope.cancel()  # the script is done: withdraw whatever it left asking
    await notifications.flush()  # lines written just before it exited
    if clock.scope.cancelled_caught:
        return timed_out(tool.name, clock.limit or 0, stderr.text())
    done = Finished(
        tool.name,
        process.returncode,
        stdout.text(),
        stderr.text(),
        overflowed=stdout.limit if stdout.overflowed else None,
        tool_error=folder.tool_error(),
        resources=folder.resources(),
    )
    return tool_result(done, mcp_bash=options.mcp_bash, roots=roots)


def _environment(
    hitl: Elicitation,
    tool: ShellTool,
    project: Path,
    options: Options,
    arguments: dict[str, Any],
    ctx: ToolContext,
    folder: CallFolder,
) -> dict[str, str]:
    base = dict(os.environ) if options.inherit_env else {k: v for k, v in os.environ.items() if _passed_on(k)}
    # elicitkit's secrets (and where the file holding them is) are never handed to a tool, whatever the
    # server inherits: they open everything elicitkit stored.
    env = {k: v for k, v in base.items() if k not in SECRETS} | dict(options.env or {})
    env["PATH"] = _with_own_bin(env.get("PATH", os.defpath))
    jq = shutil.which("jq") or shutil.which("gojq")
    meta = _wire_meta(ctx)
    rctx = _mcp.request_context(ctx)
    env.update(
        {
            "MCP_SDK": str(SDK_DIR),
            "MCP_TOOL_NAME": tool.name,
            "MCP_TOOL_PATH": str(tool.script),
            "MCP_TOOL_ERROR_FILE": str(folder.error_file),
            "MCP_TOOL_RESOURCES_FILE": str(folder.resources_file),
            "MCP_CANCEL_FILE": str(folder.cancel_file),
            "MCP_PROGRESS_STREAM": str(folder.progress_fifo),
            "MCP_LOG_STREAM": str(folder.log_fifo),
            # mcp-bash's helpers write progress only under a token; the SDK sends it only when the client asked.
            "MCP_PROGRESS_TOKEN": "elicitkit",
            "MCP_ELICIT_SUPPORTED": "1" if hitl.can_ask(ctx) else "0",
            "MCP_ELICIT_REQUEST_FILE": str(folder.request_file),
            "MCP_ELICIT_RESPONSE_FILE": str(folder.response_file),
            "MCPBASH_PROJECT_ROOT": str(project),
            "MCPBASH_CLIENT_SUPPORTS_UI": "1" if _UI_EXTENSION in _mcp.client_extensions(rctx) else "0",
            "MCPBASH_MODE": "full" if jq else "minimal",
            "MCPBASH_JSON_TOOL": os.path.basename(jq) if jq else "none",
            "MCPBASH_JSON_TOOL_BIN": jq or "",
            "ELICITKIT_ASK": str(folder.ask_fifo),
            "ELICITKIT_CALL_DIR": str(folder.path),
        }
    )
    for name, value in (("ARGS", arguments), ("METADATA", tool.metadata), ("META", meta)):
        env.update(_payload(folder, name, json.dumps(value, ensure_ascii=False)))
    return env


def _payload(folder: CallFolder, name: str, text: str) -> dict[str, str]:
    """`MCP_TOOL_<name>_JSON`, or past 64 KiB (a variable may hold 128 KiB at most) `MCP_TOOL_<name>_FILE`
    naming a file in the call's folder, as mcp-bash hands large payloads over; the SDK reads either."""
    if len(text.encode("utf-8")) <= _ENV_PAYLOAD_LIMIT:
        return {f"MCP_TOOL_{name}_JSON": text}
    file = f"tool.{name.lower()}.json"
    folder.files.write_atomically(file, text)
    return {f"MCP_TOOL_{name}_JSON": "", f"MCP_TOOL_{name}_FILE": str(folder.path / file)}


def _passed_on(name: str) -> bool:
    """A variable a tool sees in mcp-bash's minimal environment: the basics and the MCP_* / MCPBASH_* settings."""
    return name in _MINIMAL_ENV or name.startswith(("MCP_", "MCPBASH_"))


def _with_own_bin(path: str) -> str:
    """`path` with this installation's scripts folder first, so `elicitkit ask` is this server's own.

    A server started as `.venv/bin/elicitkit serve` without an activated
    virtualenv would otherwise leave its tools without `elicitkit` (or with another one).
    """
    own = str(Path(sys.executable).parent)
    if not (Path(own) / "elicitkit").exists():
        return path
    return os.pathsep.join([own, *(p for p in path.split(os.pathsep) if p and p != own)])


def _wire_meta(ctx: ToolContext) -> dict[str, Any]:
    """The call's `_meta` as the client sent it (mcp-bash hands it to tools as MCP_TOOL_META_JSON)."""
    params = _mcp.request_context(ctx).params
    meta = params.get("_meta") if isinstance(params, dict) else None
    return dict(meta) if isinstance(meta, dict) else {}


async def _end_group(process: Process, grace: float, folder: CallFolder) -> None:
    """Terminate the script's whole process group: SIGTERM, then SIGKILL after `grace` seconds."""
    if process.returncode is None:
        folder.mark_cancelled()  # mcp_is_cancelled, for scripts that check between steps
        _signal_group(process.pid, signal.SIGTERM)
        with anyio.move_on_after(grace):
            await process.wait()
    _signal_group(process.pid, signal.SIGKILL)
    await process.aclose()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Capture:
    """A stream read to the end: everything up to `limit` bytes, or only the last `limit` bytes."""

    def __init__(self, limit: int, *, keep_tail: bool = False) -> None:
        self.limit = limit
        self.keep_tail = keep_tail
        self.overflowed = False
        self._data = bytearray()

    async def drain(self, stream: ByteReceiveStream) -> None:
        async for chunk in stream:
            self._data += chunk
            if len(self._data) > self.limit:
                self.overflowed = True
                if self.keep_tail:
                    del self._data[: len(self._data) - self.limit]
                else:
                    del self._data[self.limit :]

    def text(self) -> str:
        return self._data.decode("utf-8", "replace")


class _Clock:
    """The tool's time limit, stopped while a person is being asked."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.scope = anyio.CancelScope(deadline=math.inf if limit is None else anyio.current_time() + limit)
        self._asking = 0
        self._stopped_at = 0.0
        self._deadline = self.scope.deadline

    @contextlib.contextmanager
    def stopped(self) -> Any:
        if self._asking == 0:
            self._stopped_at = anyio.current_time()
            self._deadline = self.scope.deadline
            self.scope.deadline = math.inf
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1
            if self._asking == 0:
                self.scope.deadline = self._deadline + (anyio.current_time() - self._stopped_at)
