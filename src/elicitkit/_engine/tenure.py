"""A hosted run's tenure in the store: its record written and renewed while this node owns it, and only then.

A run waiting for its next request keeps a record in the store, so that the
request finds it from any node; the record names the node that owns the run. A
node frozen or cut off long enough has its runs taken over by another (which
replays them): from then on its own copy is stale, and must neither write the
record as its own again (that would take the run back) nor delete the new
owner's records when it ends. On a shared store every renewal and every end is
therefore fenced by the owner, in the store's own step where it can
(`FencedStore`). After the node was counted gone, or the store lost its data,
`recheck` looks each run up again: a taken one is dropped, a lost one written
again.
"""

from __future__ import annotations

import logging
import time

from elicitkit._core.kinds import BY_LATER_REQUEST
from elicitkit._engine.policy import Policy
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Run
from elicitkit._errors import StoreUnavailable

__all__ = ["NotHeld", "Tenure"]

logger = logging.getLogger("elicitkit")


class NotHeld(Exception):
    """The run turned out to be another node's: this node's copy was stale (the node was frozen or cut off while
    the other took the run over), and it has stopped."""


class Tenure:
    """The records of the runs this node hosts, written, renewed and forgotten while it owns them."""

    def __init__(self, policy: Policy, registry: Registry, records: Records) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records

    async def store_run(self, run: Run) -> None:
        """Write (or renew) the run's record, so that it outlives the run's wait for its next request; a store
        outage then fails the request cleanly (`store_unavailable`).

        The record is written to last half as long again as that wait, so a run asking question after question
        renews it only every other expiry or so, not on every round.

        Raises `NotHeld` when the record is due for renewal but another node owns the run now: writing it would
        take the run back from that node.
        """
        if run.stored_until - time.time() > self.policy.run_expiry:
            return
        fenced = run.stored and self.policy.shared
        if fenced and run.stale:
            raise NotHeld
        other = await self.records.keep_run(run, self.policy.run_record_ttl, fenced=fenced)
        if other is not None:
            self._drop_stale(run, other)
            raise NotHeld

    async def forget(self, run: Run, *, kept: bool = False) -> None:
        """Delete a finished run's records unless another node took the run over (`kept`: see `_engine/ended.py`)."""
        try:
            if kept:
                # Fenced on a shared store: a copy whose run another node took over leaves it to that node.
                other = await self.records.keep_finished_run(run, self.policy.run_expiry, fenced=self.policy.shared)
                if other is not None:
                    self._drop_stale(run, other)
            else:
                await self.records.forget_run(run.id)
        except StoreUnavailable:
            logger.warning("Could not delete finished run %s; it expires on its own", run.id)

    async def recheck(self) -> None:
        """Look each run this node holds up in the store, after the node was counted gone or the store forgot it.

        A run another node took over meanwhile is that node's: this copy stops and leaves the records to it. A run
        the store no longer knows (it restarted without its data) is recorded again, with the questions its client
        or the model answers, so that its next request may land on any node and still reach it here.
        """
        lost = 0
        for run in [run for run in self.registry.runs.values() if run.hosted and run.stored]:
            owner = await self.records.owner_of(run.id)
            if self.registry.runs.get(run.id) is not run:
                continue  # it ended meanwhile
            if owner is None and run.final is None and not run.ending:
                await self._record_again(run)
                lost += 1
            elif owner is not None and owner != self.policy.node:
                self._drop_stale(run, owner)
        if lost:
            logger.warning("Node %s recorded %d lost run(s) again", self.policy.node, lost)

    async def held_elsewhere(self, run: Run) -> bool:
        """Whether another node owns `run` now (it took the run over while this node was frozen or cut off); then
        this copy stops, and leaves the records to that node."""
        if run.stale:
            return True
        owner = await self.records.owner_of(run.id)
        if owner is None or owner == self.policy.node:
            return False
        self._drop_stale(run, owner)
        return True

    def _drop_stale(self, run: Run, owner: str) -> None:
        if not run.stale:  # found by one of several lookups at once: said once
            logger.warning("Run %s belongs to node %s now; this node drops its stale copy", run.id, owner)
            run.taken_over()
        self.registry.release(run)

    async def _record_again(self, run: Run) -> None:
        """Write a live run's lost records again: its own, for as long as this node last wrote it to last, and its
        open questions' (what `MrtrRoute` stores; a channel's question records what only its channel knows)."""
        await self.records.keep_run(run, max(run.stored_until - time.time(), self.policy.run_record_ttl))
        for question in list(run.pending.values()):
            if question.route in BY_LATER_REQUEST:
                await self.records.save_pending(run, question, self.policy.wall_expiry(question))
        if run.final is not None or self.registry.runs.get(run.id) is not run:
            await self.forget(run)  # it ended while it was written: its end may have deleted its records first
