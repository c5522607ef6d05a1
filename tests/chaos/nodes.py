"""Server nodes as real processes the chaos tests can kill, freeze and read.

Each node is tests/node_app.py with `--trace`: its stdout and stderr are read on
a thread for the node's whole life, and kept, so a test waits for what the node
says it did (`await node.said("HTTP 2 dropped")`) and checks afterwards that it
never logged a traceback. SIGUSR1 makes it print how many runs and open
questions it holds (`await node.holding()`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread

__all__ = ["SECRET", "Node", "effects_of", "running"]

APP = Path(__file__).parents[1] / "node_app.py"
SRC = Path(__file__).parents[2] / "src"
SECRET = "chaos-test-secret-0123456789abcdef0123456789ab"
POLL = 0.02  # seconds between looks at what a node said


class Node:
    """One server process on a shared store, with short timings (a 3 s lease, a 1 s forward timeout); `framework`
    is the server it serves its tools from (`mcp`: an `MCPServer`; `fastmcp`: a `FastMCP`)."""

    def __init__(self, store: str, name: str, effects: Path, gates: Path, framework: str = "mcp") -> None:
        self.name = name
        self.args = [
            sys.executable,
            str(APP),
            *("--store", store, "--node", name, "--effects", str(effects), "--secret", SECRET),
            *("--lease", "3", "--forward-timeout", "1", "--gates", str(gates), "--trace"),
            *("--framework", framework),
        ]
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.lines: list[str] = []
        self._reader: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        # Popen returns at once; what the node prints is read on a thread of its own.
        self.process = subprocess.Popen(  # noqa: ASYNC220
            self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        ready = await self.said("READY ", within=20)
        self.port = int(self.lines[ready].split()[1])

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        with process.stdout:
            for line in process.stdout:
                self.lines.append(line.rstrip("\n"))

    def mark(self) -> int:
        """Where the node's output stands now: `said(..., since=mark)` looks only at what comes after."""
        return len(self.lines)

    async def said(self, text: str, *, since: int = 0, within: float = 10) -> int:
        """Wait until a line at or after `since` contains `text`; return its index."""
        with anyio.fail_after(within):
            while True:
                for index in range(since, len(self.lines)):
                    if text in self.lines[index]:
                        return index
                if self.process is not None and self.process.poll() is not None:
                    raise AssertionError(f"node {self.name} exited with {self.process.returncode}:\n{self.output}")
                await anyio.sleep(POLL)

    async def holding(self) -> tuple[int, int]:
        """(active runs, pending questions) as the node counts them now."""
        since = self.mark()
        self.signal(signal.SIGUSR1)
        line = self.lines[await self.said("STATS ", since=since)]
        runs, questions = (int(part.partition("=")[2]) for part in line.split()[1:])
        return runs, questions

    async def holds_nothing(self, within: float = 5) -> None:
        """Wait until the node holds no run and no open question (a stale copy unwinds in its own task)."""
        with anyio.fail_after(within):
            while True:
                if await self.holding() == (0, 0):
                    return
                await anyio.sleep(0.05)

    def signal(self, signum: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def kill(self) -> None:
        """SIGKILL, as a crash would; reaped at once."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def assert_alive_and_clean(self) -> None:
        """The process still runs, and never logged a traceback or an error."""
        assert self.process is not None
        assert self.process.poll() is None, f"node {self.name} exited:\n{self.output}"
        assert "Traceback" not in self.output, self.output
        assert "ERROR" not in self.output, self.output

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a frozen node cannot act on SIGTERM
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._reader is not None:
            self._reader.join(timeout=10)


@asynccontextmanager
async def running(*nodes: Node) -> AsyncIterator[None]:
    """Start every node, one after the other; stop them all on the way out, whatever happened."""
    try:
        for node in nodes:
            await node.start()
        yield
    finally:
        for node in nodes:
            node.stop()


def effects_of(path: Path) -> list[str]:
    """The side effects every node performed, one line each ("create-vm web on node-a")."""
    return path.read_text().splitlines() if path.exists() else []
