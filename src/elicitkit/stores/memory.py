"""In-process store and broker: the default, for one process that need not survive a restart.

Everything lives in dicts; expiry is checked on every read and `sweep()` frees
what has expired. The broker delivers to listeners in the same process only.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["MemoryBroker", "MemoryStore"]


class MemoryStore:
    """A `Store` held in this process's memory; everything is lost when the process ends.

    A run's journal lives as long as the run: `delete_run` removes it, and `sweep`
    removes the journal of a run that has expired or was never stored.
    """

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, bytes, float]] = {}
        self._journals: dict[str, dict[int, bytes]] = {}
        self._questions: dict[str, tuple[str, bytes, float]] = {}
        self._questions_by_run: dict[str, set[str]] = {}
        self._once: dict[str, float] = {}
        self._nodes: dict[str, float] = {}

    async def put_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> None:
        self._runs[run_id] = (owner, record, expires_at)

    async def get_run(self, run_id: str) -> tuple[str, bytes] | None:
        run = self._runs.get(run_id)
        if run is None or run[2] <= time.time():
            return None
        return run[0], run[1]

    async def claim_run(self, run_id: str, expected_owner: str, new_owner: str) -> bool:
        # No await between the check and the write: nothing can interleave.
        run = self._runs.get(run_id)
        if run is None or run[2] <= time.time() or run[0] != expected_owner:
            return False
        self._runs[run_id] = (new_owner, run[1], run[2])
        return True

    async def delete_run(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        self._journals.pop(run_id, None)
        for question_id in self._questions_by_run.pop(run_id, set()):
            self._questions.pop(question_id, None)

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        run = self._runs.get(run_id)
        if run is not None and run[2] > time.time() and run[0] != owner:
            return False
        await self.delete_run(run_id)
        return True

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        return self._append(run_id, seq, entry)

    async def journal(self, run_id: str) -> dict[int, bytes]:
        return dict(self._journals.get(run_id, {}))

    async def put_question(self, question_id: str, run_id: str, record: bytes, expires_at: float) -> None:
        self._unindex_question(question_id)
        self._questions[question_id] = (run_id, record, expires_at)
        self._questions_by_run.setdefault(run_id, set()).add(question_id)

    async def get_question(self, question_id: str) -> tuple[str, bytes] | None:
        question = self._questions.get(question_id)
        if question is None or question[2] <= time.time():
            return None
        return question[0], question[1]

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        now = time.time()
        found: dict[str, bytes] = {}
        for question_id in self._questions_by_run.get(run_id, ()):
            _, record, expires_at = self._questions[question_id]
            if expires_at > now:
                found[question_id] = record
        return found

    async def delete_question(self, question_id: str) -> None:
        self._forget_question(question_id)

    async def use_once(self, token: str, expires_at: float) -> bool:
        return self._spend(token, expires_at)

    async def take_round(
        self, run_id: str, token: str, expires_at: float, entries: Mapping[int, bytes], answered: Sequence[str]
    ) -> set[int] | None:
        # No await inside: nothing can interleave.
        if not self._spend(token, expires_at):
            return None
        written = {seq for seq, entry in entries.items() if self._append(run_id, seq, entry)}
        for question_id in answered:
            self._forget_question(question_id)
        return written

    async def heartbeat(self, node: str, expires_at: float) -> None:
        self._nodes[node] = expires_at

    async def is_alive(self, node: str) -> bool:
        return self._nodes.get(node, -math.inf) > time.time()

    async def sweep(self) -> int:
        now = time.time()
        swept = 0
        for run_id in [r for r, (_, _, expires_at) in self._runs.items() if expires_at <= now]:
            del self._runs[run_id]
            swept += 1
        for run_id in [r for r in self._journals if r not in self._runs]:
            swept += len(self._journals.pop(run_id))
        for question_id in [q for q, (_, _, expires_at) in self._questions.items() if expires_at <= now]:
            self._unindex_question(question_id)
            del self._questions[question_id]
            swept += 1
        for table in (self._once, self._nodes):
            for key in [k for k, expires_at in table.items() if expires_at <= now]:
                del table[key]
                swept += 1
        return swept

    async def aclose(self) -> None:
        pass

    def _append(self, run_id: str, seq: int, entry: bytes) -> bool:
        journal = self._journals.setdefault(run_id, {})
        if seq in journal:
            return False
        journal[seq] = entry
        return True

    def _spend(self, token: str, expires_at: float) -> bool:
        remembered_until = self._once.get(token)
        if remembered_until is not None and remembered_until > time.time():
            return False
        self._once[token] = expires_at
        return True

    def _forget_question(self, question_id: str) -> None:
        self._unindex_question(question_id)
        self._questions.pop(question_id, None)

    def _unindex_question(self, question_id: str) -> None:
        question = self._questions.get(question_id)
        if question is None:
            return
        siblings = self._questions_by_run.get(question[0])
        if siblings is not None:
            siblings.discard(question_id)
            if not siblings:
                del self._questions_by_run[question[0]]


class MemoryBroker:
    """A `Broker` between tasks of this process: each listener gets its own unbounded queue.

    `aclose()` ends every open listener's iteration.
    """

    def __init__(self) -> None:
        self._listeners: dict[str, set[MemoryObjectSendStream[bytes]]] = {}

    async def publish(self, channel: str, message: bytes) -> int:
        received = 0
        for send in list(self._listeners.get(channel, ())):
            try:
                send.send_nowait(message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                continue
            received += 1
        return received

    @asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        # Unbounded, so a publisher never waits on a slow listener (Redis pub/sub does not either).
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        listeners = self._listeners.setdefault(channel, set())
        listeners.add(send)
        try:
            with receive:
                yield _Messages(receive)
        finally:
            send.close()
            listeners.discard(send)
            if not listeners and self._listeners.get(channel) is listeners:
                del self._listeners[channel]

    async def aclose(self) -> None:
        for listeners in self._listeners.values():
            for send in listeners:
                send.close()
        self._listeners.clear()


class _Messages:
    """The messages of one listener; iteration ends when the broker closes."""

    def __init__(self, receive: MemoryObjectReceiveStream[bytes]) -> None:
        self._receive = receive

    def __aiter__(self) -> _Messages:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
