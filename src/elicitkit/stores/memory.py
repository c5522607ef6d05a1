"""In-process store and broker: the default, for one process that need not survive a restart.

Everything lives in dicts; expiry is checked on every read and `sweep()` frees
what has expired. The broker delivers to listeners in the same process only.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
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
        self._questions = _Filed()  # by run
        self._once: dict[str, tuple[float, bytes]] = {}  # token: (expires_at, value)
        self._nodes: dict[str, float] = {}
        self._tasks: dict[str, tuple[bytes, float]] = {}
        self._inbox = _Filed()  # by inbox

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
        self._questions.delete_group(run_id)

    async def put_run_with_question(
        self,
        run_id: str,
        owner: str,
        record: bytes,
        expires_at: float,
        question_id: str,
        question: bytes,
        question_expires_at: float,
    ) -> None:
        self._runs[run_id] = (owner, record, expires_at)
        self._questions.put(question_id, run_id, question, question_expires_at)

    async def put_owned_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> str | None:
        run = self._runs.get(run_id)
        if run is not None and run[2] > time.time() and run[0] != owner:
            return run[0]
        self._runs[run_id] = (owner, record, expires_at)
        return None

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
        self._questions.put(question_id, run_id, record, expires_at)

    async def get_question(self, question_id: str) -> tuple[str, bytes] | None:
        return self._questions.live(question_id)

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        return self._questions.group(run_id)

    async def delete_question(self, question_id: str) -> None:
        self._questions.delete(question_id)

    async def use_once(self, token: str, expires_at: float, value: bytes = b"1") -> bool:
        return self._spend(token, expires_at, value)

    async def spent(self, token: str) -> bytes | None:
        once = self._once.get(token)
        if once is None or once[0] <= time.time():
            return None
        return once[1]

    async def take_round(
        self,
        run_id: str,
        token: str,
        expires_at: float,
        entries: Mapping[int, bytes],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        # No await inside: nothing can interleave.
        if not self._spend(token, expires_at, value):
            return None
        written = {seq for seq, entry in entries.items() if self._append(run_id, seq, entry)}
        for question_id in answered:
            self._questions.delete(question_id)
        return written

    async def put_task(self, task_id: str, record: bytes, expires_at: float) -> None:
        self._tasks[task_id] = (record, expires_at)

    async def get_task(self, task_id: str) -> bytes | None:
        task = self._tasks.get(task_id)
        if task is None or task[1] <= time.time():
            return None
        return task[0]

    async def put_inbox_entry(self, inbox: str, entry_id: str, record: bytes, expires_at: float) -> None:
        self._inbox.put(entry_id, inbox, record, expires_at)

    async def inbox_entries(self, inbox: str) -> dict[str, bytes]:
        return self._inbox.group(inbox)

    async def delete_inbox_entry(self, inbox: str, entry_id: str) -> None:
        self._inbox.delete(entry_id, group=inbox)

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
        swept += self._questions.sweep(now) + self._inbox.sweep(now)
        for token in [t for t, (expires_at, _) in self._once.items() if expires_at <= now]:
            del self._once[token]
            swept += 1
        for node in [n for n, expires_at in self._nodes.items() if expires_at <= now]:
            del self._nodes[node]
            swept += 1
        for task_id in [t for t, (_, expires_at) in self._tasks.items() if expires_at <= now]:
            del self._tasks[task_id]
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

    def _spend(self, token: str, expires_at: float, value: bytes) -> bool:
        once = self._once.get(token)
        if once is not None and once[0] > time.time():
            return False
        self._once[token] = (expires_at, value)
        return True


class _Filed(Mapping[str, tuple[str, bytes, float]]):
    """Records filed in groups (questions in their run, entries in their inbox), each with its own expiry.

    Reads as a mapping of record id to (group, record, expiry), expired or not; changes only through its methods.
    """

    def __init__(self) -> None:
        self._records: dict[str, tuple[str, bytes, float]] = {}
        self._groups: dict[str, set[str]] = {}

    def __getitem__(self, record_id: str) -> tuple[str, bytes, float]:
        return self._records[record_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def put(self, record_id: str, group: str, record: bytes, expires_at: float) -> None:
        self.delete(record_id)
        self._records[record_id] = (group, record, expires_at)
        self._groups.setdefault(group, set()).add(record_id)

    def live(self, record_id: str) -> tuple[str, bytes] | None:
        """(group, record) of a live record, or None."""
        found = self._records.get(record_id)
        if found is None or found[2] <= time.time():
            return None
        return found[0], found[1]

    def group(self, group: str) -> dict[str, bytes]:
        now = time.time()
        found: dict[str, bytes] = {}
        for record_id in self._groups.get(group, ()):
            _, record, expires_at = self._records[record_id]
            if expires_at > now:
                found[record_id] = record
        return found

    def delete(self, record_id: str, *, group: str | None = None) -> None:
        """Forget a record; only when it is filed in `group`, if given."""
        found = self._records.get(record_id)
        if found is None or (group is not None and found[0] != group):
            return
        del self._records[record_id]
        siblings = self._groups[found[0]]
        siblings.discard(record_id)
        if not siblings:
            del self._groups[found[0]]

    def delete_group(self, group: str) -> None:
        for record_id in self._groups.pop(group, set()):
            del self._records[record_id]

    def sweep(self, now: float) -> int:
        """Forget the records that expired by `now`; return how many went."""
        expired = [r for r, (_, _, expires_at) in self._records.items() if expires_at <= now]
        for record_id in expired:
            self.delete(record_id)
        return len(expired)


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
