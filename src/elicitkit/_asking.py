"""One way every question is asked: through the hooks, the engine and the audit trail.

`elicit`, the one-field helpers, `elicit_url`, `secure_form` and `url_flow`
each build a question and say how an answer becomes the tool's result;
`Asking` does the rest, the same for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mcp.server.mcpserver import Context

from elicitkit import _mcp
from elicitkit._audit import Audit
from elicitkit._core.kinds import Answer, Stage
from elicitkit._engine.engine import Engine
from elicitkit._engine.run import Question
from elicitkit._hooks import Ask, Hooks, Outcome, QuestionInfo
from elicitkit._results import ElicitationResult
from elicitkit._schema.compile import compile_schema
from elicitkit._timeouts import check_message

__all__ = ["Asking", "Convert"]

Convert = Callable[[Question, Answer], ElicitationResult[Any]]
"""Turns the answer to a question into the tool's result (it reads the question's final schema)."""


class Asking:
    def __init__(self, engine: Engine, hooks: Hooks, audit: Audit, node: str) -> None:
        self.engine = engine
        self.hooks = hooks
        self.audit = audit
        self.node = node

    async def __call__(
        self,
        ctx: Context[Any, Any],
        question: Question,
        limit: float,
        convert: Convert,
        *,
        rewritable: bool = False,
    ) -> ElicitationResult[Any]:
        """Ask `question`; `rewritable`: a `before_ask` hook may replace its schema (questions of `elicit`)."""
        run = self.engine.current_run()
        info = QuestionInfo(
            id=question.id,
            message=question.message,
            schema=question.schema.wire,
            mode=question.mode,
            tool=run.tool if run is not None else None,
            run_id=run.id if run is not None and run.hosted else None,
            principal=_mcp.principal(_mcp.request_context(ctx)),
            node=self.node,
            secret_fields=question.secret_fields,
            ctx=ctx,
        )
        trail = self.audit.start(info)
        hooks = self.hooks if self.hooks.active else None
        latest = info

        async def watch(asked: Question, stage: Stage) -> None:
            nonlocal latest
            latest = replace(latest, route=asked.route)
            trail.reached(latest, stage)
            if hooks is not None:
                await hooks.asked(latest, stage)

        def rewrite(current: QuestionInfo, ask: Ask) -> QuestionInfo:
            nonlocal latest
            if ask.message is not None:
                check_message(ask.message)
                question.message = ask.message
            if ask.schema is not None:
                if not rewritable:
                    raise TypeError("only the schema of a form question asked with `elicit` can be rewritten")
                question.schema = compile_schema(ask.schema)
            latest = replace(current, message=question.message, schema=question.schema.wire)
            return latest

        async def asked(current: QuestionInfo) -> tuple[QuestionInfo, ElicitationResult[Any]]:
            nonlocal latest
            answer = await self.engine.ask(ctx, question, limit)
            latest = replace(current, route=question.route, replayed=question.replayed)
            return latest, convert(question, answer)

        question.watcher = watch
        try:
            if hooks is None:
                latest, result = await asked(info)
            else:
                latest, result = await hooks.exchange(info, asked, rewrite)
        except Exception as exc:
            outcome = Outcome(None, exc, trail.seconds)
            trail.finish(latest, outcome)
            if hooks is not None:
                await hooks.answered(latest, outcome)
            raise
        except BaseException as exc:
            # The call itself is being cancelled: record it, but run no observer in a cancelled task.
            trail.finish(latest, Outcome(None, exc, trail.seconds))
            raise
        outcome = Outcome(result, None, trail.seconds)
        trail.finish(latest, outcome)
        if hooks is not None:
            await hooks.answered(latest, outcome)
        return result
