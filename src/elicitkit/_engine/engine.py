"""The engine: the pieces that run tool bodies and carry questions and answers, put together.

Imports go one way. `_core` decides without IO; `question` and `run` hold
state in memory, changed only by their own transitions; `records` seals it
into the store; `registry` finds runs and questions; `policy` says what the
server allows and the client can show; `door` takes every answer; `routes`
put questions to people; `host` runs bodies and hands their outcomes to
requests; `answers` brings each arrival of answers to the door of the node
that holds its run; `pages` is what elicitkit's pages ask of it; `desk` is
where channels' replies come; `middleware` is the SDK's way in. This module
builds them and is the only one that knows them all.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel

from elicitkit._core.journal import Entry, reusable_step
from elicitkit._crypto import SealerLike
from elicitkit._engine.answers import Answers
from elicitkit._engine.asker import Asker
from elicitkit._engine.channel_route import ChannelRoute
from elicitkit._engine.cluster import MISSING, Cluster, Missing
from elicitkit._engine.desk import ChannelDesk
from elicitkit._engine.door import Door
from elicitkit._engine.host import RunHost, current_run
from elicitkit._engine.middleware import ToolsMiddleware
from elicitkit._engine.page_questions import PageQuestions
from elicitkit._engine.policy import Policy
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Run, call
from elicitkit._engine.stages import Stages
from elicitkit._engine.tasks import TaskBook
from elicitkit._web.tokens import LinkTokens
from elicitkit.stores.base import Broker, Store
from elicitkit.stores.guarded import guarded, guarded_broker

__all__ = ["Engine"]

logger = logging.getLogger("elicitkit")

_SWEEP_EVERY = 60.0


class Engine:
    """Runs, open questions, their durable records, and the requests attached to them."""

    def __init__(
        self,
        policy: Policy,
        *,
        store: Store,
        broker: Broker,
        sealer: SealerLike,
        tokens: LinkTokens,
        close_store_when_stopped: bool = False,
    ) -> None:
        self.policy = policy
        self.store = guarded(store)
        self.close_store_when_stopped = close_store_when_stopped
        self.registry = Registry()
        self.records = Records(self.store, sealer, policy.node)
        self.cluster = Cluster(self.store, guarded_broker(broker), sealer, policy.node)
        self.tasks = TaskBook(policy, self.registry, self.records, self.cluster)
        self.runs = RunHost(policy, self.registry, self.records, self.cluster, self.tasks)
        self.stages = Stages()
        """The stage hooks registered on this engine's `Elicitation` (see `_engine.stages`)."""
        self.door = Door(policy, self.records, self.stages)
        self.answers = Answers(policy, self.registry, self.records, self.cluster, self.runs, self.door)
        self.pages = PageQuestions(self.answers, self.registry, self.records)
        self.desk = ChannelDesk(self.records, self.cluster, self.answers, tokens)
        channel_route = ChannelRoute(policy, self.registry, self.records, self.desk)
        self.asker = Asker(policy, self.registry, self.records, self.door, channel_route)
        self.middleware = ToolsMiddleware(policy, self.runs, self.answers)

    @asynccontextmanager
    async def host(self, lifespan_state: Any) -> AsyncIterator[None]:
        """Give suspended runs a task group, and this node a presence, while the server's lifespan lasts."""
        stopping = False
        try:
            async with anyio.create_task_group() as tg:
                if self.policy.shared:
                    await tg.start(self.cluster.serve, self._principal_of, self._forwarded)
                    tg.start_soon(self.cluster.heartbeat, self.policy.lease, self.runs.tenure.recheck)
                tg.start_soon(self._sweep)
                try:
                    async with self.runs.hosting(lifespan_state, tg):
                        yield
                finally:
                    # Shutdown, as the runs cancelled now see it: an open channel question stays for the restart.
                    self.registry.stopping += 1
                    stopping = True
                    tg.cancel_scope.cancel()
        finally:
            if stopping:
                self.registry.stopping -= 1
            if self.close_store_when_stopped:
                # The server stopped serving: the file's connection closes now, not whenever the garbage collector
                # gets to it, and opens again if the server serves again.
                with anyio.CancelScope(shield=True):
                    await self.store.aclose()

    def _principal_of(self, run_id: str) -> str | Missing | None:
        run = self.registry.runs.get(run_id)  # any run: a channel answer may be for a run that is not hosted
        if run is not None:
            return run.principal
        ended = self.registry.ended.get(run_id, anyio.current_time())  # a finished one, for a resent last retry
        return MISSING if ended is None else ended.principal

    async def _forwarded(self, run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        op = payload.get("op")
        if op == "arrival":
            return await self.answers.forwarded(run_id, payload)
        if op == "task_cancel":
            return await self.tasks.forwarded(run_id, payload)
        return None

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(_SWEEP_EVERY)
            self.registry.ended.drop_expired(anyio.current_time())  # also when no run has finished since
            try:
                await self.store.sweep()
            except Exception:
                logger.exception("Sweeping expired elicitation state failed; will retry")

    async def aclose(self) -> None:
        await self.cluster.broker.aclose()
        await self.store.aclose()

    @staticmethod
    def current_run() -> Run | None:
        """The run whose body is asking (None outside a tool call elicitkit saw)."""
        return current_run.get()

    async def step(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run `fn` once per run: a replay returns its journaled result instead of calling it again."""
        run = current_run.get()
        if run is None or not run.hosted:
            return await call(fn)
        seq = run.advance()
        entry = run.journal.get(seq)
        if entry is not None and reusable_step(entry, name):
            return entry.value
        if not run.stored:
            await self.runs.tenure.store_run(run)  # its journal goes with its record
        elif self.policy.shared:
            # Fencing: a body whose run another node took over must not perform the side effect again.
            owner = await self.records.owner_of(run.id)
            if owner is not None and owner != self.policy.node:
                logger.warning("Run %s now belongs to node %s; stopping this copy before step %r", run.id, owner, name)
                run.taken_over()
                await anyio.lowlevel.checkpoint()
        value = await call(fn)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(f"step {name!r} must return JSON-serializable data, got {type(value).__name__}") from None
        if not await self.records.record(run.id, run.principal, seq, Entry("step", name, value=value)):
            recorded = (await self.records.journal(run.id, run.principal)).get(seq)
            if reusable_step(recorded, name):
                assert recorded is not None
                return recorded.value
        return value
