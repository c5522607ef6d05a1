"""Nodes that share a store: heartbeats, and answers forwarded to the node that holds the run.

A node that receives an answer for a run another node holds publishes it on
the owner's channel and waits, on a reply channel of its own, for the run's
next outcome. The owner resumes the suspended body — nothing runs twice — and
publishes the outcome back. When nobody listens, or no reply comes in time,
the receiver takes the run over and replays it from its journal.

A node is alive while its heartbeat is fresh and, where the broker can tell
(`PresenceBroker`: Redis), while its process still listens on its channel: a
crashed node's subscription dies with its connection, so it is known gone
within `ABSENT_FOR` seconds, while a frozen one keeps it and is waited for
until its heartbeat lapses.

Message: a JSON header line (`id`, `run`, `reply`), then the body sealed under
the run's principal with the message id as associated data. Outcomes travel
back the same way; an acknowledgement (`ack`) or a "not held here" (`gone`)
is a header alone.

Every message, each way, is signed: its header carries `mac`, an HMAC-SHA256
under a key derived from the secret, over the channel it is published on, the
header without `mac`, and the body. Anyone who can publish on the broker but
has no secret can neither forge a message nor move one to another channel; a
message whose MAC is missing or wrong is ignored and logged, and nothing is
done with it. Without a secret there is no key: messages travel
unauthenticated, as a shared store without a secret warns at start-up.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp.server.context import HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from pydantic import BaseModel

from elicitkit._core.kinds import new_id
from elicitkit._crypto import SealerLike
from elicitkit._errors import TamperedRecord
from elicitkit.stores.base import Broker, PresenceBroker, Store

__all__ = ["Cluster", "decode_outcome", "encode_outcome", "pack", "unpack"]


def _seconds(value: Any) -> float:
    """A header's number of seconds; 0 when absent or not a finite, positive number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        return 0.0
    return float(value)


def _aad(*parts: str) -> bytes:
    """Associated data binding a sealed body to its message id, run and reply channel."""
    return "|".join(parts).encode()


logger = logging.getLogger("elicitkit")

Refusal = Literal["malformed", "forged"]
_REFUSED: dict[Refusal, str] = {
    "malformed": "Ignored %s: malformed",
    "forged": "Ignored %s: its MAC is missing or wrong (forged, moved from another channel, or signed with a "
    "secret this node does not have)",
}


def _signed_part(channel: str, header: dict[str, Any], body: bytes) -> bytes:
    """What a MAC covers: the channel, the header (canonical JSON, without `mac`) and the body, each
    length-prefixed so that no part can pass for another."""
    parts = (channel.encode(), json.dumps(header, sort_keys=True, separators=(",", ":")).encode(), body)
    return b"".join(len(part).to_bytes(8, "big") + part for part in parts)


def pack(sealer: SealerLike, channel: str, header: dict[str, Any], body: bytes = b"") -> bytes:
    """A message for `channel`: its header line, signed for that channel (no `mac` without a secret), then `body`."""
    tag = sealer.sign(_signed_part(channel, header, body))
    line = json.dumps({**header, "mac": tag.hex()} if tag else header).encode()
    return line + b"\n" + body if body else line


def unpack(sealer: SealerLike, channel: str, raw: bytes) -> tuple[dict[str, Any], bytes] | Refusal:
    """A message read on `channel` as its header (without `mac`) and body, or why it must be ignored."""
    head, _, body = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        return "malformed"
    if not isinstance(header, dict):
        return "malformed"
    mac = header.pop("mac", "")
    try:
        tag = bytes.fromhex(mac) if isinstance(mac, str) else None
    except ValueError:
        tag = None
    if tag is None or not sealer.verify(_signed_part(channel, header, body), tag):
        return "forged"
    return header, body


def _ignored(refusal: Refusal, what: str) -> None:
    # Names the channel or run only: what the message says is the sender's, and may be anyone's.
    logger.warning(_REFUSED[refusal], what)


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


