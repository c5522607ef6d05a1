"""What the security tests share: `elicitkit serve` as a real subprocess, and a person who keeps every question."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
from anyio.streams.text import TextReceiveStream
from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult

from tests.shell.scenes import BIN

ELICITKIT = str(Path(BIN) / "elicitkit")
TOOLS = Path(__file__).resolve().parent / "tools"
# `elicitkit` first, as a user's shell has it; what `elicitkit serve` passes on to its tools.
PATH = f"{BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
Served = Literal["stdio", "http"]
Question = tuple[str, str, Any]  # ("form", message, schema) or ("url", message, url)


@asynccontextmanager
async def elicitkit_serve(
    over: Served,
    folder: Path = TOOLS,
    *,
    env: Mapping[str, str] | None = None,
    flags: Sequence[str] = (),
    log: Path | None = None,
) -> AsyncIterator[StdioServerParameters | str]:
    """`elicitkit serve FOLDER` as a subprocess with exactly `env` (plus PATH); yields what a Client opens.

    With `log`, what the server writes to stderr (its log) is in that file once this exits.
    """
    environment = {"PATH": PATH, **(env or {})}
    command = [ELICITKIT, "serve", *flags, str(folder)]
    if over == "stdio":
        # The SDK adds its default environment (HOME, USER...) under ours; nothing else reaches the server.
        if log is None:
            yield StdioServerParameters(command=command[0], args=command[1:], env=environment)
        else:  # the shell execs the server in its place, its stderr to the log
            script = 'exec "$@" 2>>"$0"'
            yield StdioServerParameters(command="/bin/sh", args=["-c", script, str(log), *command], env=environment)
        return
    command[2:2] = ["--http", "127.0.0.1:0"]
    async with await anyio.open_process(command, env=environment, stderr=subprocess.PIPE) as process:
        assert process.stderr is not None
        printed = ""
        try:
            with anyio.fail_after(20):
                async for chunk in TextReceiveStream(process.stderr):
                    printed += chunk
                    if "listening on " in printed and printed.endswith("\n"):
                        break
            assert "listening on " in printed, printed
            yield printed.split("listening on ", 1)[1].split()[0]
        finally:
            process.terminate()
            with anyio.fail_after(10):
                await process.wait()
                async for chunk in TextReceiveStream(process.stderr):
                    printed += chunk
            if log is not None:
                await anyio.Path(log).write_text(printed)


class Recorder:
    """A person who declines every question and keeps what each one asked, exactly as the client got it."""

    def __init__(self) -> None:
        self.asked: list[Question] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        if isinstance(params, ElicitRequestURLParams):
            self.asked.append(("url", params.message, params.url))
        else:
            self.asked.append(("form", params.message, params.requested_schema))
        return ElicitResult(action="decline")
