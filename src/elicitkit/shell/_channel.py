"""The per-call channel between a running shell tool and the server: a private folder, two ways to ask in it.

Each call gets a folder only its user can enter (mode 0700) holding:

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
import errno
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from elicitkit.shell import _inotify
from elicitkit.shell._questions import BadRequest, Origin, Reply, ShellQuestion, parse

__all__ = ["CallFolder", "FifoReader"]

logger = logging.getLogger("elicitkit.shell")

Asker = Callable[[ShellQuestion], Awaitable[Reply]]

REQUEST = "elicit.request"
RESPONSE = "elicit.response"
ASK = "ask"
PROGRESS = "progress"  # MCP_PROGRESS_STREAM: mcp-bash's notifications/progress lines
LOG = "log"  # MCP_LOG_STREAM: notifications/message lines
_MAX_LINE = 64 * 1024
_REPLY_WAIT = 10.0  # seconds an asker may take to read a reply larger than a pipe holds
_POLL = 0.02  # seconds between looks for the request file where the kernel cannot tell (no inotify)


class CallFolder:
    """One tool call's private folder, its two ways in, and the questions open through them."""

    def __init__(self, parent: str | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="elicitkit-call-", dir=parent))
        for fifo in (ASK, PROGRESS, LOG):
            os.mkfifo(self.path / fifo, 0o600)
        self.asks, self.progress, self.log = (FifoReader(self.path / name) for name in (ASK, PROGRESS, LOG))
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
        return self.path / "tool.error"

    @property
    def cancel_file(self) -> Path:
        return self.path / "cancelled"

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
        shutil.rmtree(self.path, ignore_errors=True)

    # --- mcp-bash's request file ------------------------------------------------------------------

    async def _watch_request_file(self, tg: TaskGroup, asker: Asker) -> None:
        if self._watch is None:
            while True:
                if self.request_file.exists():
                    self._take_request_file(tg, asker)
                await anyio.sleep(_POLL)
        with contextlib.suppress(anyio.ClosedResourceError):
            while True:
                if await self._watch.next_name() == REQUEST:
                    self._take_request_file(tg, asker)

    def _take_request_file(self, tg: TaskGroup, asker: Asker) -> None:
        try:
            raw = self.request_file.read_bytes()
        except FileNotFoundError:
            return  # the script gave up and removed it (a timeout on its side)
        # mcp-bash's server consumes the request; the script asks one question at a time, so a new one
        # means it stopped waiting for the last (its own timeout ran out): that question is withdrawn.
        self.request_file.unlink(missing_ok=True)
        if self._file_question is not None:
            self._file_question.cancel()
        scope = anyio.CancelScope()
        self._file_question = scope
        tg.start_soon(self._answer_file, scope, raw, asker)

    async def _answer_file(self, scope: anyio.CancelScope, raw: bytes, asker: Asker) -> None:
        with scope:
            reply = await _reply_to(raw, "file", asker)
            _write_atomically(self.response_file, reply.to_json())
        if self._file_question is scope:
            self._file_question = None

    # --- elicitkit's ask FIFO ---------------------------------------------------------------------

    async def _read_ask_fifo(self, tg: TaskGroup, asker: Asker) -> None:
        async for line in self.asks.lines():
            base = self._question_base(line)
            if base is not None:
                tg.start_soon(self._answer_fifo, base, asker)

    def _question_base(self, line: bytes) -> Path | None:
        """The question a line names: a `q.*` name inside this folder and nothing else."""
        name = os.path.basename(line.decode("utf-8", "replace").strip())
        if not name.startswith("q.") or "/" in name or name in ("q.", ""):
            if name:
                logger.warning("shell tool: ignored a line on the ask FIFO that names no question")
            return None
        return self.path / name

    async def _answer_fifo(self, base: Path, asker: Asker) -> None:
        request = base.with_name(base.name + ".json")
        try:
            raw = _read_private(request)
        except OSError as exc:
            reply = Reply("error", error="invalid_request", detail=f"cannot read {request.name}: {exc.strerror}")
        else:
            reply = await _reply_to(raw, "fifo", asker)
        await _write_to_fifo(base.with_name(base.name + ".fifo"), reply.to_json() + "\n")


class FifoReader:
    """Lines written to a FIFO by any number of writers, read as they come.

    Opened for reading and writing, so the FIFO never reports end-of-file
    between writers and a writer never blocks; opened before the tool starts,
    so nothing it writes is missed, and `rest()` takes what is left once it exits.
    """

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self._pending = b""

    async def lines(self) -> AsyncIterator[bytes]:
        while self._fd is not None:
            await anyio.wait_readable(self._fd)
            for line in self._read():
                yield line

    def rest(self) -> list[bytes]:
        """The complete lines written and not yet read (without waiting)."""
        return self._read() if self._fd is not None else []

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


def _read_private(path: Path) -> bytes:
    """Read a request file, refusing links and anything that is not a plain file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def _write_to_fifo(path: Path, text: str) -> None:
    """Hand the reply to the asker's FIFO; an asker that is gone (no reader, no FIFO) is not waited for."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        logger.warning("shell tool: the asker left before its reply (%s)", exc.strerror)
        return
    data = memoryview(text.encode("utf-8"))
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            logger.warning("shell tool: %s is not a FIFO; no reply written", path.name)
            return
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
