"""A shell tool's progress lines reach the client whole and in order, however the tool's end cuts into them."""

from __future__ import annotations

import json
import os

import anyio
import pytest

from elicitkit.shell._channel import CallFolder
from elicitkit.shell._streams import Notifications

pytestmark = pytest.mark.anyio


def progress_line(value: int, message: str) -> bytes:
    params = {"progressToken": "t", "progress": value, "message": message}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}).encode() + b"\n"


class SlowClient:
    """A tool context whose first progress notification takes until `release` is set to be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, str | None]] = []
        self.sending = anyio.Event()
        self.release = anyio.Event()

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if not self.sending.is_set():
            self.sending.set()
            await self.release.wait()
        self.sent.append((progress, message))


async def test_lines_written_together_all_reach_the_client_when_the_tool_ends_during_a_send() -> None:
    # mcp-bash's progress helpers write several lines at once; the tool exits while the first is being sent.
    folder = CallFolder()
    client = SlowClient()
    notifications = Notifications(folder, client, "build")  # type: ignore[arg-type]
    try:
        lines = [progress_line(10, "Preparing"), progress_line(25, "1/4"), progress_line(75, "3/4")]
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(notifications.run)
                fd = os.open(folder.progress_fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.write(fd, b"".join(lines))
                await client.sending.wait()
                os.write(fd, progress_line(100, "Done"))  # written just before the script exits
                os.close(fd)
                tg.cancel_scope.cancel()  # the script is done, as the runner cancels the relay
                client.release.set()
            await notifications.flush()
    finally:
        folder.remove()
    assert client.sent == [(10, "Preparing"), (25, "1/4"), (75, "3/4"), (100, "Done")]


async def test_what_is_left_after_the_relay_stopped_between_lines_is_still_read_once() -> None:
    folder = CallFolder()
    try:
        fd = os.open(folder.progress_fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"one\ntwo\nthr")
        taken: list[bytes] = []
        with anyio.fail_after(10):
            async for line in folder.progress.lines():
                taken.append(line)
                break  # the reader stops after the first line, the second already read off the FIFO
        os.write(fd, b"ee\n")
        os.close(fd)
        assert taken == [b"one"]
        assert folder.progress.rest() == [b"two", b"three"]
        assert folder.progress.rest() == []
    finally:
        folder.remove()
