"""A channel that keeps what it is asked to post, for engine-level tests of the channel route and the desk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
from starlette.routing import Route

from elicitkit.channels.base import Closing, Desk, Prompt


class RecordingChannel:
    def __init__(self, name: str = "desk") -> None:
        self.name = name
        self.desk: Desk | None = None
        self.posted: list[Prompt] = []
        self.closed: list[tuple[Prompt, dict[str, Any], Closing]] = []
        self._changed = anyio.Event()

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        self.desk = desk

    def routes(self) -> Sequence[Route]:
        return ()

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        self.posted.append(prompt)
        self._changed.set()
        return {"n": len(self.posted)}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        self.closed.append((prompt, ref, closing))
        self._changed.set()

    async def next_post(self, count: int, within: float = 5) -> Prompt:
        """Wait until `count` questions have been posted; the last one."""
        with anyio.fail_after(within):
            while len(self.posted) < count:
                self._changed = anyio.Event()
                await self._changed.wait()
        return self.posted[count - 1]

    async def closings(self, count: int, within: float = 5) -> list[Closing]:
        with anyio.fail_after(within):
            while len(self.closed) < count:
                self._changed = anyio.Event()
                await self._changed.wait()
        return [c for _, _, c in self.closed]
