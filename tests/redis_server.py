"""A real `redis-server` process for tests, on a free loopback port, that tests can kill and restart.

```python
server = RedisServer(tmp_path / "redis")
await server.start()      # returns once the server logs "Ready to accept connections"
await server.kill()       # SIGKILL, as a crash would
await server.restart()    # a new server on the same port
await server.stop()
```

By default nothing is persisted (`--save "" --appendonly no`), so a restart comes
back empty, as a Redis without persistence does in production. With
`persistent=True` every write goes to an append-only file first, so a restart,
or even a kill, loses nothing.

The binary comes from Debian's `redis-server` package; `./dev test` installs it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.to_thread

__all__ = ["MISSING", "RedisServer"]

READY = "Ready to accept connections"
MISSING = (
    "redis-server is not installed: the Redis tests start a real one. "
    "`./dev test` installs Debian's redis-server package when it is missing "
    "(or run: apt-get install redis-server)."
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One `redis-server` subprocess bound to 127.0.0.1, on a port chosen once and kept across restarts.

    Raises `RuntimeError` when the binary is missing, and from `start()` when the
    server exits or is not ready within `startup_timeout` seconds (with its output).
    """

    def __init__(
        self,
        directory: Path,
        *,
        persistent: bool = False,
        binary: str | None = None,
        startup_timeout: float = 10.0,
        options: Sequence[str] = (),
    ) -> None:
        found = binary or shutil.which("redis-server")
        if found is None:
            raise RuntimeError(MISSING)
        self.binary = found
        self.directory = directory
        self.persistent = persistent
        self.startup_timeout = startup_timeout
        self.options = list(options)
        self.port = free_port()
        self._process: subprocess.Popen[str] | None = None
        self._output: deque[str] = deque(maxlen=50)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start_blocking(self) -> None:
        """Start the server; return once it accepts connections. Needs no event loop (session fixtures call it
        wherever the first test that asks for Redis happens to run)."""
        if self.running:
            raise RuntimeError(f"redis-server is already running on port {self.port}")
        ready = threading.Event()
        became_ready: list[bool] = []
        process = self._spawn(ready, became_ready)
        try:
            # The reader thread sets `ready` on the READY line or when the output ends.
            if not ready.wait(self.startup_timeout):
                raise RuntimeError(f"redis-server was not ready within {self.startup_timeout:g} s:\n{self._tail()}")
            if not became_ready:
                raise RuntimeError(f"redis-server exited with {process.poll()} before it was ready:\n{self._tail()}")
        except BaseException:
            self._process = None
            if process.poll() is None:
                process.kill()
            process.wait()
            raise

    def stop_blocking(self) -> None:
        """Terminate the server (SIGTERM, which also flushes a persistent one) and wait for it to exit."""
        process, self._process = self._process, None
        if process is not None:
            self._terminate(process)

    async def start(self) -> None:
        """`start_blocking`, from a test's event loop."""
        await anyio.to_thread.run_sync(self.start_blocking)

    async def stop(self) -> None:
        """`stop_blocking`, from a test's event loop."""
        await anyio.to_thread.run_sync(self.stop_blocking)

    def signal(self, signum: int) -> None:
        """Send `signum` to the server (SIGSTOP freezes it: its connections stay open and nothing is answered)."""
        assert self._process is not None, "the server is not running"
        self._process.send_signal(signum)

    async def kill(self) -> None:
        """Kill the server with SIGKILL, as a crash would, and reap it."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
            await anyio.to_thread.run_sync(process.wait)

    async def restart(self) -> None:
        """Stop the server if it runs, then start it again on the same port."""
        await self.stop()
        await self.start()

    def _spawn(self, ready: threading.Event, became_ready: list[bool]) -> subprocess.Popen[str]:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._output.clear()
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        listen = ["--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.directory)]
        process = subprocess.Popen(
            [self.binary, "--save", "", *persistence, *listen, *self.options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._process = process
        # The reader drains stdout for the server's whole life: a full pipe would block the server's logging.
        threading.Thread(target=self._drain, args=(process, ready, became_ready), daemon=True).start()
        return process

    def _drain(self, process: subprocess.Popen[str], ready: threading.Event, became_ready: list[bool]) -> None:
        assert process.stdout is not None
        with process.stdout:
            for line in process.stdout:
                self._output.append(line.rstrip("\n"))
                if not ready.is_set() and READY in line:
                    became_ready.append(True)
                    ready.set()
        ready.set()

    @staticmethod
    def _terminate(process: subprocess.Popen[str]) -> None:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _tail(self) -> str:
        return "\n".join(self._output)
