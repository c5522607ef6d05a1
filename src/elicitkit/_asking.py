"""One way every question is asked: through the hooks, the engine and the audit trail.

`elicit`, the one-field helpers, `elicit_url`, `secure_form` and `url_flow`
each build a question and say how an answer becomes the tool's result;
`Asking` does the rest, the same for all of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from mcp.server.context import ServerRequestContext

from elicitkit import _mcp
from elicitkit._audit import Audited, recording
from elicitkit._core.kinds import Answer, Mode, Stage, new_id
from elicitkit._engine.deadlines import now
from elicitkit._engine.engine import Engine
from elicitkit._engine.question import Asked, Question
from elicitkit._engine.records import QuestionRecord
from elicitkit._engine.run import Run
from elicitkit._engine.stages import StageEvent
from elicitkit._errors import InvalidElicitationContent
from elicitkit._helpers import FIELD
from elicitkit._hookdata import Ask, Outcome, QuestionInfo, Unchanged
from elicitkit._hooks import Hooks, pending
from elicitkit._mcp import ToolContext
from elicitkit._results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit._schema.compile import FormSchema, compile_schema
from elicitkit._timeouts import Timeout, check_message, check_seconds, seconds
from elicitkit.channels.base import Via

__all__ = ["Asking", "Convert"]

Convert = Callable[[Question, Answer], ElicitationResult[Any]]
"""Turns the answer to a question into the tool's result (it reads the question's final schema)."""


class Asking:
    """Every question's way: the server's defaults (timeout, channel), hooks, the engine, the audit trail."""

    def __init__(self, engine: Engine, hooks: Hooks, node: str, *, timeout: float | None, via: Via | None) -> None:
        self.engine = engine
        self.hooks = hooks
        self.stages = engine.stages
        self.stages.describe_record = lambda record, key: _record_info(record, key, node)
        self.node = node
        self.timeout = timeout
        """Seconds to wait unless a call says otherwise (None: no limit)."""
        self.via = via
        """Where questions go unless a call says otherwise (None: the MCP client)."""

    def limit(self, timeout: Timeout) -> float:
        """The seconds a call waits, its own `timeout` or the server's."""
        return seconds(timeout, self.timeout)

    def question_id(self, ctx: ToolContext, message: str, mode: Mode) -> str:
        """A new question's id: elicitkit's own, unless the `generate_id` stage is hooked."""
        stages = self.stages
        if not stages.ids_hooked:
            return new_id()
        return stages.new_id(message, mode, _mcp.principal(_mcp.request_context(ctx)))

    def destination(self, via: Via | None) -> Via | None:
        """Where a question goes: the call's channel, else the server's; one that was not added fails now."""
        chosen = via if via is not None else self.via
        if chosen is not None:
            self.engine.desk.channel(chosen)
        return chosen

    def form(
        self,
        ctx: ToolContext,
        message: str,
        schema: FormSchema,
        timeout: Timeout,
        *,
        unwrap: bool,
        via: Via | None = None,
        task: bool = False,
    ) -> Coroutine[Any, Any, ElicitationResult[Any]]:
        """Ask a form question (`unwrap`: a one-field helper's, whose `Accepted.data` is the bare value); await it.

        It drafts the question and hands back the asking to await, rather than awaiting it itself: a call waiting
        on a person keeps every coroutine frame between its tool body and the transport (some 350 bytes each).
        """
        check_message(message)
        limit = self.limit(timeout)
        question_id = new_id() if not self.stages.ids_hooked else self.question_id(ctx, message, "form")
        asked = Asked(question_id, message, schema, via=self.destination(via), task=task)
        question = Question(asked, now() + limit)
        convert = _field_result if unwrap else _result
        if self.watched():
            return self(ctx, question, limit, convert, rewritable=not unwrap)
        # Nobody watches: the asking itself is what the caller awaits.
        return self.engine.asker.ask(ctx, self.engine.current_run(), question, limit, convert)

    def watched(self) -> bool:
        """Whether anything hears of a question asked now: a hook, the validation stage, or the audit trail."""
        return self.hooks.active or self.stages.validation_hooked or recording()

    async def __call__(
        self,
        ctx: ToolContext,
        question: Question,
        limit: float,
        convert: Convert,
        *,
        rewritable: bool = False,
    ) -> ElicitationResult[Any]:
        """Ask `question`; `rewritable`: a `before_ask` hook may replace its schema (questions of `elicit`)."""
        run = self.engine.current_run()
        rctx = _mcp.request_context(ctx)  # read once: the SDK's Context makes every read cost microseconds
        if not self.watched():
            # Nobody watches: no hook, no validation stage, no audit trail (see `_audit`). Nothing to tell.
            return await self.engine.asker.ask(ctx, run, question, limit, convert, rctx)
        hooks = self.hooks if self.hooks.active else None
        one = _Exchange(self, ctx, rctx, question, limit, convert, hooks, rewritable, run)
        question.watch(one.watch)
        if self.stages.validation_hooked:
            question.validate_with(one.validate)
        trail = one.trail
        try:
            # The asking stays in this frame unless `around` hooks wrap it: the transport suspends many times
            # per question, and each suspension resumes every frame between the tool body and the transport.
            if hooks is None:
                result = await self.engine.asker.ask(ctx, run, question, limit, convert, rctx)
            elif hooks.has("around"):
                result = await hooks.around(one.describe(), one.steps)
            else:
                if hooks.has("before_ask"):
                    asked = hooks.before_ask(one.describe(), one.rewrite)
                    if pending(asked):
                        await asked
                result = await self.engine.asker.ask(ctx, run, question, one.limit, convert, rctx)
                if hooks.has("before_answer"):
                    reviewed = hooks.before_answer(one.describe(), result)
                    result = await reviewed if pending(reviewed) else reviewed
        except Exception as exc:
            await one.ended(Outcome(None, exc, trail.seconds))
            raise
        except BaseException as exc:
            # The call itself is being cancelled: record it, but run no observer in a cancelled task.
            one.ended_now(Outcome(None, exc, trail.seconds))
            raise
        await one.ended(Outcome(result, None, trail.seconds))
        return result


