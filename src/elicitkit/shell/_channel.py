"""The per-call channel between a running shell tool and the server: a private folder, two ways to ask in it.

Each call gets a folder only its user can enter (mode 0700; `_private`: no
file in it is opened through a link) holding:

- `elicit.request` / `elicit.response`: mcp-bash's file protocol, unchanged
  (`MCP_ELICIT_REQUEST_FILE`, `MCP_ELICIT_RESPONSE_FILE`). The server learns
  of a request from the kernel (inotify) as it is renamed into place, and
  writes the response atomically (a temporary file renamed over it). Where
  there is no inotify (macOS, BSD) it looks for the file every 20 ms instead.
- `ask`: a FIFO (`ELICITKIT_ASK`) for elicitkit's shell SDK and `elicitkit
  ask`, with no polling on either side. To ask, a program writes its request
  JSON to `q.<anything>.json` in the folder, makes a FIFO `q.<anything>.fifo`
  and opens it, then writes the line `q.<anything>` to `ask`; the reply is
  one JSON line on its own FIFO. Any number of questions may be open at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from elicitkit.shell import _inotify
from elicitkit.shell._private import PrivateFolder, Refused
from elicitkit.shell._questions import BadRequest, Origin, Reply, ShellQuestion, parse

__all__ = ["CallFolder", "FifoReader"]

logger = logging.getLogger("elicitkit.shell")

Asker = Callable[[ShellQuestion], Awaitable[Reply]]

REQUEST = "elicit.request"
RESPONSE = "elicit.response"
ASK = "ask"
PROGRESS = "progress"  # MCP_PROGRESS_STREAM: mcp-bash's notifications/progress lines
LOG = "log"  # MCP_LOG_STREAM: notifications/message lines
ERROR = "tool.error"  # MCP_TOOL_ERROR_FILE: mcp_fail's JSON-RPC error
RESOURCES = "tool.resources"  # MCP_TOOL_RESOURCES_FILE: the files mcp_result_text_with_resource embeds
CANCELLED = "cancelled"  # MCP_CANCEL_FILE: there once the call is cancelled
_MAX_LINE = 64 * 1024
_REPLY_WAIT = 10.0  # seconds an asker may take to read a reply larger than a pipe holds
_POLL = 0.02  # seconds between looks for the request file where the kernel cannot tell (no inotify)


class CallFolder:
    """One tool call's private folder, its two ways in, and the questions open through them."""

    def __init__(self, parent: str | None = None) -> None:
        self.files = PrivateFolder(parent)
        self.path = self.files.path
        for fifo in (ASK, PROGRESS, LOG):
            self.files.mkfifo(fifo)
        self.asks, self.progress, self.log = (
            FifoReader(self.files.open_fifo(name, os.O_RDWR), name) for name in (ASK, PROGRESS, LOG)
        )
        # Watching from before the tool starts: a request written at once is not missed.
        self._watch = _watch(self.path)
        self._file_question: anyio.CancelScope | None = None

    @property
    def request_file(self) -> Path:
        return self.path / REQUEST

    @property
    def response_file(self) -> Path:
        return self.path / RESPONSE

    @property
    def ask_fifo(self) -> Path:
        return self.path / ASK

    @property
    def progress_fifo(self) -> Path:
        return self.path / PROGRESS

    @property
    def log_fifo(self) -> Path:
        return self.path / LOG

    @property
    def error_file(self) -> Path:
        return self.path / ERROR

    @property
    def resources_file(self) -> Path:
        return self.path / RESOURCES

    @property
    def cancel_file(self) -> Path:
        return self.path / CANCELLED

    def tool_error(self) -> bytes | None:
        """What `mcp_fail` wrote to the error file, if anything (never read through a link)."""
        return self._written(ERROR)

    def resources(self) -> bytes | None:
        """The files the tool asked to embed in its result, as it listed them (never read through a link)."""
        return self._written(RESOURCES)

    def _written(self, name: str) -> bytes | None:
        try:
            return self.files.read(name)
        except FileNotFoundError:
            return None
        except (Refused, OSError) as exc:
            logger.warning("shell tool: ignored %s: %s", name, exc)
            return None

    def mark_cancelled(self) -> None:
        """Create the cancel file, for `mcp_is_cancelled`; a link in its place is refused, not followed."""
        try:
            self.files.touch(CANCELLED)
        except (Refused, OSError) as exc:
            logger.warning("shell tool: no %s file: %s", CANCELLED, exc)

    async def serve(self, tg: TaskGroup, asker: Asker) -> None:
        """Answer questions from both ways in until cancelled; each question runs in `tg`."""
        async with anyio.create_task_group() as inner:
            inner.start_soon(self._watch_request_file, tg, asker)
            inner.start_soon(self._read_ask_fifo, tg, asker)

    def remove(self) -> None:
        for reader in (self.asks, self.progress, self.log):
            reader.close()
        if self._watch is not None:
            self._watch.close()
        self.files.remove()

    # --- mcp-bash's request file ------------------------------------------------------------------

    async def _watch_request_file(self, tg: TaskGroup, asker: Asker) -> None:
        if self._watch is None:
            while True:
                if self.files.exists(REQUEST):
                    self._take_request_file(tg, asker)
                await anyio.sleep(_POLL)
        with contextlib.suppress(anyio.ClosedResourceError):
            while True:
                if await self._watch.next_name() == REQUEST:
                    self._take_request_file(tg, asker)

    def _take_request_file(self, tg: TaskGroup, asker: Asker) -> None:
        # mcp-bash's server consumes the request; the script asks one question at a time, so a new one
        # means it stopped waiting for the last (its own timeout ran out): that question is withdrawn.
        request: bytes | Reply
        try:
            request = self.files.take(REQUEST)
        except FileNotFoundError:
            return  # the script gave up and removed it (a timeout on its side)
        except (Refused, OSError) as exc:
            logger.warning("shell tool: refused %s: %s", REQUEST, exc)
            request = Reply("error", error="invalid_request", detail=f"refused {REQUEST}: {exc}")
        if self._file_question is not None:
            self._file_question.cancel()
        scope = anyio.CancelScope()
        self._file_question = scope
        tg.start_soon(self._answer_file, scope, request, asker)

    async def _answer_file(self, scope: anyio.CancelScope, request: bytes | Reply, asker: Asker) -> None:
        with scope:
            reply = request if isinstance(request, Reply) else await _reply_to(request, "file", asker)
            try:
                self.files.write_atomically(RESPONSE, reply.to_json())
            except (Refused, OSError) as exc:
                logger.warning("shell tool: no %s written: %s", RESPONSE, exc)
        if self._file_question is scope:
            self._file_question = None

    # --- elicitkit's ask FIFO ---------------------------------------------------------------------

    async def _read_ask_fifo(self, tg: TaskGroup, asker: Asker) -> None:
        async for line in self.asks.lines():
            name = self._question_name(line)
            if name is not None:
                tg.start_soon(self._answer_fifo, name, asker)

    def _question_name(self, line: bytes) -> str | None:
        """The question a line names: a `q.*` name inside this folder and nothing else."""
        name = os.path.basename(line.decode("utf-8", "replace").strip())
        if not name.startswith("q.") or "/" in name or name in ("q.", ""):
            if name:
                logger.warning("shell tool: ignored a line on the ask FIFO that names no question")
            return None
        return name

    async def _answer_fifo(self, name: str, asker: Asker) -> None:
        request = f"{name}.json"
        try:
            raw = self.files.read(request)
        except Refused as exc:
            logger.warning("shell tool: refused %s: %s", request, exc)
            reply = Reply("error", error="invalid_request", detail=f"cannot read {request}: {exc}")
        except OSError as exc:
            reply = Reply("error", error="invalid_request", detail=f"cannot read {request}: {exc.strerror}")
        else:
            reply = await _reply_to(raw, "fifo", asker)
        await self._write_to_fifo(f"{name}.fifo", reply.to_json() + "\n")

    async def _write_to_fifo(self, name: str, text: str) -> None:
        """Hand the reply to the asker's FIFO; an asker that is gone (no reader, no FIFO) is not waited for."""
        try:
            fd = self.files.open_fifo(name, os.O_WRONLY)
        except Refused as exc:
            logger.warning("shell tool: no reply written: %s", exc)
            return
        except OSError as exc:
            logger.warning("shell tool: the asker left before its reply (%s)", exc.strerror)
            return
        data = memoryview(text.encode("utf-8"))
        try:
            with anyio.move_on_after(_REPLY_WAIT):
                while data:
                    try:
                        data = data[os.write(fd, data) :]
                    except BlockingIOError:
                        await anyio.wait_writable(fd)  # a reply larger than the pipe's buffer
                    except BrokenPipeError:
                        return
        finally:
            anyio.notify_closing(fd)
            os.close(fd)


