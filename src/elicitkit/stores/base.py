"""The storage and messaging contracts every backend implements.

A `Store` keeps what must survive a restart or be seen by every node: runs
(with their owning node), their journals, pending questions, used one-time
tokens (each with the value it was spent with, so that the same request sent
again can be told from a replay with other content), MCP task records and the
web inbox's entries. Values are opaque bytes — sealed by the engine before they
get here — and only ids and timestamps are stored in the clear. All times are
seconds since the epoch (`time.time()`).

A `Broker` carries messages between nodes: each node listens on its own
channel, and a node that receives an answer for a run it does not hold
publishes it to the owner's channel. A `PresenceBroker` also tells how many
listeners a channel has on any node, and a process that dies takes its
listeners with it at once: nodes use it to tell a crashed node from a slow one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

__all__ = ["Broker", "FencedStore", "PresenceBroker", "RoundStore", "Store"]


@runtime_checkable
class Store(Protocol):
    """Durable state for runs, journals, questions, one-time tokens, tasks and inbox entries."""

    async def put_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> None:
        """Create or replace a run: its owning node id, sealed record and expiry."""
        ...

    async def get_run(self, run_id: str) -> tuple[str, bytes] | None:
        """(owner node id, sealed record) of a live run, or None when unknown or expired."""
        ...

    async def claim_run(self, run_id: str, expected_owner: str, new_owner: str) -> bool:
        """Move ownership from `expected_owner` to `new_owner` atomically; False if the owner was not as expected."""
        ...

    async def delete_run(self, run_id: str) -> None:
        """Forget a run, its journal and its questions (not its task, nor inbox entries)."""
        ...

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        """Record entry `seq` of a run's journal; False (and no change) when `seq` is already recorded."""
        ...

    async def journal(self, run_id: str) -> dict[int, bytes]:
        """Every recorded entry of a run's journal, by sequence number."""
        ...

    async def put_question(self, question_id: str, run_id: str, record: bytes, expires_at: float) -> None:
        """Remember a pending question of a run until `expires_at`."""
        ...

    async def get_question(self, question_id: str) -> tuple[str, bytes] | None:
        """(run id, sealed record) of a live pending question, or None."""
        ...

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        """The live pending questions of a run, by question id."""
        ...

    async def delete_question(self, question_id: str) -> None: ...

    async def use_once(self, token: str, expires_at: float, value: bytes = b"1") -> bool:
        """True the first time `token` is used, which records `value` with it until `expires_at`; False after that
        (and nothing changes)."""
        ...

    async def spent(self, token: str) -> bytes | None:
        """The value `token` was spent with, while it is remembered; None when it was never spent or is forgotten."""
        ...

    async def put_task(self, task_id: str, record: bytes, expires_at: float) -> None:
        """Create or replace a task's record (its status and, at the end, its outcome), kept until `expires_at`."""
        ...

    async def get_task(self, task_id: str) -> bytes | None:
        """The record of a live task, or None when unknown or expired."""
        ...

    async def put_inbox_entry(self, inbox: str, entry_id: str, record: bytes, expires_at: float) -> None:
        """File `entry_id` (an open question shown to one person) in `inbox` until `expires_at` (create or replace)."""
        ...

    async def inbox_entries(self, inbox: str) -> dict[str, bytes]:
        """The live entries of `inbox`, by entry id."""
        ...

    async def delete_inbox_entry(self, inbox: str, entry_id: str) -> None:
        """Take `entry_id` out of `inbox` (nothing happens when it is not there)."""
        ...

    async def heartbeat(self, node: str, expires_at: float) -> None:
        """Declare `node` alive until `expires_at`."""
        ...

    async def is_alive(self, node: str) -> bool:
        """Whether `node`'s last heartbeat has not expired."""
        ...

    async def sweep(self) -> int:
        """Delete everything expired; return how many records went. (Stores with native TTLs may return 0.)"""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class FirstRoundStore(Store, Protocol):
    """A `Store` that records a hosted run together with its first question, in one step: what the first round
    of a 2026-07-28 call (or of the model fallback) costs it.

    Without it, a node writes the question, then the run: two round trips, or two SQLite transactions. Every
    built-in store is one; a custom `Store` need not be.
    """

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
        """`put_run(run_id, owner, record, expires_at)` and `put_question(question_id, run_id, question,
        question_expires_at)` together."""
        ...


@runtime_checkable
class FencedStore(Store, Protocol):
    """A `Store` that renews or forgets a run in one step, and only while the node doing it still owns it.

    Without it, a node reads the run's owner, then writes or deletes: two round trips, and a takeover in
    between would go unnoticed. Every built-in store is one; a custom `Store` need not be.
    """

    async def put_owned_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> str | None:
        """`put_run`, unless another node owns the run now: then nothing changes and the answer is that node's id
        (None: written).

        A run with no live record (never stored, expired) counts as owned: it is written.
        """
        ...

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        """`delete_run`, unless another node owns the run now: then nothing changes and the answer is False.

        A run with no live record (never stored, expired) counts as owned: what is left of it goes.
        """
        ...


@runtime_checkable
class RoundStore(Store, Protocol):
    """A `Store` that takes a round of answers in one step: what a retry, or the model's answer, costs it.

    Without it, a node journals each answer, spends the round's one-time token, and later forgets each
    answered question's record: a round trip each. Every built-in store is one; a custom `Store` need not be.
    """

    async def take_round(
        self,
        run_id: str,
        token: str,
        expires_at: float,
        entries: Mapping[int, bytes],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        """Spend `token` with `value` (as `use_once`) and, only if it was unspent, record `entries` in the run's
        journal (each as `append_journal`: a sequence number already recorded keeps its entry) and forget the
        questions `answered` (as `delete_question`), all at once.

        `token` names its run in braces (`round:{<run_id>}:<claim>`, as the engine's are): a Redis Cluster keeps
        it in the run's slot by that hash tag.

        Returns None, changing nothing, when `token` was already spent; else the sequence numbers newly recorded.
        """
        ...


@runtime_checkable
class Broker(Protocol):
    """Delivers messages between the nodes that share a store."""

    async def publish(self, channel: str, message: bytes) -> int:
        """Send `message` to `channel`; return how many listeners received it (0: nobody is there)."""
        ...

    def listen(self, channel: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """Receive the messages published to `channel` for as long as the context is open.

        Messages published after `__aenter__` returns are delivered; none before.
        """
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class PresenceBroker(Broker, Protocol):
    """A `Broker` that sees every node's listeners, which vanish the moment their process dies.

    A node listens on its own channel for as long as it runs, so a channel without a listener
    means its node has crashed or stopped (or, for a moment, is reconnecting); a frozen node keeps
    its listener. `RedisBroker` is one (a subscription lives as long as its connection).
    """

    async def listeners(self, channel: str) -> int:
        """How many listeners `channel` has right now, across every node."""
        ...
