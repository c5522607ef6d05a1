"""HTTP/1.1 written by hand on a plain TCP socket: bodies that are too large, too slow, or never finished.

httpx sends a body whole and would not let a test stop half-way or watch what
the server answers while it is still sending; these requests do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketStream

MiB = 1 << 20


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    closed: bool
    """The server closed the connection after answering."""


class Request:
    """One request on its own connection: the head is sent on entry, the body as the test decides."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self._buffer = b""

    async def send(self, data: bytes) -> bool:
        """Send `data`; False once the server no longer takes any (it answered and closed)."""
        try:
            await self.stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return False
        return True

    async def stream_until_answered(self, piece: bytes, most: int) -> tuple[Answer, int]:
        """Send `piece` again and again, up to `most` bytes, until the server answers; the answer and bytes sent."""
        sent = 0
        answers: list[Answer] = []
        answered = anyio.Event()

        async def listen() -> None:
            answers.append(await self.answer())
            answered.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(listen)
            while sent < most and not answered.is_set() and await self.send(piece):
                sent += len(piece)
            await answered.wait()
        return answers[0], sent

    async def answer(self) -> Answer:
        """The server's answer, and whether it then closed the connection."""
        while b"\r\n\r\n" not in self._buffer:
            self._buffer += await self.stream.receive()
        head, _, rest = self._buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            rest += await self.stream.receive()
        try:
            closed = not await self.stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            closed = True
        return Answer(int(status_line.split()[1]), headers, rest[:length], closed)


@asynccontextmanager
async def request(url: str, headers: Mapping[str, str], method: str = "POST") -> AsyncIterator[Request]:
    """Open a connection to `url` and send the request's head (no body yet)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    head = [f"{method} {parts.path or '/'} HTTP/1.1", f"Host: {parts.netloc}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    async with await anyio.connect_tcp(parts.hostname, parts.port) as stream:
        await stream.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        yield Request(stream)


def chunk(data: bytes) -> bytes:
    """`data` as one chunk of a `Transfer-Encoding: chunked` body."""
    return b"%x\r\n%s\r\n" % (len(data), data)
