"""Routes: how one question reaches the person, one small class each, chosen per question.

- `NativeRoute`: 2025-11-25 `elicitation/create` on the session of the request
  waiting for the run (with progress keepalives while the person thinks);
- `MrtrRoute`: 2026-07-28 `InputRequiredResult`, answered by the client's retry;
- `ModelRoute`: the client cannot show the question, so the tool result asks the
  model to ask the person and answer through the fallback system tool;
- `AppRoute`: the same, for a client that renders MCP Apps: the tool result also carries what elicitkit's form
  view needs, the host shows the form in the chat, and the view answers through the fallback tool;
- `HandlerRoute`: the server's own fallback handler answers;
- `ChannelRoute` (in `channel_route`): a human channel (web inbox, Slack, Discord, Teams).

Each route puts the question and returns once it has an answer; `Asker`
chooses the route (`_core.routing`), bounds the wait and cleans up, the same
way for all. A reply the route receives itself (the client's, the handler's)
goes through the door like every other answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import anyio
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._core.journal import reusable_answer
from elicitkit._core.kinds import Answer, RouteName
from elicitkit._core.replies import Ruling
from elicitkit._core.routing import NoRoute, RouteFacts, choose_route, explain
from elicitkit._engine.deadlines import bounded, discard, now
from elicitkit._engine.door import Door
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Run
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
)
from elicitkit._fallback import PendingQuestion
from elicitkit._mcp import ToolContext

__all__ = ["Asker", "keep_alive", "offer_task", "wants_progress", "while_alive"]

KEEPALIVE_MESSAGE = "Waiting for a person to answer"
T = TypeVar("T")
logger = logging.getLogger("elicitkit")


class Route(Protocol):
    name: RouteName
    tracked: bool
    """Its questions can be reached from outside the asking task (pages, a session's newer question)."""

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        """Put `question` to the person; return once it has its answer (the caller bounds the wait).

        `ctx` is the asking tool's context; `rctx` the request that waits for the run now.
        """


class Replaying(Route, Protocol):
    """A route whose questions leave something to tidy when a replay finds them answered (a channel's message)."""

    async def settle(self, run: Run, question: Question, answer: Answer) -> None: ...


def offer_task(run: Run) -> None:
    """Make a 2026-07-28 run a task if the request waiting for it takes tasks: the client polls from then on.

    For questions a person may take long over: those on a channel, and those asked with `task=True`.
    """
    if run.hosted and not run.task and run.rctx is not None and _mcp.takes_tasks(run.rctx):
        run.want_task()


class NativeRoute:
    name: RouteName = "native"
    tracked = True

    def __init__(self, keepalive: float | None, door: Door) -> None:
        self.keepalive = keepalive
        self.door = door

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        task = run is not None and run.task
        withdraw = question.withdrawing
        if run is not None:
            run.hold(question)
        await question.reached("sent")
        while True:
            if task:
                # A 2025-11-25 task: its status says the client must answer, and the question goes on the
                # `tasks/result` request the client sends for it (the call itself has returned the task).
                assert run is not None
                rctx = await run.attached()
            question.withdrawable(withdraw)
            answer = await self._send(rctx, question, run.id if task and run is not None else None)
            question.withdrawable(None)  # the request has its reply: nothing to withdraw
            if answer is None:
                # A reply that is not an elicitation result: refused like an answer that breaks the schema (asked
                # again, and after the last attempt `elicit` raises), as a 2026-07-28 retry's is refused.
                if question.refuse(_unreadable()):
                    return
                continue
            ruling = await self.door.reply("client", run, question, answer)
            if not question.is_open:
                return  # answered, or out of attempts
            if ruling is Ruling.ACKNOWLEDGES:
                # The person agreed to open our page; the answer comes when they submit it there.
                await question.wait()
                return

    async def _send(self, rctx: ServerRequestContext[Any, Any], question: Question, task: str | None) -> Answer | None:
        """The client's reply; None when it is not a valid elicitation result."""
        send = _mcp.elicit(rctx, question.wire_params(rctx.protocol_version), task)
        try:
            if self.keepalive is None or not wants_progress(rctx):
                result = await send
            else:
                result = await while_alive(rctx, self.keepalive, send)
        except NoBackChannelError:
            raise ElicitationNotSupported("This connection cannot carry a request to the client") from None
        except MCPError as exc:
            raise ElicitationClientError(exc.error.code, exc.error.message) from None
        except ValidationError:
            return None
        return Answer(result.action, result.content, result.meta)


class MrtrRoute:
    """The question rides the run's next outcome; the door resolves it when the retry (or a page) answers."""

    name: RouteName = "mrtr"
    tracked = True

    def __init__(self, policy: Policy, records: Records) -> None:
        self.policy = policy
        self.records = records

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        assert run is not None
        await self.records.save_pending(run, question, self.policy.wall_expiry(question))
        await question.reached("stored")
        if self.name == "mrtr" and (question.asked.task or self.policy.task_tool(run.tool)):
            offer_task(run)  # before the question is handed out, so the waiting request gets the task instead
        run.ask(question)
        await question.reached("sent")
        await question.wait()


class ModelRoute(MrtrRoute):
    """Like MRTR, but the outcome is a tool result for the model, answered through the fallback tool."""

    name: RouteName = "llm"

    def __init__(self, policy: Policy, records: Records, registry: Registry) -> None:
        super().__init__(policy, records)
        self.registry = registry

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        self.registry.track(question.id, question)
        await super().put(ctx, rctx, run, question)


class AppRoute(ModelRoute):
    """Like the model's route; the host shows the question in elicitkit's form view, which answers through the
    fallback tool as the model would (so a host that renders nothing still has the model ask)."""

    name: RouteName = "app"


class HandlerRoute:
    name: RouteName = "handler"
    tracked = False

    def __init__(self, policy: Policy, door: Door) -> None:
        self.policy = policy
        self.door = door

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        assert callable(self.policy.fallback)
        await question.reached("sent")
        while True:
            message, schema = question.wire_message, question.schema.wire
            pending = PendingQuestion(question.id, message, schema, question.expires_wall())
            result = await self.policy.fallback(ctx, pending)
            ruling = await self.door.reply("handler", run, question, Answer(result.action, result.content, result.meta))
            if not question.is_open:
                return
            if ruling is Ruling.ACKNOWLEDGES:
                await question.wait()  # a link to our page: the page carries the answer
                return


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
        """The route for `question`, or `ElicitationNotSupported` when none reaches the person."""
        fallback = self.policy.fallback
        mode = question.mode
        chosen = choose_route(
            RouteFacts(  # by position: this runs for every question
                mode,
                question.via is not None,
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
            raise ElicitationNotSupported(explain(chosen, question.mode))
        return self._routes[chosen]

    async def ask(
        self,
        ctx: ToolContext,
        run: Run | None,
        question: Question,
        timeout: float,
        own: ServerRequestContext[Any, Any] | None = None,
    ) -> Answer:
        """Put `question` to the person on the best route; wait until `question.expires_at`.

        `own` is `ctx`'s request context when the caller already has it (reading it off `ctx` is not free).

        Raises:
            ElicitationTimeout: no answer in time (the message quotes `timeout`).
            ElicitationNotSupported: no route reaches the person.
            ElicitationClientError: the client answered with an error.
            InvalidElicitationContent: the client's reply was not an elicitation result.
        """
        own = own if own is not None else _mcp.request_context(ctx)
        # A hosted run asks through whichever request is waiting for it now (the latest retry).
        rctx = run.rctx if run is not None and run.hosted and run.rctx is not None else own
        if run is not None:
            question.place(run, run.advance() if run.hosted else 0)
        if run is not None and run.hosted:
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
                return replayed
            if entry is not None:
                logger.info(
                    "Run %s asks a different question at step %d than its journal holds; asking again",
                    run.id,
                    question.seq,
                )
        route = self.choose(rctx, run, question)
        question.put(route.name, (_mcp.principal(rctx), _mcp.session_key(rctx)))
        if route.tracked:
            if self.policy.one_pending_per_session:
                self.registry.claim_session(question)
            if question.observable:
                self.registry.track(question.id, question)
        # One scope per question, which ending the wait cancels: its deadline (on the loop's one timer for every
        # question's deadline), or an answer from elsewhere withdrawing the request in flight.
        scope, timer = bounded(question.expires_at)
        try:
            with scope:
                if route is self.native:
                    question.withdrawable(scope)
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
                run is not None
                and run.hosted
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
        return question.answer

    async def _close_record(self, run: Run, question: Question) -> None:
        # (A stale copy, whose run another node took over, leaves the records to that node.)
        if not run.hibernated and not run.stale and not question.record_gone:
            with anyio.CancelScope(shield=True), suppress(Exception):
                await self.records.delete_question(question.id, run)


def _unreadable() -> InvalidElicitationContent:
    return InvalidElicitationContent([Problem("", "the client's reply is not a valid elicitation result")])


def wants_progress(rctx: ServerRequestContext[Any, Any]) -> bool:
    meta: Any = rctx.meta
    return bool(meta) and (meta.get("progress_token") is not None or meta.get("progressToken") is not None)


async def keep_alive(
    rctx: ServerRequestContext[Any, Any], interval: float, waiting: Callable[[], bool] = lambda: True
) -> None:
    """Progress notifications while the person thinks, so clients that reset their timeout on progress wait;
    they stop once `waiting()` says the request no longer waits. A notification that cannot be sent (the
    client went away) ends them: it is never the question's failure."""
    beat = 0
    while True:
        await anyio.sleep(interval)
        if not waiting():
            return
        beat += 1
        try:
            await rctx.session.report_progress(beat, None, KEEPALIVE_MESSAGE)
        except Exception as exc:
            logger.debug("Stopped keepalives for a request that cannot take them (%s)", type(exc).__name__)
            return


async def while_alive(
    rctx: ServerRequestContext[Any, Any],
    interval: float,
    awaitable: Awaitable[T],
    waiting: Callable[[], bool] = lambda: True,
) -> T:
    """Await `awaitable` while keepalives go to `rctx`; its own outcome (value or exception) comes back as it is.

    (A task group would wrap an exception the awaitable raises in an `ExceptionGroup`, and the caller's
    `except MCPError` would never see the client's error reply.)
    """
    outcome: list[T] = []
    failure: list[BaseException] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(keep_alive, rctx, interval, waiting)
        try:
            outcome.append(await awaitable)
        except BaseException as exc:  # carried out of the group as it is, cancellation included
            failure.append(exc)
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0]
