"""Forwarding an answer to the node that holds its run: what travels back on the reply channel.

The owner acknowledges a forwarded message only when the run's outcome is not ready soon: a quick outcome
acknowledges it by itself, one message fewer each way. A slow one is acknowledged, so the sender keeps
waiting for a live owner past its timeout instead of taking the run over.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from elicitkit._crypto import PlainSealer
from elicitkit._engine import exchanges
from elicitkit._engine.cluster import Cluster
from elicitkit.stores import MemoryBroker, MemoryStore

pytestmark = pytest.mark.anyio

OUTCOME = {"result": {"content": [], "structuredContent": {"result": "done"}}}


class Tapped(MemoryBroker):
    """A broker that remembers what went to reply channels, in order, and signals each message."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[dict[str, Any]] = []
        self.replied = anyio.Event()

    async def publish(self, channel: str, message: bytes) -> int:
        if ":reply:" in channel:
            self.replies.append(json.loads(message.partition(b"\n")[0]))
            self.replied.set()
            self.replied = anyio.Event()
        return await super().publish(channel, message)


async def forward_with(handle: Any, *, timeout: float = 2.0) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Forward one message from node-b to node-a, whose `handle` produces the outcome."""
    store, broker = MemoryStore(), Tapped()
    owner, sender = Cluster(store, broker, PlainSealer(), "node-a"), Cluster(store, broker, PlainSealer(), "node-b")
    await store.heartbeat("node-a", time.time() + 60)

    async def bound(run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        return await handle(broker)

    async with anyio.create_task_group() as tg:
        await tg.start(owner.serve, lambda run_id: None, bound)
        with anyio.fail_after(5):
            outcome = await sender.forward("node-a", "run-1", None, {"op": "answers"}, timeout, 600.0)
        tg.cancel_scope.cancel()
    return outcome, [{k: v for k, v in reply.items() if k != "id"} for reply in broker.replies]


async def test_an_outcome_ready_at_once_is_the_only_reply() -> None:
    async def quick(broker: Tapped) -> dict[str, Any]:
        return OUTCOME

    outcome, replies = await forward_with(quick)
    assert outcome == OUTCOME
    assert replies == [{}]  # the outcome alone: no separate acknowledgement


async def test_a_slow_outcome_is_acknowledged_first() -> None:
    async def slow(broker: Tapped) -> dict[str, Any]:
        await broker.replied.wait()  # the body works on until the owner has acknowledged
        return OUTCOME

    outcome, replies = await forward_with(slow)
    assert outcome == OUTCOME
    assert replies == [{"ack": True}, {}]


async def test_a_run_the_owner_no_longer_holds_is_reported_gone_without_an_acknowledgement() -> None:
    async def gone(broker: Tapped) -> None:
        return None

    outcome, replies = await forward_with(gone)
    assert outcome is None
    assert replies == [{"gone": True}]


async def test_a_sender_that_gives_no_timeout_is_acknowledged_at_once() -> None:
    """A node of an older release says nothing of its timeout: it still gets its acknowledgement first."""
    store, broker = MemoryStore(), Tapped()
    owner = Cluster(store, broker, PlainSealer(), "node-a")
    acknowledged = anyio.Event()

    async def handle(run_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        await acknowledged.wait()
        return OUTCOME

    async with anyio.create_task_group() as tg:
        await tg.start(owner.serve, lambda run_id: None, handle)
        async with broker.listen("elicitkit:reply:m1") as replies:
            header = json.dumps({"id": "m1", "run": "run-1", "reply": "elicitkit:reply:m1"}).encode()
            body = PlainSealer().seal(None, json.dumps({"op": "answers"}).encode())
            assert await broker.publish(owner.channel("node-a"), header + b"\n" + body) == 1
            with anyio.fail_after(5):
                first = await anext(aiter(replies))
                acknowledged.set()
                second = await anext(aiter(replies))
        tg.cancel_scope.cancel()
    assert json.loads(first) == {"id": "m1", "ack": True}
    assert json.loads(second.partition(b"\n")[0]) == {"id": "m1"}


class Reconnecting(MemoryBroker):
    """Loses the first reply published to node-b's channel, as a Redis listener that was reconnecting would, and
    then reports its subscription back (`resubscriptions`, as `RedisBroker`'s listener does)."""

    def __init__(self) -> None:
        super().__init__()
        self.lost: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.listener: Any = None

    @asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        async with super().listen(channel) as messages:
            if channel.endswith(":node:node-b"):
                messages.resubscriptions = 0  # type: ignore[attr-defined]
                self.listener = messages
            yield messages

    async def publish(self, channel: str, message: bytes) -> int:
        header = json.loads(message.partition(b"\n")[0])
        if channel.endswith(":node:node-a"):
            self.requests.append(header)
        elif channel.endswith(":node:node-b") and not self.lost:
            self.lost.append(header)
            self.listener.resubscriptions += 1
            return 1  # it reached the subscription, which dropped it
        return await super().publish(channel, message)


async def test_a_reply_lost_while_the_senders_listener_reconnected_is_heard_when_it_sends_again() -> None:
    store, broker = MemoryStore(), Reconnecting()
    owner, sender = Cluster(store, broker, PlainSealer(), "node-a"), Cluster(store, broker, PlainSealer(), "node-b")
    await store.heartbeat("node-a", time.time() + 60)
    handled: list[dict[str, Any]] = []

    async def handle(run_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        handled.append(payload)
        return OUTCOME

    async with anyio.create_task_group() as tg:
        await tg.start(owner.serve, lambda run_id: None, handle)
        await tg.start(sender.serve, lambda run_id: None, handle)
        with anyio.fail_after(5):
            outcome = await sender.forward("node-a", "run-1", None, {"op": "answers"}, 2.0, 600.0, check_every=0.05)
        tg.cancel_scope.cancel()
    assert outcome == OUTCOME
    assert handled == [{"op": "answers"}]  # handled once: the owner said its reply again
    [lost] = broker.lost
    first, again = broker.requests
    assert first == again and lost["id"] == first["id"]
    assert first["reply"] == sender.channel("node-b")  # a node that serves hears replies on its own channel


def test_an_owner_keeps_its_replies_for_a_while_within_a_weight_and_knows_what_it_is_still_handling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(exchanges.time, "monotonic", lambda: clock[0])
    replied = exchanges.Replied()
    replied.start("slow")  # still being handled, however long
    big = b"x" * (exchanges.KEPT_BYTES // 4)
    for i in range(6):
        replied.start(f"m{i}")
        replied.finish(f"m{i}", big)
    assert replied.handled("slow") and replied.reply("slow") is None
    assert not replied.handled("m0") and not replied.handled("m1")  # the oldest replies went first
    assert [replied.reply(f"m{i}") for i in range(2, 6)] == [big] * 4
    clock[0] += exchanges.KEEP_REPLIES_FOR + 1
    replied.finish("slow", b"done at last")
    assert replied.reply("slow") == b"done at last"
    assert not any(replied.handled(f"m{i}") for i in range(2, 6))
    replied.start("failed")
    replied.finish("failed", None)  # nothing was replied: sent again, it is handled again
    assert not replied.handled("failed")
    replied.finish("huge", b"x" * (exchanges.KEPT_BYTES + 1))
    assert replied.reply("huge") is None and replied.reply("slow") is None  # too heavy to keep; it pushed all out
