"""Messages between nodes are signed with the secret: a forged one on the broker is ignored, and logged.

Anyone who can publish on the shared Redis, but has no secret, sees every forwarded request (its header
names the reply channel and the message id) and can answer it first. Every message that travels between
nodes carries a MAC under a key derived from the secret, over its channel, its header and its body; a
message whose MAC is missing or wrong is dropped before anything is done with it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
import redis.asyncio as redis_asyncio
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Accepted, Elicitation
from elicitkit._crypto import Sealer
from elicitkit._engine.cluster import MISSING, Cluster, pack, unpack
from elicitkit.stores import MemoryBroker, MemoryStore
from elicitkit.stores.redis import RedisBroker, RedisStore
from elicitkit.testing import serve_http
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, pending_id, send_answer, text_of
from tests.stores.conftest import unique_prefix

pytestmark = pytest.mark.anyio

SECRET = "broker-auth-secret-0123456789abcdef0123456789"
OTHER_SECRET = "another-secret-0123456789abcdef0123456789abc"
CANARY = "FORGED-CANARY-5T2"
IGNORED = "MAC is missing or wrong"

# What someone without the secret can answer a forwarded request with, given its message id.
FORGERIES: dict[str, Callable[[str], bytes]] = {
    "gone": lambda mid: json.dumps({"id": mid, "gone": True, "note": CANARY}).encode(),
    "ack": lambda mid: json.dumps({"id": mid, "ack": True, "note": CANARY}).encode(),
    # An outcome as a node without a secret would write it: a plain record behind a 0x00 byte.
    "outcome": lambda mid: (
        json.dumps({"id": mid}).encode()
        + b"\n\x00"
        + json.dumps({"result": {"content": [{"type": "text", "text": CANARY}]}}).encode()
    ),
}


@pytest.fixture(params=sorted(FORGERIES))
def forgery(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Scene:
    """Nodes a and b over real HTTP sharing a Redis, and someone on that Redis who forges a reply."""

    urls: dict[str, str] = field(default_factory=dict)
    forged: anyio.Event = field(default_factory=anyio.Event)
    steps: list[str] = field(default_factory=list)


def cluster_node(prefix: str, url: str, name: str, scene: Scene) -> tuple[MCPServer, Elicitation]:
    """A node whose `provision` tool asks, performs one step, asks again and returns.

    The step waits for the forgery to be out, so the owner's real outcome can never overtake it.
    """
    server = MCPServer("broker-auth")  # one server name: the requestState audience
    store, broker = RedisStore(url, prefix=prefix), RedisBroker(url, prefix=prefix)
    hitl = Elicitation(server, store=store, broker=broker, secret=SECRET, node_id=name)

    @server.tool()
    async def provision(vm: str, ctx: Context) -> str:
        go = await hitl.text(ctx, f"Provision {vm}? Say a code word.")
        assert isinstance(go, Accepted)

        async def create_vm() -> str:
            await scene.forged.wait()
            scene.steps.append(f"create-vm {vm} on {name}")
            return f"vm-{vm}"

        made = await hitl.step(ctx, "create-vm", create_vm)
        size = await hitl.choice(ctx, f"Size for {vm}?", ["small", "large"])
        assert isinstance(size, Accepted)
        return f"{vm}: {made} {size.data} (code {go.data}) finished on {name}"

    return server, hitl


async def forge_first_reply(url: str, prefix: str, forgery: str, scene: Scene, *, task_status: Any) -> None:
    """Watch the node channels with a bare Redis connection; answer the first forwarded request with `forgery`."""
    client = redis_asyncio.Redis.from_url(url)
    pubsub = client.pubsub()
    try:
        await pubsub.psubscribe(f"{prefix}*node:*")
        while (await pubsub.get_message(timeout=None) or {}).get("type") != "psubscribe":
            pass
        task_status.started()
        while True:
            message = await pubsub.get_message(timeout=None)
            if message is not None and message["type"] == "pmessage":
                break
        header = json.loads(message["data"].partition(b"\n")[0])
        # The header names the reply channel; the broker puts its prefix in front, as for every channel.
        await client.publish(prefix + header["reply"], FORGERIES[forgery](header["id"]))
        scene.forged.set()
    finally:
        with anyio.CancelScope(shield=True):
            await pubsub.aclose()  # type: ignore[no-untyped-call]
            await client.aclose()


@asynccontextmanager
async def forged_pair(redis_server: RedisServer, forgery: str) -> AsyncIterator[Scene]:
    """Nodes a and b serving over HTTP, with the forger already listening; everything closed on the way out."""
    prefix, scene = unique_prefix(), Scene()
    async with AsyncExitStack() as stack:
        for name in ("a", "b"):
            server, hitl = cluster_node(prefix, redis_server.url, name, scene)
            stack.push_async_callback(hitl.aclose)
            scene.urls[name] = await stack.enter_async_context(serve_http(server))
        tg = await stack.enter_async_context(anyio.create_task_group())
        await tg.start(forge_first_reply, redis_server.url, prefix, forgery, scene)
        yield scene
        tg.cancel_scope.cancel()


def assert_only_the_forgery_was_ignored(caplog: pytest.LogCaptureFixture) -> None:
    ignored = [r for r in caplog.records if IGNORED in r.getMessage()]
    assert len(ignored) == 1, [r.getMessage() for r in ignored]
    assert ignored[0].levelno == logging.WARNING
    assert CANARY not in caplog.text


def assert_provisioned_once(final: CallToolResult | InputRequiredResult, scene: Scene, expected: str) -> None:
    assert isinstance(final, CallToolResult)
    assert not final.is_error, text_of(final)
    assert text_of(final) == expected
    assert scene.steps == ["create-vm web on a"]


async def test_a_forged_reply_to_a_forwarded_retry_is_ignored_and_the_step_runs_once(
    redis_server: RedisServer, forgery: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="elicitkit")
    web = Rounds("provision", {"vm": "web"})
    async with (
        forged_pair(redis_server, forgery) as scene,
        by_hand(scene.urls["a"]) as on_a,
        by_hand(scene.urls["b"]) as on_b,
    ):
        first = await web.start(on_a)
        with anyio.fail_after(10):
            second = await web.answer(on_b, first, "go")  # lands on b; a holds the run, b forwards it
        assert isinstance(second, InputRequiredResult), second
        final = await web.answer(on_b, second, "large")
    assert_provisioned_once(final, scene, "web: vm-web large (code go) finished on a")
    assert_only_the_forgery_was_ignored(caplog)


async def test_a_forged_reply_to_a_forwarded_model_answer_is_ignored_and_the_step_runs_once(
    redis_server: RedisServer, forgery: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="elicitkit")
    async with (
        forged_pair(redis_server, forgery) as scene,
        Client(scene.urls["a"], mode=mode) as on_a,
        Client(scene.urls["b"], mode=mode) as on_b,
    ):
        first = await on_a.call_tool("provision", {"vm": "web"})
        with anyio.fail_after(10):
            second = await send_answer(on_b, pending_id(first), "accept", {"value": "go"})
        assert not second.is_error, text_of(second)
        assert (second.meta or {})["elicitationPending"]["message"] == "Size for web?"
        final = await send_answer(on_b, pending_id(second), "accept", {"value": "small"})
    assert_provisioned_once(final, scene, "web: vm-web small (code go) finished on a")
    assert_only_the_forgery_was_ignored(caplog)


# --- the framing, and one node on an in-memory broker ------------------------------------------------


def test_a_message_packed_for_a_channel_unpacks_there_to_its_header_and_body() -> None:
    sealer = Sealer([SECRET])
    raw = pack(sealer, "elicitkit:node:a", {"id": "m1", "run": "r1", "reply": "elicitkit:reply:m1"}, b"body")
    assert unpack(sealer, "elicitkit:node:a", raw) == (
        {"id": "m1", "run": "r1", "reply": "elicitkit:reply:m1"},
        b"body",
    )


def test_a_message_does_not_unpack_on_another_channel_under_another_secret_or_altered() -> None:
    sealer = Sealer([SECRET])
    raw = pack(sealer, "elicitkit:node:a", {"id": "m1", "run": "r1", "reply": "elicitkit:reply:m1"}, b"body")
    assert unpack(sealer, "elicitkit:node:b", raw) == "forged"
    assert unpack(Sealer([OTHER_SECRET]), "elicitkit:node:a", raw) == "forged"
    head, _, body = raw.partition(b"\n")
    altered = json.loads(head) | {"ack": True}
    assert unpack(sealer, "elicitkit:node:a", json.dumps(altered).encode() + b"\n" + body) == "forged"
    assert unpack(sealer, "elicitkit:node:a", raw + b"x") == "forged"
    unsigned = {k: v for k, v in json.loads(head).items() if k != "mac"}
    assert unpack(sealer, "elicitkit:node:a", json.dumps(unsigned).encode() + b"\n" + body) == "forged"
    assert unpack(sealer, "elicitkit:node:a", json.dumps(unsigned | {"mac": "zz"}).encode() + b"\n" + body) == "forged"
    assert unpack(sealer, "elicitkit:node:a", b"not json\n") == "malformed"
    assert unpack(sealer, "elicitkit:node:a", b"[1]\n") == "malformed"


def test_a_message_signed_before_a_rotation_still_unpacks_after_it() -> None:
    raw = pack(Sealer([SECRET]), "elicitkit:node:a", {"id": "m1", "ack": True}, b"")
    assert unpack(Sealer([OTHER_SECRET, SECRET]), "elicitkit:node:a", raw) == ({"id": "m1", "ack": True}, b"")


class Logged(logging.Handler):
    """Sets `seen` once a record whose message contains `text` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.WARNING)
        self.text = text
        self.seen = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


