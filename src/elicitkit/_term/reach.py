"""Reaching a server: what SERVER names, where a stdio server's own output goes, and why reaching it failed.

Every way to get SERVER wrong, and every way a server can fail to answer,
ends in one line a person can act on: a usage error (exit 2) for an address
that cannot be one, a `Unreachable` (exit 3) naming what happened and what to
try, with the end of a stdio server's own output.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit, urlunsplit

from mcp.client.stdio import StdioServerParameters

from elicitkit._term.arguments import UsageError

__all__ = ["ERA_HINT", "ServerLog", "Unreachable", "explain", "no_back_channel", "server_of"]

ERA_HINT = (
    "This server asks its questions the 2025-11-25 way (a request back to the client), "
    "which 2026-07-28 has no room for: try again with --protocol 2025-11-25"
)

# host:port[/path] typed without its scheme (what uvicorn prints, minus "http://")
_BARE_ADDRESS = re.compile(r"^(localhost|[\w.-]+:\d+|\[[0-9a-fA-F:.]+\](:\d+)?)(/\S*)?$")


_FRAME = "│╭╰─"  # rich's traceback box


class Unreachable(Exception):
    """The server could not be reached or used: exit status 3, one line (and the server's own output)."""

    output: str = ""
    """The end of a stdio server's own output (rich markup, made safe), shown under the line."""


def server_of(spec: str) -> StdioServerParameters | str:
    """A URL as it is; anything else is a command line for a stdio server.

    Raises:
        UsageError: SERVER cannot be an address or a command (said with what was likely meant).
    """
    spec = spec.strip()
    scheme = urlsplit(spec).scheme.lower() if "://" in spec else ""
    if scheme in ("http", "https"):
        if not urlsplit(spec).hostname:
            raise UsageError(f"{spec!r} has no host: give a URL like http://127.0.0.1:8000/mcp")
        return spec
    if scheme:
        raise UsageError(f"{scheme}:// is not a transport elicitkit speaks: give an http(s)://…/mcp URL")
    if _BARE_ADDRESS.match(spec):
        path = "" if "/" in spec.split("]")[-1] else "/mcp"
        raise UsageError(f"{spec!r} is an address without its scheme: did you mean http://{spec}{path} ?")
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise UsageError(f"SERVER is not a command line ({exc}): quote it as one argument") from None
    if not argv:
        raise UsageError("SERVER is empty: give an http(s)://…/mcp URL or the command that starts the server")
    if shutil.which(argv[0]) is None:
        if Path(argv[0]).is_file() and argv[0].endswith(".py"):
            raise UsageError(f'{argv[0]} is not executable: start it with python, as in "python {spec}"')
        raise UsageError(
            f"there is no command {argv[0]!r} to start the server "
            "(SERVER is an http(s)://…/mcp URL, or the command line that starts a stdio server)"
        )
    return StdioServerParameters(command=argv[0], args=argv[1:])


class ServerLog:
    """A stdio server's stderr, kept in a file so it does not tear through the prompts; shown when it fails."""

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="elicitkit-server-", suffix=".log")
        self.file: TextIO = os.fdopen(fd, "w", encoding="utf-8")
        self.kept = False

    def mark(self) -> int:
        """Where the log is now: `tail(since=…)` shows only what came after."""
        self.file.flush()
        return Path(self.path).stat().st_size

    def tail(self, lines: int = 15, since: int = 0) -> str:
        """The last lines written after `since`; the frames of a rich traceback (the SDK's logging draws them,
        80 columns wide in a file) are left out, so what was raised, and why, fits in them."""
        self.file.flush()
        with Path(self.path).open("rb") as log:
            log.seek(since)
            text = log.read().decode("utf-8", errors="replace")
        kept = [line.strip() for line in text.splitlines() if line.strip() and line.strip()[0] not in _FRAME]
        return "\n".join(kept[-lines:])

    def discard(self) -> None:
        self.file.close()
        if not self.kept:
            Path(self.path).unlink(missing_ok=True)


def no_back_channel(text: str) -> bool:
    """The SDK's words when a server sends a 2025-11-25 request on a 2026-07-28 connection."""
    return any(words in text for words in ("back-channel", "NoBackChannel", "back channel"))


def explain(exc: BaseException, spec: str, stdio: bool) -> str:
    """Why reaching the server failed, and what to try, in one line (never a traceback)."""
    text = str(exc)
    name = type(exc).__name__
    if no_back_channel(text):
        return ERA_HINT
    if stdio:
        if "Connection closed" in text or isinstance(exc, (EOFError, BrokenPipeError)):
            return "the server exited before it answered"
        if name == "ValidationError" or "JSON" in text:
            return (
                "the server wrote something that is not MCP on its standard output "
                "(a print()? a stdio server must log to standard error)"
            )
        return f"the server failed: {name}: {text}"
    if name in ("ConnectError", "ConnectionRefusedError") or "onnection refused" in text:
        return f"nothing answers at {_origin(spec)} (connection refused): is the server running?"
    if name in ("ConnectTimeout", "ReadTimeout", "TimeoutError"):
        return f"{_origin(spec)} did not answer in time"
    if "Not Found" in text or "404" in text:
        parts = urlsplit(spec)
        if parts.path.rstrip("/") != "/mcp":
            guess = urlunsplit((parts.scheme, parts.netloc, "/mcp", "", ""))
            return f"no MCP endpoint at {spec} (404 Not Found): streamable-HTTP servers usually serve {guess}"
        return f"no MCP endpoint at {spec} (404 Not Found)"
    if name in ("ConnectError", "RemoteProtocolError") or "ssl" in text.lower():
        return f"cannot talk to {_origin(spec)}: {text}"
    return f"{name}: {text}" if text else name


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
