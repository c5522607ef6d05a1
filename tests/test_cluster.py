"""Real processes: two server nodes over streamable HTTP sharing a real Redis (or a real Redis Cluster), and
SQLite restarts.

(a) a 2026-07-28 retry and a sendElicitationResult call that land on the other node reach the owner;
(b) the owner is SIGKILLed mid-run and the other node replays and completes, the step having run once;
(c) Redis restarts while runs wait: recovery, never a silent loss;
(d) with a secret, no answer's plaintext is in Redis or the SQLite file;
(e) SIGKILL and restart on SQLite completes the waiting run;
(f) with elicitkit's default timings, a killed owner is taken over within a second (its subscription
    died with it), and a frozen one that still listens is waited for.

(a)'s retry and (f)'s takeover run on a standalone Redis and on a Redis Cluster; tests/test_redis_cluster.py
fails a cluster's shard over under a waiting run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, InputRequiredResult

from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, pending_id, reached, send_answer, text_of

pytestmark = pytest.mark.anyio

APP = Path(__file__).with_name("node_app.py")
SECRET = "cluster-test-secret-0123456789abcdef0123456789"
CODE_WORD = "PLAINTEXT-CANARY-7Q4"


class Node:
    """One server process."""

    def __init__(
        self, store: str, name: str, effects: Path, secret: str | None = SECRET, *, defaults: bool = False
    ) -> None:
        self.args = [sys.executable, str(APP), "--store", store, "--node", name, "--effects", str(effects)]
        if secret:
            self.args += ["--secret", secret]
        if not defaults:  # short timings, so that the tests that wait them out are quick
            self.args += ["--lease", "3", "--forward-timeout", "1"]
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(APP.parents[1] / "src")}
        # Popen returns at once; the wait for readiness below is on a worker thread.
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True, env=env)  # noqa: ASYNC220
        assert self.process.stdout is not None
        stdout = self.process.stdout
        with anyio.fail_after(20):
            line = await anyio.to_thread.run_sync(stdout.readline)
        assert line.startswith("READY "), f"node did not start: {line!r}"
        self.port = int(line.split()[1])

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()


def pair(store: str, effects: Path, *, defaults: bool = False) -> tuple[Node, Node]:
    """Two nodes on one store, appending their side effects to one file (with elicitkit's default timings)."""
    return Node(store, "node-a", effects, defaults=defaults), Node(store, "node-b", effects, defaults=defaults)


@asynccontextmanager
async def running(*started: Node) -> AsyncIterator[None]:
    """Start every node, one after the other; stop them all on the way out, whatever happened."""
    try:
        for node in started:
            await node.start()
        yield
    finally:
        for node in started:
            node.stop()


def effects_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def provision(name: str) -> Rounds:
    return Rounds("provision", {"name": name})


def assert_provisioned(
    final: CallToolResult | InputRequiredResult,
    effects: Path,
    name: str,
    size: str,
    *,
    finished_on: str,
    created_on: str,
    code: str = CODE_WORD,
) -> None:
    """The run finished on `finished_on`, and its one side effect ran exactly once, on `created_on`."""
    assert isinstance(final, CallToolResult)
    assert text_of(final) == f"{name}: vm-{name} {size} (code {code}) finished on {finished_on}"
    assert effects_of(effects) == [f"create-vm {name} on {created_on}"]


@pytest.fixture
def effects(tmp_path: Path) -> Path:
    return tmp_path / "effects.log"


@pytest.fixture(params=["redis", "redis-cluster"])
def shared_store(request: pytest.FixtureRequest) -> str:
    """The store URL of the session's Redis, or of its Redis Cluster."""
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        return server.url
    cluster: RedisCluster = request.getfixturevalue("redis_cluster")
    return cluster.url


async def test_a_retry_landing_on_the_other_node_reaches_the_owner(shared_store: str, effects: Path) -> None:
    a, b = pair(shared_store, effects)
    web = provision("web")
    async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
        first = await web.start(on_a)
        second = await web.answer(on_b, first, CODE_WORD)  # lands on B; A holds the run
        assert isinstance(second, InputRequiredResult)
        final = await web.answer(on_b, second, "large")
    assert_provisioned(final, effects, "web", "large", finished_on="node-a", created_on="node-a")


async def test_a_fallback_answer_landing_on_the_other_node_reaches_the_owner(
    redis_server: RedisServer, effects: Path
) -> None:
    a, b = pair(redis_server.url, effects)
    async with running(a, b), Client(a.url, mode="auto") as on_a, Client(b.url, mode="auto") as on_b:
        first = await on_a.call_tool("provision", {"name": "db"})
        second = await send_answer(on_b, pending_id(first), "accept", {"value": "go"})
        assert (second.meta or {})["elicitationPending"]["message"] == "Size for db?"
        final = await send_answer(on_a, pending_id(second), "accept", {"value": "small"})
    assert_provisioned(final, effects, "db", "small", finished_on="node-a", created_on="node-a", code="go")


async def test_the_other_node_replays_a_killed_owners_run_and_the_step_runs_once(
    redis_server: RedisServer, effects: Path
) -> None:
    a, b = pair(redis_server.url, effects)
    cache = provision("cache")
    async with running(a, b), by_hand(b.url) as on_b:
        async with by_hand(a.url) as on_a:
            first = await cache.start(on_a)
            second = await cache.answer(on_a, first, CODE_WORD)  # A runs the step, then asks again
            assert isinstance(second, InputRequiredResult)
        a.kill()
        final = await cache.answer(on_b, second, "small")
    assert_provisioned(final, effects, "cache", "small", finished_on="node-b", created_on="node-a")


async def test_a_killed_owner_is_taken_over_within_a_second_and_the_step_runs_once(
    shared_store: str, effects: Path
) -> None:
    """Default timings (a 15 s lease): the retry must not wait for the dead owner's heartbeat to lapse."""
    a, b = pair(shared_store, effects, defaults=True)
    cache = provision("cache")
    async with running(a, b), by_hand(b.url) as on_b:
        async with by_hand(a.url) as on_a:
            first = await cache.start(on_a)
            second = await cache.answer(on_a, first, CODE_WORD)
            assert isinstance(second, InputRequiredResult)
        await provision("warm").start(on_b)  # B's first call pays its one-time costs outside the measure
        a.kill()
        with anyio.fail_after(1):
            final = await cache.answer(on_b, second, "small")
    assert_provisioned(final, effects, "cache", "small", finished_on="node-b", created_on="node-a")


async def test_a_frozen_owner_that_still_listens_is_not_taken_over(redis_server: RedisServer, effects: Path) -> None:
    """Default timings: past the forward timeout (2 s), a frozen owner keeps its subscription, so B waits."""
    await frozen_owner_is_waited_for(*pair(redis_server.url, effects, defaults=True), effects, frozen_for=3)


async def test_runs_waiting_through_a_redis_restart_complete(tmp_path: Path, effects: Path) -> None:
    redis = RedisServer(tmp_path / "redis", persistent=True)
    await redis.start()
    a, b = pair(redis.url, effects)
    queue = provision("queue")
    try:
        async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
            first = await queue.start(on_a)
            second = await queue.answer(on_b, first, CODE_WORD)
            assert isinstance(second, InputRequiredResult)
            await redis.restart()
            final = await queue.answer(on_b, second, "large")
    finally:
        await redis.stop()
    assert_provisioned(final, effects, "queue", "large", finished_on="node-a", created_on="node-a")


async def test_with_a_secret_no_answer_is_stored_in_plaintext(
    redis_server: RedisServer, tmp_path: Path, effects: Path
) -> None:
    import redis as redis_py

    db = tmp_path / "state.db"
    on_redis, on_sqlite = Node(redis_server.url, "node-r", effects), Node(f"sqlite:///{db}", "node-s", effects)
    x = provision("x")
    async with running(on_redis, on_sqlite), by_hand(on_redis.url) as r, by_hand(on_sqlite.url) as s:
        waiting_r = await x.answer(r, await x.start(r), CODE_WORD)
        waiting_s = await x.answer(s, await x.start(s), CODE_WORD)
        assert isinstance(waiting_r, InputRequiredResult)
        assert isinstance(waiting_s, InputRequiredResult)
        dumped = b""
        plain = redis_py.Redis.from_url(redis_server.url)
        try:
            for key in plain.scan_iter("*"):
                dumped += key + (plain.dump(key) or b"")
        finally:
            plain.close()
        stored = await anyio.to_thread.run_sync(lambda: b"".join(p.read_bytes() for p in tmp_path.glob("state.db*")))
    assert dumped
    assert stored
    assert CODE_WORD.encode() not in dumped
    assert CODE_WORD.encode() not in stored
    assert b"Provision" not in dumped
    assert b"Provision" not in stored


async def test_a_sqlite_node_killed_and_restarted_completes_the_waiting_run(tmp_path: Path, effects: Path) -> None:
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first_life = Node(store, "node-1", effects)
    mail = provision("mail")
    async with running(first_life):
        async with by_hand(first_life.url) as c:
            first = await mail.start(c)
            second = await mail.answer(c, first, CODE_WORD)
            assert isinstance(second, InputRequiredResult)
        first_life.kill()
    second_life = Node(store, "node-2", effects, defaults=True)
    async with running(second_life), by_hand(second_life.url) as c:
        await provision("warm").start(c)  # the new process's first call pays its one-time costs
        with anyio.fail_after(1):  # the old process is gone: taken over at once, no lease to wait out
            final = await mail.answer(c, second, "small")
    assert_provisioned(final, effects, "mail", "small", finished_on="node-2", created_on="node-1")


async def test_a_slow_owner_is_waited_for_not_raced_and_the_step_runs_once(
    redis_server: RedisServer, effects: Path
) -> None:
    """The owner is frozen (SIGSTOP) past the forward timeout but within its heartbeat lease: the other
    node must keep waiting for it rather than take the run over and perform the step a second time."""
    # Past node_app's forward_timeout (1 s), within its lease (3 s): B must not take over.
    await frozen_owner_is_waited_for(*pair(redis_server.url, effects), effects, frozen_for=1.5)


async def frozen_owner_is_waited_for(a: Node, b: Node, effects: Path, *, frozen_for: float) -> None:
    """Freeze node A (SIGSTOP) with a run waiting and retry it on B: B must not answer for `frozen_for`
    seconds; once A is thawed, A finishes the run and its step ran once."""
    slow = provision("slow")
    async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
        first = await slow.start(on_a)
        assert a.process is not None
        outcome: list[CallToolResult | InputRequiredResult] = []
        answered = anyio.Event()

        async def retry_on_b() -> None:
            outcome.append(await slow.answer(on_b, first, CODE_WORD))
            answered.set()

        a.process.send_signal(signal.SIGSTOP)  # node A is alive (heartbeat fresh, still subscribed), not answering
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(retry_on_b)
                with anyio.move_on_after(frozen_for):
                    await answered.wait()
                assert not answered.is_set(), "the other node took over a frozen owner that still listens"
                a.process.send_signal(signal.SIGCONT)
                await reached(answered, within=15)
        finally:
            a.process.send_signal(signal.SIGCONT)
        second = outcome[0]
        assert isinstance(second, InputRequiredResult)
        final = await slow.answer(on_b, second, "large")
    assert_provisioned(final, effects, "slow", "large", finished_on="node-a", created_on="node-a")
