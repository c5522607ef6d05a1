"""Routes: how one question reaches the person, one small class each, chosen per question.

- `NativeRoute`: 2025-11-25 `elicitation/create` on the session of the request
  waiting for the run (with progress keepalives while the person thinks);
- `MrtrRoute`: 2026-07-28 `InputRequiredResult`, answered by the client's retry;
- `ModelRoute`: the client cannot show the question, so the tool result asks the
  model to ask the person and answer through the fallback system tool;
- `HandlerRoute`: the server's own fallback handler answers;
- `ChannelRoute` (in `channel_route`): a human channel (web inbox, Slack, Discord, Teams).

Each route puts the question and returns once it has an answer; `Asker`
chooses the route, bounds the wait and cleans up, the same way for all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._core.journal import Entry, digest_of, reusable_answer
from elicitkit._core.kinds import Answer, RouteName
from elicitkit._engine.journal import Durability
from elicitkit._engine.policy import Policy
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Question, Run
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
)
from elicitkit._fallback import PendingQuestion
from elicitkit.stores.base import Store

__all__ = ["Asker", "keep_alive", "offer_task", "wants_progress"]

KEEPALIVE_MESSAGE = "Waiting for a person to answer"
logger = logging.getLogger("elicitkit")


class Route(Protocol):
    name: RouteName
    tracked: bool
    """Its questions can be reached from outside the asking task (pages, a session's newer question)."""

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
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

    def __init__(self, keepalive: float | None) -> None:
        self.keepalive = keepalive

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        task = run is not None and run.task
        if run is not None:
            run.pending[question.id] = question
        await question.reached("sent")
        while True:
            if task:
                # A 2025-11-25 task: its status says the client must answer, and the question goes on the
                # `tasks/result` request the client sends for it (the call itself has returned the task).
                assert run is not None
                rctx = await run.attached()
            answer = await self._send(rctx, question, run.id if task and run is not None else None)
            verdict = question.judge(answer)
            if verdict.answers:
                question.scope = None  # answered: nothing to withdraw any more
            if question.take(answer, verdict):
                return
            if verdict.problems is None:
                # The person agreed to open our page; the answer comes when they submit it there.
                await question.wait()
                return

    async def _send(self, rctx: ServerRequestContext[Any, Any], question: Question, task: str | None) -> Answer:
        if task is not None:
            params = question.wire_params(rctx.protocol_version)
            send = _mcp.elicit_for_task(rctx, params, task)
        elif question.mode == "url":
            assert question.url is not None
            send = rctx.session.elicit_url(
                question.wire_message, question.url, question.id, related_request_id=rctx.request_id
            )
        else:
            wire = question.schema.requested(rctx.protocol_version)
            send = rctx.session.elicit_form(question.wire_message, wire, related_request_id=rctx.request_id)
        try:
            if self.keepalive is None or not wants_progress(rctx):
                result = await send
            else:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(keep_alive, rctx, self.keepalive)
                    result = await send
                    tg.cancel_scope.cancel()
        except NoBackChannelError:
            raise ElicitationNotSupported("This connection cannot carry a request to the client") from None
        except MCPError as exc:
            raise ElicitationClientError(exc.error.code, exc.error.message) from None
        except ValidationError:
            problem = Problem("", "the client's reply is not a valid elicitation result")
            raise InvalidElicitationContent([problem]) from None
        return Answer(result.action, result.content)


class MrtrRoute:
    """The question rides the run's next outcome; the inbox resolves it when the retry (or a page) answers."""

    name: RouteName = "mrtr"
    tracked = True

    def __init__(self, policy: Policy, durability: Durability) -> None:
        self.policy = policy
        self.durability = durability

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        assert run is not None
        await self.durability.save_pending(run.id, run.principal, question, self.policy.wall_expiry(question))
        await question.reached("stored")
        if question.task and self.name == "mrtr":
            offer_task(run)  # before the question is handed out, so the waiting request gets the task instead
        run.ask(question)
        await question.reached("sent")
        await question.wait()


class ModelRoute(MrtrRoute):
    """Like MRTR, but the outcome is a tool result for the model, answered through the fallback tool."""

    name: RouteName = "llm"

    def __init__(self, policy: Policy, durability: Durability, registry: Registry) -> None:
        super().__init__(policy, durability)
        self.registry = registry

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        self.registry.by_elicit_id[question.id] = question
        await super().put(ctx, rctx, run, question)


class HandlerRoute:
    name: RouteName = "handler"
    tracked = False

    def __init__(self, policy: Policy, durability: Durability) -> None:
        self.policy = policy
        self.durability = durability

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        assert callable(self.policy.fallback)
        await question.reached("sent")
        while True:
            message, schema = question.wire_message, question.schema.wire
            pending = PendingQuestion(question.id, message, schema, question.expires_wall())
            result = await self.policy.fallback(ctx, pending)
            answer = Answer(result.action, result.content)
            verdict = question.judge(answer)
            if verdict.answers and run is not None and run.hosted:
                entry = Entry.of_answer(question.digest, answer)
                await self.durability.record(run.id, run.principal, question.seq, entry)
            if question.take(answer, verdict):
                return
            if verdict.problems is None:
                await question.wait()  # a link to our page: the page carries the answer
                return


class Asker:
    """Puts a tool body's question to the person on the route its client allows, and waits for the answer."""

    def __init__(
        self, policy: Policy, registry: Registry, durability: Durability, store: Store, channel: Replaying
    ) -> None:
        self.policy = policy
        self.registry = registry
        self.store = store
        self.native = NativeRoute(policy.keepalive)
        self.mrtr = MrtrRoute(policy, durability)
        self.model = ModelRoute(policy, durability, registry)
        self.handler = HandlerRoute(policy, durability)
        self.channel = channel

    def choose(self, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question) -> Route:
        """The route for `question`, or `ElicitationNotSupported` when none reaches the person."""
        hosted = run is not None and run.hosted
        what = "links (URL mode)" if question.mode == "url" else "elicitation forms"
        fallback = self.policy.fallback
        if question.via is not None:
            if run is None:
                raise ElicitationNotSupported(
                    "A question for a channel must be asked from a tool called through the server that "
                    "Elicitation(server) is attached to"
                )
            return self.channel
        if run is not None and run.task and not run.mrtr and question.mode in self.policy.client_modes(rctx):
            return self.native  # a 2025-11-25 task asks its client through the `tasks/result` it sends
        if self.policy.native_possible(rctx, question.mode):
            if not _mcp.is_mrtr(rctx.protocol_version):
                return self.native
            if not hosted:
                raise ElicitationNotSupported(
                    "On MCP 2026-07-28 a question can only be asked from a tool called through the server "
                    "that Elicitation(server) is attached to, while the server's lifespan is running"
                )
            return self.mrtr
        if fallback == "error":
            raise ElicitationNotSupported(f"The client did not declare that it can show {what}")
        if fallback == "llm":
            if not hosted:
                raise ElicitationNotSupported(
                    f"The client cannot show {what}, and the fallback route needs the tool to run "
                    "through the server that Elicitation(server) is attached to, while its lifespan is running"
                )
            return self.model
        return self.handler

    async def ask(
        self,
        ctx: Context[Any, Any],
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
        question.owner = run
        if run is not None and run.hosted:
            question.seq = run.advance()
            question.digest = digest_of(question.message, question.schema.wire)
            entry = run.journal.get(question.seq)
            replayed = reusable_answer(entry, question.digest)
            if replayed is not None:
                question.replayed = True
                # The route it would take now, so hooks and the audit trail filter a replay like the original.
                with suppress(ElicitationNotSupported):
                    question.route = self.choose(rctx, run, question).name
                if question.via is not None and run.rebuilt:
                    await self.channel.settle(run, question, replayed)
                return replayed
            if entry is not None:
                logger.info(
                    "Run %s asks a different question at step %d than its journal holds; asking again",
                    run.id,
                    question.seq,
                )
        question.caller = (_mcp.principal(rctx), _mcp.session_key(rctx))
        route = self.choose(rctx, run, question)
        question.route = route.name
        if route.tracked:
            if self.policy.one_pending_per_session:
                self.registry.claim_session(_mcp.session_key(rctx), question)
            if question.observable:
                self.registry.url_questions[question.id] = question
        try:
            # One scope per question: its deadline is the timeout, and cancelling it withdraws the question.
            with anyio.CancelScope(deadline=question.expires_at) as scope:
                if route is self.native:
                    question.scope = scope
                await route.put(ctx, rctx, run, question)
        finally:
            question.scope = None
            self.registry.forget(question)
            if run is not None and run.hosted and route.name in ("mrtr", "llm") and question.mode == "form":
                # The stored record must not outlive the question: its elicitId must stop working. (A link's
                # record stays with its run; the journal says it was answered. A hibernated run's stays open:
                # its answer is journaled from it.)
                await self._close_record(run, question)
        if question.answer is None:
            raise ElicitationTimeout(timeout)
        if question.failure is not None:
            raise question.failure
        if route is self.native and question.observable:
            # 2025-11-25: tell the client the out-of-band flow it opened has finished.
            with anyio.CancelScope(shield=True), suppress(Exception):
                await rctx.session.send_elicit_complete(question.id, related_request_id=rctx.request_id)
        return question.answer

    async def _close_record(self, run: Run, question: Question) -> None:
        if not run.hibernated and not question.record_closed:
            with anyio.CancelScope(shield=True), suppress(Exception):
                await self.store.delete_question(question.id)


def wants_progress(rctx: ServerRequestContext[Any, Any]) -> bool:
    meta: Any = rctx.meta
    return bool(meta) and (meta.get("progress_token") is not None or meta.get("progressToken") is not None)


async def keep_alive(
    rctx: ServerRequestContext[Any, Any], interval: float, waiting: Callable[[], bool] = lambda: True
) -> None:
    """Progress notifications while the person thinks, so clients that reset their timeout on progress wait;
    they stop once `waiting()` says the request no longer waits."""
    beat = 0
    while True:
        await anyio.sleep(interval)
        if not waiting():
            return
        beat += 1
        await rctx.session.report_progress(beat, None, KEEPALIVE_MESSAGE)