@asynccontextmanager
async def logged(text: str) -> AsyncIterator[Logged]:
    handler = Logged(text)
    logger = logging.getLogger("elicitkit")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


async def test_a_genuine_request_moved_to_another_nodes_channel_gets_no_reply_there() -> None:
    """Node c holds no such run: answering the moved request would tell its sender the run is gone."""
    store, broker, sealer = MemoryStore(), MemoryBroker(), Sealer([SECRET])
    sender, bystander = Cluster(store, broker, sealer, "b"), Cluster(store, broker, sealer, "c")
    await store.heartbeat("a", time.time() + 60)
    async with anyio.create_task_group() as tg, logged(IGNORED) as log:
        await tg.start(bystander.serve, lambda run_id: MISSING, _never_called)
        async with broker.listen(sender.channel("a")) as on_a:
            tg.start_soon(sender.forward, "a", "run-1", None, {"op": "answers"}, 5.0, 5.0)
            with anyio.fail_after(5):
                request = await anext(aiter(on_a))
        reply = json.loads(request.partition(b"\n")[0])["reply"]
        async with broker.listen(reply) as replies:
            await broker.publish(bystander.channel("c"), request)
            with anyio.fail_after(5):
                await log.seen.wait()
            await broker.publish(reply, b"after the moved request")
            with anyio.fail_after(5):
                first_reply = await anext(aiter(replies))
        tg.cancel_scope.cancel()
    assert first_reply == b"after the moved request"


