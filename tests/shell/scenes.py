"""What the shell-tool tests share: the example and fixture folders, servers over them, and processes to watch."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from elicitkit import Elicitation
from elicitkit.shell import add_shell_tools

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "shell"
TOOLS = Path(__file__).resolve().parent / "tools"
# `elicitkit` (for `elicitkit ask`) is installed next to the interpreter running the tests.
BIN = str(Path(sys.executable).parent)
PATH = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def shell_server(folder: Path = TOOLS, **options: Any) -> tuple[MCPServer, Elicitation]:
    """A server with the tools of `folder`; `options` go to `Elicitation` except `timeout`, which is the tools'."""
    server = MCPServer("shell")
    tool_timeout = options.pop("tool_timeout", None)
    hitl = Elicitation(server, **options)
    add_shell_tools(hitl, folder, env=PATH, timeout=tool_timeout)
    return server, hitl


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):  # gone before the open, or between open and read
        return False
    return state not in ("Z", "X")


async def ended(pid: int, within: float = 5) -> None:
    """Wait for `pid` to end, woken by the kernel (a pidfd), never by a timer."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with anyio.fail_after(within):
            while alive(pid):
                await anyio.wait_readable(fd)
    finally:
        os.close(fd)


def pids_in(path: Path) -> list[int]:
    """The pids the `slow` tool wrote to `path` (before it asks, so by the time a question arrives)."""
    return [int(p) for p in path.read_text().split()]


def has_node() -> bool:
    return shutil.which("node") is not None