def encode_outcome(result: HandlerResult | None = None, error: BaseException | None = None) -> dict[str, Any]:
    if error is not None:
        if isinstance(error, MCPError):
            return {"error": error.error.model_dump(mode="json", exclude_none=True)}
        logger.error("A forwarded run failed", exc_info=error)
        return {"error": {"code": INTERNAL_ERROR, "message": "Internal error"}}
    if isinstance(result, BaseModel):
        return {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
    return {"result": result}


def decode_outcome(outcome: dict[str, Any]) -> HandlerResult:
    """The outcome as the receiving node returns it to its client; an error is raised."""
    if "error" in outcome:
        error = outcome["error"]
        raise MCPError(code=error["code"], message=error["message"], data=error.get("data"))
    result: HandlerResult = outcome["result"]
    return result


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
        self._seen: OrderedDict[str, float] = OrderedDict()

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
        """Answer forwarded messages for runs held here, until cancelled; a lost subscription is renewed."""
        started = False
        backoff = 0.05
        while True:
            try:
                async with self.broker.listen(self.channel(self.node)) as messages, anyio.create_task_group() as tg:
                    if not started:
                        task_status.started()
                        started = True
                    backoff = 0.05
                    async for raw in messages:
                        tg.start_soon(self._answer, raw, principal_of, handle)
            except Exception as exc:
                logger.warning("Node %s lost its channel (%s); subscribing again", self.node, type(exc).__name__)
            if not started:
                task_status.started()
                started = True
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    async def _answer(self, raw: bytes, principal_of: PrincipalOf, handle: Handler) -> None:
        try:
            await self._answer_one(raw, principal_of, handle)
        except Exception as exc:
            logger.warning("Answering a forwarded message failed (%s)", type(exc).__name__)

    async def _answer_one(self, raw: bytes, principal_of: PrincipalOf, handle: Handler) -> None:
        channel = self.channel(self.node)
        message = unpack(self.sealer, channel, raw)
        if isinstance(message, str):
            _ignored(message, f"a message on {channel}")
            return
        header, body = message
        try:
            mid, run_id, reply = str(header["id"]), str(header["run"]), str(header["reply"])
        except KeyError:
            _ignored("malformed", f"a message on {channel}")
            return
        if mid in self._seen:  # one listener per lifespan entry: handle each message once
            return
        self._seen[mid] = time.monotonic()
        while len(self._seen) > 10_000:
            self._seen.popitem(last=False)
        principal = principal_of(run_id)
        if isinstance(principal, Missing):
            await self.broker.publish(reply, pack(self.sealer, reply, {"id": mid, "gone": True}))
            return
        try:
            payload = json.loads(self.sealer.open(principal, body, aad=_aad(mid, run_id, reply)))
        except (TamperedRecord, ValueError):
            logger.warning("Dropped a message for run %s that failed authentication", run_id)
            return
        # Acknowledge, alongside the resume, unless the outcome is ready first: the sender's timeout covers "is
        # the owner there", not how long the body works. (A sender that says nothing of its timeout is acked at once.)
        ack = pack(self.sealer, reply, {"id": mid, "ack": True})
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._acknowledge, reply, ack, done, min(ACK_AFTER, _seconds(header.get("t")) / 4))
            try:
                outcome = await handle(run_id, payload)
            finally:
                done.set()
        if outcome is None:
            await self.broker.publish(reply, pack(self.sealer, reply, {"id": mid, "gone": True}))
            return
        sealed = self.sealer.seal(principal, json.dumps(outcome).encode(), aad=_aad("reply", mid, run_id))
        await self.broker.publish(reply, pack(self.sealer, reply, {"id": mid}, sealed))

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
        delay = 0.01
        with anyio.move_on_after(timeout):
            while True:
                if await self.broker.publish(self.channel(owner), message) > 0:
                    return True
                if not await self.alive(owner):
                    return False
                await anyio.sleep(delay)
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
        # A reply channel of its own, subscribed before publishing: a long-lived shared one would
        # silently miss replies while it reconnects (after a Redis restart, say), and the owner,
        # alive, would then be waited for in vain.
        reply = f"{self.prefix}:reply:{mid}"
        async with self.broker.listen(reply) as replies:
            return await self._exchange(exchange, payload, reply, replies)

    async def _exchange(
        self, ex: _Exchange, payload: dict[str, Any], reply: str, replies: AsyncIterator[bytes]
    ) -> dict[str, Any] | None:
        header = {"id": ex.mid, "run": ex.run_id, "reply": reply, "t": ex.timeout}
        body = self.sealer.seal(ex.principal, json.dumps(payload).encode(), aad=_aad(ex.mid, ex.run_id, reply))
        if not await self._publish_to(ex.owner, pack(self.sealer, self.channel(ex.owner), header, body), ex.timeout):
            return None
        incoming = aiter(replies)
        started = anyio.current_time()
        acked = False
        while anyio.current_time() - started < ex.wait:
            raw: bytes | None = None
            with anyio.move_on_after(min(ex.check_every, ex.timeout)):
                try:
                    raw = await anext(incoming)
                except StopAsyncIteration:
                    return None
            if raw is None:
                overdue = acked or self.presence is not None or anyio.current_time() - started >= ex.timeout
                if overdue and not await self.alive(ex.owner):
                    logger.warning("Node %s went away holding run %s; taking the run over", ex.owner, ex.run_id)
                    return None
                continue
            message = unpack(self.sealer, reply, raw)
            if isinstance(message, str):
                _ignored(message, f"a reply for run {ex.run_id}")
                continue
            meta, sealed = message
            if meta.get("gone"):
                return None
            if meta.get("ack"):
                acked = True
                continue
            try:
                outcome: dict[str, Any] = json.loads(
                    self.sealer.open(ex.principal, sealed, aad=_aad("reply", ex.mid, ex.run_id))
                )
            except TamperedRecord:
                logger.warning("Dropped a reply for run %s that failed authentication", ex.run_id)
                continue
            return outcome
        return None
