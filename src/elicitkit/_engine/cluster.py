"""Nodes that share a store: heartbeats, and answers forwarded to the node that holds the run.

A node that receives an answer for a run another node holds publishes it on
the owner's channel and waits for the run's next outcome, which the owner
publishes back on the sender's own channel (the one it listens on for as long
as it runs) once it has resumed the suspended body — nothing runs twice. When
nobody listens, or the owner is gone, the receiver takes the run over and
replays it from its journal. A broker delivers at most once: a reply
published while the sender's listener was reconnecting is lost, so a sender
still waiting when its listener is back sends its message again, and the
owner, which handles each message once, publishes what it replied again
(`messages` has the format and how each message is signed).

A node is alive while its heartbeat is fresh and, where the broker can tell
(`PresenceBroker`: Redis), while its process still listens on its channel: a
crashed node's subscription dies with its connection, so it is known gone
within `ABSENT_FOR` seconds, while a frozen one keeps it and is waited for
until its heartbeat lapses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.abc

from elicitkit._core.kinds import new_id
from elicitkit._crypto import SealerLike
from elicitkit._engine import deadlines
from elicitkit._engine.exchanges import Inbox, Replied, unpacked
from elicitkit._engine.messages import (
    Message,
    Refusal,
    aad,
    decode_outcome,
    encode_outcome,
    ignored,
    pack,
    seconds,
    unpack,
)
from elicitkit._errors import TamperedRecord
from elicitkit.stores.base import Broker, PresenceBroker, Store

__all__ = ["Cluster", "decode_outcome", "encode_outcome", "pack", "unpack"]


logger = logging.getLogger("elicitkit")

ABSENT_FOR = 0.3
"""Seconds a node's channel must stay without a listener before the node counts as gone: long enough
for a listener that is only reconnecting (a Redis blip) to come back, far shorter than a lease."""
_PROBE_EVERY = 0.05
ACK_AFTER = 0.05
"""Seconds an owner lets pass before acknowledging a forwarded message whose outcome is not ready yet: an outcome
that comes sooner acknowledges it (one message fewer each way), and the sender's `forward_timeout` is far longer."""

# (run id, payload) -> the run's next outcome as a wire dict, or None when the run is not held here.
Handler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
PrincipalOf = Callable[[str], "str | Missing | None"]


@dataclass(frozen=True, slots=True)
class _Exchange:
    owner: str
    run_id: str
    principal: str | None
    timeout: float
    wait: float
    check_every: float
    mid: str


class Missing:
    """The run is not held on this node."""


MISSING = Missing()