def _result(question: Question, answer: Answer, unwrap: bool = False) -> ElicitationResult[Any]:
    """What `elicit` returns for a form question's answer (`unwrap`: a one-field helper's, whose `Accepted.data`
    is the field's bare value)."""
    if answer.action == "accept":
        data = question.data_of(answer.content)
        return Accepted(data=data[FIELD] if unwrap else data, content=dict(answer.content), meta=answer.meta)
    if answer.action == "decline":
        return Declined(answer.reason, meta=answer.meta)
    return Cancelled(meta=answer.meta)


def _field_result(question: Question, answer: Answer) -> ElicitationResult[Any]:
    return _result(question, answer, unwrap=True)


class _Exchange:
    """One question on its way: what hooks and the audit trail are told about it, and how hooks change it."""

    __slots__ = (
        "asking",
        "convert",
        "ctx",
        "described",
        "hooks",
        "limit",
        "question",
        "rctx",
        "rewritable",
        "run",
        "trail",
    )

    def __init__(
        self,
        asking: Asking,
        ctx: ToolContext,
        rctx: ServerRequestContext[Any, Any],
        question: Question,
        limit: float,
        convert: Convert,
        hooks: Hooks | None,
        rewritable: bool,
        run: Run | None,
    ) -> None:
        self.asking = asking
        self.ctx = ctx
        self.rctx = rctx
        self.question = question
        self.limit = limit
        self.convert = convert
        self.hooks = hooks
        self.rewritable = rewritable
        self.run = run
        self.described: QuestionInfo | None = None
        self.trail = Audited(question, self.describe)

    def describe(self) -> QuestionInfo:
        """The question as hooks see it: a view that follows rewrites and the route the engine chooses."""
        info = self.described
        if info is None:
            run = self.run
            info = self.described = QuestionInfo(
                self.question,
                tool=run.tool if run is not None else None,
                run_id=run.id if run is not None and run.hosted else None,
                principal=_mcp.principal(self.rctx),
                node=self.asking.node,
                arguments=run.arguments if run is not None else None,
                ctx=self.ctx,
            )
        return info

    def ended_now(self, outcome: Outcome) -> None:
        """Record the outcome; drop the question's link back to this exchange (no cycle outlives it)."""
        self.trail.finish(outcome)
        self.question.watch(None)
        self.question.validate_with(None)

    async def ended(self, outcome: Outcome) -> None:
        """Record the outcome and tell the `after_answer` observers."""
        self.ended_now(outcome)
        hooks = self.hooks
        if hooks is not None and hooks.has("after_answer"):
            observing = hooks.observe("after_answer", self.describe(), outcome)
            if observing is not None:
                await observing

    def watch(self, question: Question, stage: Stage) -> Awaitable[None] | None:
        self.trail.reached(stage)
        if self.hooks is not None and self.hooks.has("after_ask"):
            return self.hooks.observe("after_ask", self.describe(), stage)
        return None

    def validate(self, content: Any, found: InvalidElicitationContent | None) -> InvalidElicitationContent | None:
        """The `validate` stage: its replacement rules on content the type holds; its watchers hear the verdict."""
        stages = self.asking.stages
        if found is None and stages.validator is not None:
            found = stages.validate(self.describe(), dict(content))
        if stages.watched("validate"):
            run_id = self.run.id if self.run is not None and self.run.hosted else None
            problems = () if found is None else tuple(found.problems)
            principal = _mcp.principal(self.rctx)
            stages.tell(StageEvent("validate", self.question.id, principal, run_id, problems=problems))
        return found

    def rewrite(self, current: QuestionInfo, ask: Ask) -> QuestionInfo:
        if ask.message is not None:
            check_message(ask.message)
        if ask.schema is not None and not self.rewritable:
            raise TypeError("only the schema of a form question asked with `elicit` can be rewritten")
        schema = None if ask.schema is None else compile_schema(ask.schema)
        if not isinstance(ask.timeout, Unchanged):
            check_seconds(ask.timeout, "Ask(timeout=...)")
            self.limit = seconds(ask.timeout, None)
            self.question.retime(now() + self.limit)
        self.question.reword(ask.message, schema)
        return self.describe()

    async def steps(self) -> ElicitationResult[Any]:
        """The question's way inside `around` hooks: `before_ask`, the asking, `before_answer`."""
        hooks = self.hooks
        assert hooks is not None
        asked = hooks.before_ask(self.describe(), self.rewrite)
        if pending(asked):
            await asked
        result = await self.asking.engine.asker.ask(
            self.ctx, self.run, self.question, self.limit, self.convert, self.rctx
        )
        reviewed = hooks.before_answer(self.describe(), result)
        return await reviewed if pending(reviewed) else reviewed


def _record_info(record: QuestionRecord, key: str, node: str) -> QuestionInfo:
    """A stored question as hooks see one (for the `validate` stage, when its run is not live here)."""
    asked = Asked(key, record.message, record.form(), mode=record.mode, secret_fields=record.secret)
    question = Question(asked, record.expires_at)
    return QuestionInfo(question, tool=record.tool, run_id=record.run_id, principal=record.principal, node=node)
