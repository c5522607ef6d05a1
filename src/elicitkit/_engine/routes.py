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

Each route puts the question and returns once it has an answer; `Asker` (in
`asker`) chooses the route (`_core.routing`), bounds the wait and cleans up,
the same way for all. A reply the route receives itself (the client's, the handler's)
goes through the door like every other answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp_types import ElicitResult
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._core.kinds import Answer, RouteName
from elicitkit._core.replies import Ruling
from elicitkit._engine.door import Door
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Run
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationNotSupported,
    InvalidElicitationContent,
    Problem,
)
from elicitkit._fallback import PendingQuestion
from elicitkit._mcp import ToolContext

__all__ = [
    "AppRoute",
    "HandlerRoute",
    "ModelRoute",
    "MrtrRoute",
    "NativeRoute",
    "Replaying",
    "Route",
    "keep_alive",
    "offer_task",
    "wants_progress",
    "while_alive",
]

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
        if question.watched:
            await question.reached("sent")
        while True:
            if task:
                # A 2025-11-25 task: its status says the client must answer, and the question goes on the
                # `tasks/result` request the client sends for it (the call itself has returned the task).
                assert run is not None
                rctx = await run.attached()
            question.withdrawable(withdraw)
            # The request is awaited here, not in a coroutine of its own: a call waiting on a person keeps every
            # frame between its tool body and the transport.
            send = _mcp.elicit(rctx, question.wire_params(rctx.protocol_version), run.id if task and run else None)
            result: ElicitResult | None
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
                result = None
            question.withdrawable(None)  # the request has its reply: nothing to withdraw
            if result is None:
                # A reply that is not an elicitation result: refused like an answer that breaks the schema (asked
                # again, and after the last attempt `elicit` raises), as a 2026-07-28 retry's is refused.
                if question.refuse(_unreadable()):
                    return
                continue
            answer = Answer(result.action, result.content, result.meta)
            if run is not None and run.hosted:
                ruling = await self.door.reply("client", run, question, answer)
            else:
                ruling = self.door.reply_here("client", question, answer)
            if not question.is_open:
                return  # answered, or out of attempts
            if ruling is Ruling.ACKNOWLEDGES:
                # The person agreed to open our page; the answer comes when they submit it there.
                await question.wait()
                return


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
        # A run's first round records the run with its question (`store_run` then finds it recorded).
        run_ttl = None if run.stored else self.policy.run_record_ttl
        await self.records.save_pending(run, question, self.policy.wall_expiry(question), run_ttl)
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
