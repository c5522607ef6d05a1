"""Real processes: two server nodes over streamable HTTP sharing a real Redis, and SQLite restarts.

(a) a 2026-07-28 retry and a sendElicitationResult call that land on the other node reach the owner;
(b) the owner is SIGKILLed mid-run and the other node replays and completes, the step having run once;
(c) Redis restarts while runs wait: recovery, never a silent loss;
(d) with a secret, no answer's plaintext is in Redis or the SQLite file;
(e) SIGKILL and restart on SQLite completes the waiting run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit.testing import accept
from tests.redis_server import RedisServer

pytestmark = pytest.mark.anyio

APP = Path(__file__).with_name("node_app.py")
SECRET = "cluster-test-secret-0123456789abcdef0123456789"
CODE_WORD = "PLAINTEXT-CANARY-7Q4"


class Node:
    """One server process."""

    def __init__(self, store: str, name: str, effects: Path, secret: str | None = SECRET) -> None:
        self.args = [sys.executable, str(APP), "--store", store, "--node", name, "--effects", str(effects)]
        if secret:
            self.args += ["--secret", secret]
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


@contextmanager
def nodes(*started: Node) -> Iterator[None]:
    try:
        yield
    finally:
        for node in started:
            node.stop()


@asynccontextmanager
async def client(node: Node, *, forms: bool = True) -> AsyncIterator[Client]:
    # The tests drive rounds by hand; a callback only declares that this client shows forms.
    async def never(context: Any, params: Any) -> Any:
        raise AssertionError("rounds are driven by the test")

    async with Client(node.url, mode="auto", elicitation_callback=never if forms else None) as c:
        yield c


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def effects_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def start(c: Client, name: str) -> InputRequiredResult:
    result = await c.session.call_tool("provision", {"name": name}, allow_input_required=True)
    assert isinstance(result, InputRequiredResult), result
    return result


async def answer(
    c: Client, name: str, previous: InputRequiredResult, value: Any
) -> CallToolResult | InputRequiredResult:
    answers = {key: accept({"value": value}) for key in previous.input_requests or {}}
    return await c.session.call_tool(
        "provision",
        {"name": name},
        input_responses=answers,
        request_state=previous.request_state,
        allow_input_required=True,
    )


async def test_a_retry_landing_on_the_other_node_reaches_the_owner(redis_server: RedisServer, tmp_path: Path) -> None:
    effects = tmp_path / "effects.log"
    a, b = Node(redis_server.url, "node-a", effects), Node(redis_server.url, "node-b", effects)
    with nodes(a, b):
        await a.start()
        await b.start()
        async with client(a) as on_a, client(b) as on_b:
            first = await start(on_a, "web")
            second = await answer(on_b, "web", first, CODE_WORD)  # lands on B; A holds the run
            assert isinstance(second, InputRequiredResult)
            final = await answer(on_b, "web", second, "large")
    assert isinstance(final, CallToolResult)
    assert text(final) == f"web: vm-web large (code {CODE_WORD}) finished on node-a"
    assert effects_of(effects) == ["create-vm web on node-a"]


async def test_a_fallback_answer_landing_on_the_other_node_reaches_the_owner(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.log"
    a, b = Node(redis_server.url, "node-a", effects), Node(redis_server.url, "node-b", effects)
    with nodes(a, b):
        await a.start()
        await b.start()
        async with client(a, forms=False) as on_a, client(b, forms=False) as on_b:
            first = await on_a.call_tool("provision", {"name": "db"})
            pending = (first.meta or {})["elicitationPending"]
            second = await on_b.call_tool(
                "sendElicitationResult",
                {"elicitId": pending["elicitId"], "action": "accept", "content": {"value": "go"}},
            )
            pending = (second.meta or {})["elicitationPending"]
            assert pending["message"] == "Size for db?"
            final = await on_a.call_tool(
                "sendElicitationResult",
                {"elicitId": pending["elicitId"], "action": "accept", "content": {"value": "small"}},
            )
    assert text(final) == "db: vm-db small (code go) finished on node-a"
    assert effects_of(effects) == ["create-vm db on node-a"]


async def test_the_other_node_replays_a_killed_owners_run_and_the_step_runs_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.log"
    a, b = Node(redis_server.url, "node-a", effects), Node(redis_server.url, "node-b", effects)
    with nodes(a, b):
        await a.start()
        await b.start()
        async with client(b) as on_b:
            async with client(a) as on_a:
                first = await start(on_a, "cache")
                second = await answer(on_a, "cache", first, CODE_WORD)  # A runs the step, then asks again
                assert isinstance(second, InputRequiredResult)
            a.kill()
            final = await answer(on_b, "cache", second, "small")
    assert isinstance(final, CallToolResult)
    assert text(final) == f"cache: vm-cache small (code {CODE_WORD}) finished on node-b"
    assert effects_of(effects) == ["create-vm cache on node-a"]


async def test_runs_waiting_through_a_redis_restart_complete(tmp_path: Path) -> None:
    effects = tmp_path / "effects.log"
    redis = RedisServer(tmp_path / "redis", persistent=True)
    await redis.start()
    a, b = Node(redis.url, "node-a", effects), Node(redis.url, "node-b", effects)
    try:
        with nodes(a, b):
            await a.start()
            await b.start()
            async with client(a) as on_a, client(b) as on_b:
                first = await start(on_a, "queue")
                second = await answer(on_b, "queue", first, CODE_WORD)
                assert isinstance(second, InputRequiredResult)
                await redis.restart()
                final = await answer(on_b, "queue", second, "large")
    finally:
        await redis.stop()
    assert isinstance(final, CallToolResult)
    assert text(final) == f"queue: vm-queue large (code {CODE_WORD}) finished on node-a"
    assert effects_of(effects) == ["create-vm queue on node-a"]


async def test_with_a_secret_no_answer_is_stored_in_plaintext(redis_server: RedisServer, tmp_path: Path) -> None:
    import redis as redis_py

    effects = tmp_path / "effects.log"
    db = tmp_path / "state.db"
    on_redis, on_sqlite = Node(redis_server.url, "node-r", effects), Node(f"sqlite:///{db}", "node-s", effects)
    with nodes(on_redis, on_sqlite):
        await on_redis.start()
        await on_sqlite.start()
        async with client(on_redis) as r, client(on_sqlite) as s:
            waiting_r = await answer(r, "x", await start(r, "x"), CODE_WORD)
            waiting_s = await answer(s, "x", await start(s, "x"), CODE_WORD)
            assert isinstance(waiting_r, InputRequiredResult)
            assert isinstance(waiting_s, InputRequiredResult)
            dumped = b""
            plain = redis_py.Redis.from_url(redis_server.url)
            try:
                for key in plain.scan_iter("*"):
                    dumped += key + (plain.dump(key) or b"")
            finally:
                plain.close()
            stored = await anyio.to_thread.run_sync(
                lambda: b"".join(p.read_bytes() for p in tmp_path.glob("state.db*"))
            )
    assert dumped
    assert stored
    assert CODE_WORD.encode() not in dumped
    assert CODE_WORD.encode() not in stored
    assert b"Provision" not in dumped
    assert b"Provision" not in stored


async def test_a_sqlite_node_killed_and_restarted_completes_the_waiting_run(tmp_path: Path) -> None:
    effects = tmp_path / "effects.log"
    store = f"sqlite:///{tmp_path / 'state.db'}"
    first_life = Node(store, "node-1", effects)
    with nodes(first_life):
        await first_life.start()
        async with client(first_life) as c:
            first = await start(c, "mail")
            second = await answer(c, "mail", first, CODE_WORD)
            assert isinstance(second, InputRequiredResult)
        first_life.kill()
    second_life = Node(store, "node-2", effects)
    with nodes(second_life):
        await second_life.start()
        async with client(second_life) as c:
            final = await answer(c, "mail", second, "small")
    assert isinstance(final, CallToolResult)
    assert text(final) == f"mail: vm-mail small (code {CODE_WORD}) finished on node-2"
    assert effects_of(effects) == ["create-vm mail on node-1"]


async def test_a_slow_owner_is_waited_for_not_raced_and_the_step_runs_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The owner is frozen (SIGSTOP) past the forward timeout but within its heartbeat lease: the other
    node must keep waiting for it rather than take the run over and perform the step a second time."""
    effects = tmp_path / "effects.log"
    a, b = Node(redis_server.url, "node-a", effects), Node(redis_server.url, "node-b", effects)
    with nodes(a, b):
        await a.start()
        await b.start()
        async with client(a) as on_a, client(b) as on_b:
            first = await start(on_a, "slow")
            assert a.process is not None
            outcome: list[CallToolResult | InputRequiredResult] = []
            answered = anyio.Event()

            async def retry_on_b() -> None:
                outcome.append(await answer(on_b, "slow", first, CODE_WORD))
                answered.set()

            a.process.send_signal(signal.SIGSTOP)  # node A is alive (heartbeat fresh) but not answering
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(retry_on_b)
                    # Past node_app's forward_timeout (1 s), within its lease (3 s): B must not take over.
                    with anyio.move_on_after(1.5):
                        await answered.wait()
                    assert not answered.is_set(), "the other node raced a live owner"
                    a.process.send_signal(signal.SIGCONT)
                    with anyio.fail_after(15):
                        await answered.wait()
            finally:
                a.process.send_signal(signal.SIGCONT)
            second = outcome[0]
            assert isinstance(second, InputRequiredResult)
            final = await answer(on_b, "slow", second, "large")
    assert isinstance(final, CallToolResult)
    assert text(final) == f"slow: vm-slow large (code {CODE_WORD}) finished on node-a"
    assert effects_of(effects) == ["create-vm slow on node-a"]
