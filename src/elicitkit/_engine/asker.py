"""The asker: puts each question a tool body asks on the route its client allows, and waits for the answer.

It chooses the route (`_core.routing`, from what the client shows and where the run is), replays a journaled
answer instead of asking again, bounds the wait by the question's deadline (on the loop's one deadline timer)
and by an answer from elsewhere withdrawing the request in flight, and cleans up after: the same for every route
(`routes`, `channel_route`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import anyio
from mcp.server.context import ServerRequestContext

from elicitkit import _mcp
from elicitkit._core.journal import reusable_answer
from elicitkit._core.kinds import Answer, Mode, RouteName
from elicitkit._core.routing import NoRoute, RouteFacts, choose_route, explain
from elicitkit._engine.deadlines import bounded, discard, now
from elicitkit._engine.door import Door
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.routes import AppRoute, HandlerRoute, ModelRoute, MrtrRoute, NativeRoute, Replaying, Route
from elicitkit._engine.run import Run
from elicitkit._errors import ElicitationNotSupported, ElicitationTimeout
from elicitkit._mcp import ToolContext

__all__ = ["Asker"]

logger = logging.getLogger("elicitkit")
R = TypeVar("R")


def _caller(rctx: ServerRequestContext[Any, Any]) -> tuple[str | None, object]:
    return (_mcp.principal(rctx), _mcp.session_key(rctx))


class Asker:
    """Puts a tool body's question to the person on the route its client allows, and waits for the answer."""

    def __init__(self, policy: Policy, registry: Registry, records: Records, door: Door, channel: Replaying) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records
        self.native = NativeRoute(policy.keepalive, door)
        self.mrtr = MrtrRoute(policy, records)
        self.model = ModelRoute(policy, records, registry)
        self.app = AppRoute(policy, records, registry)
        self.handler = HandlerRoute(policy, door)
        self.channel = channel
        self._routes: dict[RouteName, Route] = {
            "native": self.native,
            "mrtr": self.mrtr,
            "llm": self.model,
            "app": self.app,
            "handler": self.handler,
            "channel": channel,
        }

    def choose(self, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question) -> Route:
        """The route for `question`, or `ElicitationNotSupported` when none reaches the person.

        What the choice reads off the client is the same for every question asked through one request, so an
        inline run (a 2025-11-25 call's body, in its request's task) keeps its last choice with what it was made
        for (the request, the question's mode, whether it goes to a channel, whether the run is a task), and a
        body asking question after question chooses once. A hosted run asks each question through another
        request, and keeps nothing: a request it held on to would outlive its round for as long as the run waits."""
        mode = question.mode
        to_channel = question.via is not None
        if run is None or run.hosted:
            return self._routes[self._choice(rctx, run, mode, to_channel)]
        memo = run.route_memo
        if memo is not None and memo[0] is rctx and memo[1] == (mode, to_channel, run.task):
            route: Route = memo[2]
            return route
        route = self._routes[self._choice(rctx, run, mode, to_channel)]
        run.route_memo = (rctx, (mode, to_channel, run.task), route, _caller(rctx))
        return route

    @staticmethod
    def caller(rctx: ServerRequestContext[Any, Any], run: Run | None) -> tuple[str | None, object]:
        """Who asks through `rctx`: its principal and session (an inline run's, kept with its route's memo, which
        `choose` has just made for `rctx`)."""
        memo = run.route_memo if run is not None else None
        if memo is not None and memo[0] is rctx:
            caller: tuple[str | None, object] = memo[3]
            return caller
        return _caller(rctx)

    def _choice(self, rctx: ServerRequestContext[Any, Any], run: Run | None, mode: Mode, to_channel: bool) -> RouteName:
        fallback = self.policy.fallback
        chosen = choose_route(
            RouteFacts(  # by position: this runs for every question a run asks through a new request
                mode,
                to_channel,
                run is not None,
                run is not None and run.hosted,
                run is not None and run.task and not run.mrtr,
                mode in self.policy.client_modes(rctx),
                rctx.session.can_send_request,
                _mcp.is_mrtr(rctx.protocol_version),
                fallback if fallback == "llm" or fallback == "error" else "handler",
                self.policy.app_view_for(rctx),
            )
        )
        if isinstance(chosen, NoRoute):
            raise ElicitationNotSupported(explain(chosen, mode))
        return chosen

    async def ask(
        self,
        ctx: ToolContext,
        run: Run | None,
        question: Question,
        timeout: float,
        convert: Callable[[Question, Answer], R],
        own: ServerRequestContext[Any, Any] | None = None,
    ) -> R:
        """Put `question` to the person on the best route; wait until `question.expires_at`; return what `convert`
        makes of the answer (here, so that a front with nothing to do after it can hand this coroutine to its
        caller to await, and a call waiting on a person keeps one frame fewer).

        `own` is `ctx`'s request context when the caller already has it (reading it off `ctx` is not free).

        Raises:
            ElicitationTimeout: no answer in time (the message quotes `timeout`).
            ElicitationNotSupported: no route reaches the person.
            ElicitationClientError: the client answered with an error.
            InvalidElicitationContent: the client's reply was not an elicitation result.
        """
        rctx = own if own is not None else _mcp.request_context(ctx)
        hosted = False
        if run is not None:
            hosted = run.hosted
            question.place(run, run.advance() if hosted else 0)
        if hosted:
            assert run is not None
            # A hosted run asks through whichever request is waiting for it now (the latest retry).
            if run.rctx is not None:
                rctx = run.rctx
            entry = run.journal.get(question.seq)
            replayed = reusable_answer(entry, question.digest)
            if replayed is not None:
                # The route it would take now, so hooks and the audit trail filter a replay like the original.
                route_name = None
                with suppress(ElicitationNotSupported):
                    route_name = self.choose(rctx, run, question).name
                question.from_journal(replayed, route_name)
                if question.via is not None and run.rebuilt:
                    await self.channel.settle(run, question, replayed)
                return convert(question, replayed)
            if entry is not None:
                logger.info(
                    "Run %s asks a different question at step %d than its journal holds; asking again",
                    run.id,
                    question.seq,
                )
        route = self.choose(rctx, run, question)
        question.put(route.name, self.caller(rctx, run))
        if route.tracked:
            if self.policy.one_pending_per_session:
                self.registry.claim_session(question)
            if question.observable:
                self.registry.track(question.id, question)
        # The wait ends at the question's deadline (on the loop's one timer for every question's deadline), or
        # when an answer from elsewhere withdraws the request in flight.
        wait, timer = bounded(question.expires_at)
        try:
            with wait:
                if route is self.native:
                    question.withdrawable(wait)
                await route.put(ctx, rctx, run, question)
        finally:
            discard(timer)
            question.withdrawable(None)
            self.registry.forget(question)
            # The stored record must not outlive the question. (A link's record stays with its run: the journal
            # says it was answered; so does a record the model answers by its elicitId, whose spent claim then
            # refuses another answer and recognises the same one sent again. A hibernated run's stays open: its
            # answer is journaled from it; so does an open one's while the server shuts down, for the restart.)
            if (
                hosted
                and run is not None
                and route.name == "mrtr"
                and question.mode == "form"
                and not self.registry.kept_for_restart(run, question, now())
            ):
                await self._close_record(run, question)
        if question.answer is None:
            raise ElicitationTimeout(timeout, question.id)
        if question.failure is not None:
            raise question.failure
        if route is self.native and question.observable:
            # 2025-11-25: tell the client the out-of-band flow it opened has finished.
            with anyio.CancelScope(shield=True), suppress(Exception):
                await rctx.session.send_elicit_complete(question.id, related_request_id=rctx.request_id)
        return convert(question, question.answer)

    async def _close_record(self, run: Run, question: Question) -> None:
        # (A stale copy, whose run another node took over, leaves the records to that node.)
        if not run.hibernated and not run.stale and not question.record_gone:
            with anyio.CancelScope(shield=True), suppress(Exception):
                await self.records.delete_question(question.id, run)
