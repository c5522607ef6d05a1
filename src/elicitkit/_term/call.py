"""`elicitkit call SERVER TOOL` and `elicitkit tools SERVER`: connect, call, show what came back.

SERVER is an `http(s)://…/mcp` URL (streamable HTTP) or a command line that
starts a stdio server. The client negotiates the newest protocol the server
speaks (`--protocol` pins 2025-11-25 or 2026-07-28), and answers
`elicitation/create` requests and `InputRequiredResult` rounds alike, through
the person at the terminal.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

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

from elicitkit._term.arguments import UsageError, check_arguments, parse_arguments
from elicitkit._term.person import TerminalPerson
from elicitkit._term.reach import ERA_HINT, ServerLog, Unreachable, explain, no_back_channel, server_of
from elicitkit._term.status import Status, StatusLine
from elicitkit._term.text import safe

__all__ = ["PROTOCOLS", "Session", "call", "list_tools"]

PROTOCOLS = {"auto": "auto", "2025-11-25": "legacy", "2026-07-28": "2026-07-28"}
"""`--protocol` values and the SDK client mode each one means."""

_ROUNDS = 200  # a long form is many 2026-07-28 rounds; the SDK's default stops at 10


class Session:
    """One connection to SERVER, with the terminal around it: the person, the status line, the server's log."""

    def __init__(self, spec: str, protocol: str, console: Console, *, plain: bool, answers: list[ElicitResult] | None):
        self.spec = spec
        self.protocol = protocol
        self.console = console
        self.server = server_of(spec)
        live = console.is_terminal and not plain and os.environ.get("TERM") != "dumb"
        self.status = Status()
        self.line = StatusLine(console, self.status, live=live and answers is None)
        self.person = TerminalPerson(console, self.line, answers=answers, plain=plain)
        self.log = ServerLog() if isinstance(self.server, StdioServerParameters) else None
        self.since: int | None = None
        """Where the stdio server's log stood when the call began: what came before is not about the call."""

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[Client]:
        """The connected client; a failure to reach or use the server becomes `Unreachable`, with the end of
        the server's own output when it is a stdio server."""
        sdk = logging.getLogger("mcp")
        said = _SdkLog(self.line)
        sdk.addHandler(said)
        propagates, sdk.propagate = sdk.propagate, False  # the SDK's tracebacks would tear through the prompts
        try:
            with self.line:
                async with self._client() as client:
                    yield client
        except (UsageError, Unreachable):
            raise
        except Exception as exc:  # one line for whatever went wrong, never a traceback
            cause = _one(exc)
            if isinstance(cause, UsageError):
                raise cause from None
            failure = cause if isinstance(cause, Unreachable) else Unreachable(explain(cause, self.spec, self.stdio))
            failure.output = self.own_output()
            raise failure from None
        finally:
            sdk.removeHandler(said)
            sdk.propagate = propagates

    def close(self) -> None:
        """Delete the stdio server's log, unless the person was shown its end (then it is kept to read)."""
        if self.log is not None:
            self.log.discard()

    @property
    def stdio(self) -> bool:
        return self.log is not None

    def own_output(self) -> str:
        """The end of a stdio server's own output since the call began (the log is then kept), as rich markup."""
        if self.log is None:
            return ""
        said = self.log.tail(since=self.since or 0)
        if not said:
            if self.since is not None:
                return ""
            return "[dim]The server printed nothing on standard error: does it start serving (`server.run()`)?[/dim]"
        self.log.kept = True
        return f"[dim]The server's own output ({safe(self.log.path)}) ends with:[/dim]\n{safe(said)}"

    def _client(self) -> Client:
        async def on_message(message: Any) -> None:
            if isinstance(message, ElicitCompleteNotification):
                self.line.note("[green]The server says the link's flow is complete.[/green]")

        async def on_log(params: LoggingMessageNotificationParams) -> None:
            self.line.note(f"[dim]server {params.level}: {safe(str(params.data))}[/dim]")

        transport: Any = self.server
        if isinstance(self.server, StdioServerParameters) and self.log is not None:
            transport = stdio_client(self.server, errlog=self.log.file)
        return Client(
            transport,
            mode=PROTOCOLS[self.protocol],
            # Always: a client without the capability is shown the fallback's system tool, as a model would be.
            elicitation_callback=self.person,
            message_handler=on_message,
            logging_callback=on_log,
            input_required_max_rounds=_ROUNDS,
        )


