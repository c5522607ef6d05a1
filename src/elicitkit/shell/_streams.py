"""Progress and log lines a shell tool writes, handed on as they come.

mcp-bash's `mcp_progress` and `mcp_log_*` append JSON-RPC notification lines
to `MCP_PROGRESS_STREAM` and `MCP_LOG_STREAM`; here those are FIFOs in the
call's folder, read as they are written (mcp-bash polls the files). Progress
goes to the client under the call's own progress token. Log lines go to the
server's log (logger `elicitkit.shell.tool`), not to the client: MCP's logging
capability is deprecated as of 2026-07-28, and this server does not declare it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio

from elicitkit._mcp import ToolContext
from elicitkit.shell._channel import CallFolder

__all__ = ["Notifications"]

logger = logging.getLogger("elicitkit.shell")
tool_log = logging.getLogger("elicitkit.shell.tool")
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class Notifications:
    """A call's progress and log lines: handed on while the tool runs, and what is left once it exits."""

    def __init__(self, folder: CallFolder, ctx: ToolContext, tool: str) -> None:
        self.folder, self.ctx, self.tool = folder, ctx, tool

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._progress_lines)
            tg.start_soon(self._log_lines)

    async def flush(self) -> None:
        for line in self.folder.progress.rest():
            await self._progress(line)
        for line in self.folder.log.rest():
            self._log(line)

    async def _progress_lines(self) -> None:
        async for line in self.folder.progress.lines():
            # A line taken is handed on whole: the tool exiting (which cancels this) must not cut off its send.
            with anyio.CancelScope(shield=True):
                await self._progress(line)

    async def _log_lines(self) -> None:
        async for line in self.folder.log.lines():
            self._log(line)

    async def _progress(self, line: bytes) -> None:
        params = _params(line, "notifications/progress")
        progress, total, message = params.get("progress"), params.get("total"), params.get("message")
        if isinstance(progress, int | float) and _number(progress):
            await _send(
                self.ctx.report_progress(
                    float(progress),
                    float(total) if isinstance(total, int | float) and _number(total) else None,
                    message if isinstance(message, str) else None,
                )
            )

    def _log(self, line: bytes) -> None:
        params = _params(line, "notifications/message")
        level = _LEVELS.get(str(params.get("level")))
        if level is not None and "data" in params:
            name = params.get("logger")
            data = json.dumps(params["data"], ensure_ascii=False)
            tool_log.log(level, "%s [%s]: %s", self.tool, name if isinstance(name, str) else "-", data)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _params(line: bytes, method: str) -> dict[str, Any]:
    try:
        body = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(body, dict) or body.get("method") != method or not isinstance(body.get("params"), dict):
        return {}
    params: dict[str, Any] = body["params"]
    return params


async def _send(notification: Any) -> None:
    try:
        await notification
    except Exception:  # the request may be gone (a 2026-07-28 round returned): there is no one to tell
        logger.debug("shell tool: a progress or log line could not be forwarded", exc_info=True)