class FifoReader:
    """Lines written to a FIFO by any number of writers, read as they come.

    Opened for reading and writing, so the FIFO never reports end-of-file
    between writers and a writer never blocks; opened before the tool starts,
    so nothing it writes is missed, and `rest()` takes what is left once it exits.
    """

    def __init__(self, fd: int, name: str) -> None:
        self.name = name
        self._fd: int | None = fd
        self._pending = b""
        self._ready: deque[bytes] = deque()
        """Complete lines read off the FIFO and not yet handed on: a reader cancelled between two lines keeps the
        rest for `rest()`, never dropping them with a generator's frame."""

    async def lines(self) -> AsyncIterator[bytes]:
        while self._fd is not None:
            if not self._ready:
                await anyio.wait_readable(self._fd)
                self._ready.extend(self._read())
            while self._ready:
                yield self._ready.popleft()

    def rest(self) -> list[bytes]:
        """The complete lines written and not yet handed on (without waiting)."""
        left = list(self._ready)
        self._ready.clear()
        return left + self._read() if self._fd is not None else left

    def _read(self) -> list[bytes]:
        assert self._fd is not None
        while True:
            try:
                chunk = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                break
            self._pending += chunk
            if len(chunk) < 64 * 1024:
                break
        *lines, self._pending = self._pending.split(b"\n")
        if len(self._pending) > _MAX_LINE:
            logger.warning("shell tool: dropped an over-long line on %s", self.name)
            self._pending = b""
        return lines

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            anyio.notify_closing(fd)
            os.close(fd)


def _watch(folder: Path) -> _inotify.FolderWatch | None:
    """A kernel watch on the call folder, or None to look every `_POLL` seconds (no inotify, or none left)."""
    if not _inotify.available():
        return None
    try:
        return _inotify.FolderWatch(folder)
    except OSError as exc:  # EMFILE / ENOSPC: fs.inotify.max_user_instances or max_user_watches reached
        logger.warning("shell tool: cannot watch the call folder (%s); looking every %g s instead", exc, _POLL)
        return None


async def _reply_to(raw: bytes, origin: Origin, asker: Asker) -> Reply:
    try:
        question = parse(raw, origin)
    except BadRequest as exc:
        logger.warning("shell tool: refused a question: %s", exc)
        return Reply("error", error="invalid_request", detail=str(exc))
    return await asker(question)