class _SdkLog(logging.Handler):
    """What the SDK logs, as one line above the status (the SDK logs tracebacks for a server's bad output)."""

    def __init__(self, line: StatusLine) -> None:
        super().__init__(logging.WARNING)
        self.line = line

    def emit(self, record: logging.LogRecord) -> None:
        said = record.getMessage()
        if said.startswith("Failed to parse JSONRPC message"):
            errors = getattr(record.exc_info[1], "errors", None) if record.exc_info else None
            found = errors()[0].get("input") if callable(errors) and errors() else None
            line = f": {safe(str(found)[:80])}" if isinstance(found, str) else ""
            self.line.note(
                "[yellow]The server wrote a line that is not MCP on its standard output (a print()? a stdio "
                f"server must log to standard error){line}[/yellow]"
            )
            return
        self.line.note(f"[dim]mcp: {safe(said)}[/dim]")


def _one(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]  # the SDK's task groups wrap the one error that matters
    return exc


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
    plain: bool = False,
) -> int:
    """Call `tool`; print its result. Exit status: 0, or 1 when the tool reports an error.

    Raises:
        UsageError: the tool does not exist, or its arguments are not what it takes (exit 2).
        Unreachable: the server could not be reached or failed the call (exit 3).
    """
    session = Session(spec, protocol, console, plain=plain, answers=answers)
    status = session.status

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        status.progressed(progress, total, message)
        session.line.changed()

    try:
        async with session.connected() as client:
            status.set("Listing tools")
            listed = {t.name: t for t in (await client.list_tools()).tools}
            if tool not in listed:
                known = ", ".join(sorted(listed)) or "none"
                raise UsageError(f"the server has no tool {tool!r} (it has: {known})")
            arguments = parse_arguments(pairs, raw_arguments, listed[tool].input_schema)
            check_arguments(tool, arguments, listed[tool].input_schema)
            if not raw:
                version = client.protocol_version
                session.line.note(f"[dim]{safe(tool)} on {safe(spec)} (MCP {safe(version)})[/dim]")
            status.set(f"Calling {tool}")
            session.since = session.log.mark() if session.log is not None else 0
            result = await client.call_tool(tool, arguments, progress_callback=progress)
            version = client.protocol_version
        _show(result, raw, console)
        if result.is_error:
            _why(result, version, session)
    finally:
        session.close()
    return 1 if result.is_error else 0


def _why(result: CallToolResult, version: str | None, session: Session) -> None:
    """What may explain a tool's error: an era mismatch, and the server's own output during the call."""
    texts = " ".join(item.text for item in result.content if isinstance(item, TextContent))
    if version == "2026-07-28" and no_back_channel(texts):
        session.console.print(f"[yellow]{safe(ERA_HINT)}[/yellow]", soft_wrap=True)
    if said := session.own_output():
        session.console.print(said, highlight=False, soft_wrap=True)


async def list_tools(spec: str, *, protocol: str, raw: bool, console: Console) -> int:
    """List the server's tools with their input schemas (as a client that can show forms sees them)."""
    session = Session(spec, protocol, console, plain=True, answers=None)
    try:
        async with session.connected() as client:
            listed = await client.list_tools()
    finally:
        session.close()
    if raw:
        print(listed.model_dump_json(by_alias=True, exclude_none=True))
        return 0
    table = Table("tool", "description", "input", show_lines=True)
    for tool in listed.tools:
        schema = json.dumps(tool.input_schema.get("properties", {}), indent=1)
        table.add_row(safe(tool.name), safe(tool.description or ""), safe(schema))
    console.print(table)
    return 0


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