async def test_with_a_secret_a_request_without_a_mac_is_ignored_and_one_with_it_is_answered() -> None:
    store, broker, sealer = MemoryStore(), MemoryBroker(), Sealer([SECRET])
    owner = Cluster(store, broker, sealer, "a")
    body = sealer.seal(None, json.dumps({"op": "answers"}).encode(), aad=b"m1|run-1|elicitkit:reply:m1")
    header = {"id": "m1", "run": "run-1", "reply": "elicitkit:reply:m1", "t": 2.0}

    async def handle(run_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"result": {"content": [], "structuredContent": payload}}

    async with anyio.create_task_group() as tg, logged(IGNORED) as log:
        await tg.start(owner.serve, lambda run_id: None, handle)
        async with broker.listen("elicitkit:reply:m1") as replies:
            await broker.publish(owner.channel("a"), json.dumps(header).encode() + b"\n" + body)
            with anyio.fail_after(5):
                await log.seen.wait()
            await broker.publish(owner.channel("a"), pack(sealer, owner.channel("a"), header, body))
            with anyio.fail_after(5):
                answered = await anext(aiter(replies))
        tg.cancel_scope.cancel()
    message = unpack(sealer, "elicitkit:reply:m1", answered)
    assert not isinstance(message, str)
    meta, sealed = message
    assert meta == {"id": "m1"}
    outcome = json.loads(sealer.open(None, sealed, aad=b"reply|m1|run-1"))
    assert outcome == {"result": {"content": [], "structuredContent": {"op": "answers"}}}


async def _never_called(run_id: str, payload: dict[str, Any]) -> None:
    raise AssertionError("a node that does not hold the run resumed it")