class Cluster:
    """This node's channel, its heartbeat, and forwarding to other nodes."""

    def __init__(self, store: Store, broker: Broker, sealer: SealerLike, node: str, prefix: str = "elicitkit") -> None:
        self.store = store
        self.broker = broker
        self.sealer = sealer
        self.node = node
        self.prefix = prefix
        # Decided once: a runtime protocol check walks every method, and liveness is asked on hot paths.
        self.presence: PresenceBroker | None = broker if isinstance(broker, PresenceBroker) else None
        self._replied = Replied()
        self._inboxes: dict[str, Inbox] = {}
        """Messages this node forwarded that wait for replies, by message id."""
        self._listening: AsyncIterator[bytes] | None = None
        """This node's channel while `serve` listens on it: replies to its messages come there."""
        self._subscriptions = 0

    def channel(self, node: str) -> str:
        return f"{self.prefix}:node:{node}"

    async def alive(self, node: str) -> bool:
        """Whether `node` is alive: its heartbeat is fresh and, where the broker can tell, it still listens."""
        if not await self.store.is_alive(node):
            return False
        if self.presence is None:
            return True
        gone_at = anyio.current_time() + ABSENT_FOR
        while await self.presence.listeners(self.channel(node)) == 0:
            if anyio.current_time() >= gone_at:
                return False
            await anyio.sleep(_PROBE_EVERY)
        return True

    async def heartbeat(self, lease: float, recheck: Callable[[], Awaitable[None]] | None = None) -> None:
        """Declare this node alive, renewing at a third of the lease, until cancelled; outages are waited out.

        `recheck` is awaited (and tried again at each renewal until it succeeds) when this node's records may no
        longer be as it left them: a renewal came after the last one's lease ran out (this process was frozen,
        or the store was out of reach), so other nodes may have taken runs over; or its heartbeat was gone
        before its lease ran out, so the store lost its data (a Redis restarted without it).
        """
        renewed_until: float | None = None  # when the lease of the last renewal runs out
        recheck_due = False
        while True:
            try:
                now = time.time()
                # Read before the renewal: its own heartbeat gone before its time means the store lost its data.
                forgotten = (
                    renewed_until is not None and now < renewed_until and not await self.store.is_alive(self.node)
                )
                await self.store.heartbeat(self.node, now + lease)
                if renewed_until is not None and now > renewed_until:
                    logger.warning(
                        "Node %s was counted gone for a while (frozen, or cut off); checking its runs", self.node
                    )
                    recheck_due = True
                elif forgotten:
                    logger.warning(
                        "The store forgot node %s before its lease ran out (restarted without its data?); "
                        "checking its runs",
                        self.node,
                    )
                    recheck_due = True
                renewed_until = now + lease
                if recheck_due and recheck is not None:
                    await recheck()
                    recheck_due = False
            except Exception as exc:
                logger.warning("Heartbeat of node %s failed (%s); retrying", self.node, type(exc).__name__)
            await anyio.sleep(lease / 3)

    async def serve(
        self, principal_of: PrincipalOf, handle: Handler, *, task_status: Any = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Answer forwarded messages for runs held here, and route replies to those this node forwarded, until
        cancelled; a lost subscription is renewed."""
        started = False
        backoff = 0.05
        channel = self.channel(self.node)
        while True:
            try:
                async with self.broker.listen(channel) as messages, anyio.create_task_group() as tg:
                    self._listening = messages
                    self._subscriptions += 1  # replies published before it may be lost: senders waiting send again
                    if not started:
                        task_status.started()
                        started = True
                    backoff = 0.05
                    async for raw in messages:
                        message = unpack(self.sealer, channel, raw)
                        if isinstance(message, str):
                            ignored(message, f"a message on {channel}")
                        elif "run" in message[0]:
                            tg.start_soon(self._answer, message, principal_of, handle, tg)
                        else:  # a reply to a message this node forwarded (none waits for a late one)
                            inbox = self._inboxes.get(str(message[0].get("id")))
                            if inbox is not None:
                                inbox.put(message)
            except Exception as exc:
                logger.warning("Node %s lost its channel (%s); subscribing again", self.node, type(exc).__name__)
            finally:
                self._listening = None
            if not started:
                task_status.started()
                started = True
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    def _listener_mark(self) -> tuple[int, int] | None:
        """Which subscription of this node's channel is up (None: none is): a sender whose mark changed while it
        waited may have missed its reply."""
        if self._listening is None:
            return None
        return self._subscriptions, getattr(self._listening, "resubscriptions", 0)

    async def _answer(
        self, message: Message, principal_of: PrincipalOf, handle: Handler, tg: anyio.abc.TaskGroup
    ) -> None:
        try:
            await self._answer_one(message, principal_of, handle, tg)
        except Exception as exc:
            logger.warning("Answering a forwarded message failed (%s)", type(exc).__name__)

    async def _answer_one(
        self, message: Message, principal_of: PrincipalOf, handle: Handler, tg: anyio.abc.TaskGroup
    ) -> None:
        header, body = message
        try:
            mid, run_id, reply = str(header["id"]), str(header["run"]), str(header["reply"])
        except KeyError:
            ignored("malformed", f"a message on {self.channel(self.node)}")
            return
        if self._replied.handled(mid):
            # Sent again: its sender's listener lost what this node replied. It hears it again (or, while the run
            # works on, that the message is here); the message itself is handled once.
            again = self._replied.reply(mid) or pack(self.sealer, reply, {"id": mid, "ack": True})
            await self._publish_quietly(reply, again)
            return
        principal = principal_of(run_id)
        if isinstance(principal, Missing):
            gone = pack(self.sealer, reply, {"id": mid, "gone": True})
            self._replied.finish(mid, gone)
            await self.broker.publish(reply, gone)
            return
        try:
            payload = json.loads(self.sealer.open(principal, body, aad=aad(mid, run_id, reply)).decode())
        except (TamperedRecord, ValueError):
            logger.warning("Dropped a message for run %s that failed authentication", run_id)
            return
        self._replied.start(mid)  # (before the first await: a copy of it arriving meanwhile finds it handled)
        answer: bytes | None = None
        try:
            # Acknowledge, alongside the resume, unless the outcome is ready first: the sender's timeout covers "is
            # the owner there", not how long the body works. (A sender that says nothing of its timeout is acked at
            # once.)
            ack = pack(self.sealer, reply, {"id": mid, "ack": True})
            after = min(ACK_AFTER, seconds(header.get("t")) / 4)
            outcome = await self._handled(partial(handle, run_id, payload), reply, ack, after, tg)
            if outcome is None:
                answer = pack(self.sealer, reply, {"id": mid, "gone": True})
            else:
                sealed = self.sealer.seal(principal, json.dumps(outcome).encode(), aad=aad("reply", mid, run_id))
                answer = pack(self.sealer, reply, {"id": mid}, sealed)
        finally:
            self._replied.finish(mid, answer)
        await self.broker.publish(reply, answer)

    async def _handled(
        self,
        handling: Callable[[], Awaitable[dict[str, Any] | None]],
        reply: str,
        ack: bytes,
        after: float,
        tg: anyio.abc.TaskGroup,
    ) -> dict[str, Any] | None:
        """The outcome of `handling()`, with the acknowledgement published `after` seconds into it if still working."""
        if after <= 0:
            await self._publish_quietly(reply, ack)
            return await handling()
        if deadlines.here() is not None:  # on asyncio: a loop timer, and a task only when it fires (rarely)
            timer = asyncio.get_running_loop().call_later(after, tg.start_soon, self._publish_quietly, reply, ack)
            try:
                return await handling()
            finally:
                timer.cancel()
        done = anyio.Event()
        outcome: dict[str, Any] | None = None
        async with anyio.create_task_group() as acks:
            acks.start_soon(self._acknowledge, reply, ack, done, after)
            try:
                outcome = await handling()
            finally:
                done.set()
        return outcome

    async def _acknowledge(self, reply: str, ack: bytes, done: anyio.Event, after: float) -> None:
        with anyio.move_on_after(after):
            await done.wait()
            return  # the outcome follows at once: it acknowledges the message itself
        await self._publish_quietly(reply, ack)

    async def _publish_quietly(self, channel: str, message: bytes) -> None:
        try:
            await self.broker.publish(channel, message)
        except Exception as exc:
            logger.warning("Publishing to %s failed (%s)", channel, type(exc).__name__)

    async def _publish_to(self, owner: str, message: bytes, timeout: float) -> bool:
        """Publish to a live owner; a moment with no listener (its broker reconnecting) is retried until `timeout`."""
        channel = self.channel(owner)
        if await self.broker.publish(channel, message) > 0:
            return True  # (as nearly always: no timeout to set)
        delay = 0.01
        with anyio.move_on_after(timeout):
            while await self.alive(owner):
                await anyio.sleep(delay)
                if await self.broker.publish(channel, message) > 0:
                    return True
                delay = min(delay * 2, 0.2)
        return False

    async def forward(
        self,
        owner: str,
        run_id: str,
        principal: str | None,
        payload: dict[str, Any],
        timeout: float,
        wait: float,
        check_every: float = 1.0,
    ) -> dict[str, Any] | None:
        """Send `payload` to the owner of `run_id` and return the run's next outcome.

        None — and the caller takes the run over — when nobody listens, the owner does not
        hold the run, or the owner stops being alive: a slow owner whose heartbeat is fresh
        (and, with a `PresenceBroker`, who still listens) is waited for past `timeout`, never
        raced, so no body runs on two nodes. A broker that sees presence is asked every
        `ABSENT_FOR`, so a crash is noticed at once; otherwise liveness is checked every
        `check_every` seconds. The outcome is awaited for up to `wait` seconds (the run's
        own expiry) in all.
        """
        if self.presence is not None:
            check_every = min(check_every, ABSENT_FOR)
        mid = new_id()
        exchange = _Exchange(owner, run_id, principal, timeout, wait, check_every, mid)
        if self._listening is not None:
            # Replies come on this node's own channel, routed here by its listener.
            inbox = self._inboxes[mid] = Inbox()
            try:
                return await self._exchange(exchange, payload, self.channel(self.node), inbox)
            finally:
                del self._inboxes[mid]
        # Not serving (no listener of its own): a reply channel for this message, subscribed before publishing.
        reply = f"{self.prefix}:reply:{mid}"
        async with self.broker.listen(reply) as replies:
            return await self._exchange(exchange, payload, reply, unpacked(self.sealer, reply, replies))

    async def _exchange(
        self, ex: _Exchange, payload: dict[str, Any], reply: str, replies: AsyncIterator[Message | Refusal]
    ) -> dict[str, Any] | None:
        header = {"id": ex.mid, "run": ex.run_id, "reply": reply, "t": ex.timeout}
        body = self.sealer.seal(ex.principal, json.dumps(payload).encode(), aad=aad(ex.mid, ex.run_id, reply))
        request = pack(self.sealer, self.channel(ex.owner), header, body)
        shared = isinstance(replies, Inbox)
        mark = self._listener_mark() if shared else None
        if not await self._publish_to(ex.owner, request, ex.timeout):
            return None
        incoming = aiter(replies)
        started = anyio.current_time()
        acked = False
        while anyio.current_time() - started < ex.wait:
            message: Message | Refusal | None = None
            # On the loop's one deadline timer: most replies come long before it, and then nothing was armed.
            scope, entry = deadlines.bounded(deadlines.now() + min(ex.check_every, ex.timeout))
            try:
                with scope:
                    message = await anext(incoming)
            except StopAsyncIteration:
                return None
            finally:
                deadlines.discard(entry)
            if message is None:
                if shared and self._listener_mark() not in (mark, None):
                    # This node's listener came back after losing its subscription: what the owner replied
                    # meanwhile is lost. The owner handles the message once and says its reply again.
                    mark = self._listener_mark()
                    await self._publish_quietly(self.channel(ex.owner), request)
                overdue = acked or self.presence is not None or anyio.current_time() - started >= ex.timeout
                if overdue and not await self.alive(ex.owner):
                    logger.warning("Node %s went away holding run %s; taking the run over", ex.owner, ex.run_id)
                    return None
                continue
            if isinstance(message, str):
                ignored(message, f"a reply for run {ex.run_id}")
                continue
            meta, sealed = message
            if meta.get("gone"):
                return None
            if meta.get("ack"):
                acked = True
                continue
            try:
                outcome: dict[str, Any] = json.loads(
                    self.sealer.open(ex.principal, sealed, aad=aad("reply", ex.mid, ex.run_id)).decode()
                )
            except TamperedRecord:
                logger.warning("Dropped a reply for run %s that failed authentication", ex.run_id)
                continue
            return outcome
        return None
