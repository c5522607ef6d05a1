"""`elicitkit call SERVER TOOL` and `elicitkit tools SERVER`: connect, call, show what came back.

SERVER is an `http(s)://…/mcp` URL (streamable HTTP) or a command line that
starts a stdio server. The client negotiates the newest protocol the server
speaks (`--protocol` pins 2025-11-25 or 2026-07-28), and answers
`elicitation/create` requests and `InputRequiredResult` rounds alike, through
the person at the terminal.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import (
    CallToolResult,
    ElicitCompleteNotification,
    ElicitResult,
    LoggingMessageNotificationParams,
    TextContent,
)
from rich.console import Console
from rich.table import Table

from elicitkit._term.person import TerminalPerson
from elicitkit._term.text import safe

__all__ = ["PROTOCOLS", "UsageError", "call", "list_tools", "parse_arguments", "server_of"]

PROTOCOLS = {"auto": "auto", "2025-11-25": "legacy", "2026-07-28": "2026-07-28"}
"""`--protocol` values and the SDK client mode each one means."""


class UsageError(Exception):
    """The command line asks for something that cannot be: exit status 2, one line, no traceback."""


_ROUNDS = 200  # a long form is many 2026-07-28 rounds; the SDK's default stops at 10


def server_of(spec: str) -> StdioServerParameters | str:
    """A URL as it is; anything else is a command line for a stdio server."""
    if spec.lower().startswith(("http://", "https://")):
        return spec
    argv = shlex.split(spec)
    if not argv:
        raise UsageError("SERVER is empty: give an http(s)://…/mcp URL or the command that starts the server")
    return StdioServerParameters(command=argv[0], args=argv[1:])


def parse_arguments(pairs: list[str], raw: str | None, input_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`--args '{…}'`, then each `--arg k=v`.

    A value for a string property (per the tool's `input_schema`) is taken as
    typed; any other value is read as JSON when it is JSON, else as text.
    """
    arguments: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--args takes a JSON object")
        arguments.update(loaded)
    properties = (input_schema or {}).get("properties", {})
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--arg takes key=value, not {pair!r}")
        if properties.get(key, {}).get("type") == "string":
            arguments[key] = value
            continue
        try:
            arguments[key] = json.loads(value)
        except json.JSONDecodeError:
            arguments[key] = value
    return arguments


class _ServerLog:
    """A stdio server's stderr, kept in a file so it does not interleave with the prompts; shown if it fails."""

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="elicitkit-server-", suffix=".log")
        self.file: TextIO = os.fdopen(fd, "w", encoding="utf-8")

    def discard(self) -> None:
        self.file.close()
        Path(self.path).unlink(missing_ok=True)

    def tail(self, lines: int = 15) -> str:
        self.file.flush()
        text = Path(self.path).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


@asynccontextmanager
async def _connected(
    spec: str, protocol: str, console: Console, person: TerminalPerson | None
) -> AsyncIterator[Client]:
    server = server_of(spec)
    log = _ServerLog() if isinstance(server, StdioServerParameters) else None
    try:
        async with _client(server, protocol, console, person, log) as client:
            yield client
    except Exception:
        if log is not None and (said := log.tail()):
            console.print(f"[dim]The server's own output ({safe(log.path)}) ends with:[/dim]")
            console.print(safe(said), highlight=False)
            log = None  # kept, for the person to read
        raise
    finally:
        if log is not None:
            log.discard()


def _client(
    server: StdioServerParameters | str,
    protocol: str,
    console: Console,
    person: TerminalPerson | None,
    log: _ServerLog | None,
) -> Client:
    async def on_message(message: Any) -> None:
        if isinstance(message, ElicitCompleteNotification):
            console.print("[green]The server says the link's flow is complete.[/green]")

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        console.print(f"[dim]server {params.level}: {safe(str(params.data))}[/dim]")

    transport: Any = server
    if isinstance(server, StdioServerParameters) and log is not None:
        transport = stdio_client(server, errlog=log.file)
    return Client(
        transport,
        mode=PROTOCOLS[protocol],
        elicitation_callback=person,
        message_handler=on_message,
        logging_callback=on_log,
        input_required_max_rounds=_ROUNDS,
    )


async def call(
    spec: str,
    tool: str,
    pairs: list[str],
    raw_arguments: str | None,
    *,
    protocol: str,
    raw: bool,
    answers: list[ElicitResult] | None,
    console: Console,
) -> int:
    """Call `tool`; print its result. Exit status: 0, or 1 when the tool reports an error."""
    person = TerminalPerson(console, answers=answers)

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        console.print(_bar(progress, total, message))

    async with _connected(spec, protocol, console, person) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        if tool not in listed:
            known = ", ".join(sorted(listed)) or "none"
            raise UsageError(f"the server has no tool {tool!r} (it has: {known})")
        arguments = parse_arguments(pairs, raw_arguments, listed[tool].input_schema)
        if not raw:
            console.print(f"[dim]{safe(tool)} on {safe(spec)} (MCP {client.protocol_version})[/dim]", soft_wrap=True)
        result = await client.call_tool(tool, arguments, progress_callback=progress)
    _show(result, raw, console)
    return 1 if result.is_error else 0


async def list_tools(spec: str, *, protocol: str, raw: bool, console: Console) -> int:
    """List the server's tools with their input schemas."""
    async with _connected(spec, protocol, console, None) as client:
        listed = await client.list_tools()
    if raw:
        print(listed.model_dump_json(by_alias=True, exclude_none=True))
        return 0
    table = Table("tool", "description", "input", show_lines=True)
    for tool in listed.tools:
        schema = json.dumps(tool.input_schema.get("properties", {}), indent=1)
        table.add_row(safe(tool.name), safe(tool.description or ""), safe(schema))
    console.print(table)
    return 0


def _bar(done: float, total: float | None, message: str | None) -> str:
    text = f" {safe(message)}" if message else ""
    if not (total and math.isfinite(total) and math.isfinite(done)):
        return f"[cyan]… {done:g}[/cyan]{text}"
    filled = max(0, min(20, round(20 * done / total)))
    return f"[cyan][{'█' * filled}{'·' * (20 - filled)}] {done:g}/{total:g}[/cyan]{text}"


def _show(result: CallToolResult, raw: bool, console: Console) -> None:
    if raw:
        print(result.model_dump_json(by_alias=True, exclude_none=True))
        return
    style = "red" if result.is_error else "green"
    console.rule(f"[{style}]{'error' if result.is_error else 'result'}[/{style}]")
    for item in result.content:
        if isinstance(item, TextContent):
            console.print(safe(item.text), soft_wrap=True)
        else:
            console.print(f"[dim]({item.type} content)[/dim]")
    texts = [item.text for item in result.content if isinstance(item, TextContent)]
    structured = result.structured_content
    # A tool returning a plain value gets {"result": value} from the SDK: already shown as text above.
    if structured is not None and not (set(structured) == {"result"} and [str(structured["result"])] == texts):
        console.print_json(json.dumps(structured))
