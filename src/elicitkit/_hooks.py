"""Hooks: see and shape every question and answer, on every route and both protocol eras.

```python
@hitl.before_ask
def ticket_required(question: QuestionInfo) -> Ask | None:
    if "prod" in question.message and not has_ticket(question.principal):
        raise ElicitationVetoed("Production deploys need a change ticket")
    return None

@hitl.after_answer
def record(question: QuestionInfo, outcome: Outcome) -> None:
    log.info("%s answered %s", question.principal, outcome.name)
```

One question passes these points, in this order:

| point | called with | may |
| --- | --- | --- |
| `around` | `(question, call_next)` | wrap all below (`await call_next()` is the result); first is outermost |
| `before_ask` | `(question)` | return `Ask(message=..., schema=...)` to rewrite the question; raise to veto |
| `after_ask` | `(question, stage)`: `"stored"`, then `"sent"` | observe (the route is known from here on) |
| `before_answer` | `(question, result)` | return another result (`Declined(reason=...)`); raise to withhold it |
| `after_answer` | `(question, outcome)` | observe what the tool got: a result or an error (timeout, veto, ...) |

Hooks of one point run in the order they were registered; each `before_*`
hook sees what the previous one made of the question or result. Hooks run in
the tool body's own task, on the node that holds the run, so every route (the
client's form, a 2026-07-28 retry, the model fallback, a handler, elicitkit's
pages) reaches the same points. When a run is replayed from its journal its
questions are not asked again (no `after_ask`), but `before_ask`,
`before_answer` and `after_answer` run again (`question.replayed` says so), so
a rewrite or veto holds on every replay.

A `before_*` or `around` hook that raises fails closed: `ElicitationVetoed`
raised on purpose reaches the tool (and the model) with its reason; any other
exception is logged and becomes `ElicitationVetoed` with a generic reason. An
observer (`after_*`) that raises is logged and ignored: it never loses an
answer. A hook may itself ask (a second approver: `await hitl.elicit(...)`);
hooks do not run for questions asked from inside a hook.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from elicitkit._core.kinds import Mode, RouteName, Stage
from elicitkit._errors import ElicitationError, ElicitationTimeout, ElicitationVetoed, InvalidElicitationContent
from elicitkit._results import ElicitationResult

__all__ = ["Ask", "HookPoint", "Hooks", "Outcome", "QuestionInfo"]

logger = logging.getLogger("elicitkit")

HookPoint = Literal["around", "before_ask", "after_ask", "before_answer", "after_answer"]
OutcomeName = Literal["accept", "decline", "cancel", "timeout", "vetoed", "invalid", "error"]

_inside_hook: ContextVar[bool] = ContextVar("elicitkit_inside_hook", default=False)


@dataclass(frozen=True, slots=True)
class QuestionInfo:
    """What a hook knows about a question.

    Attributes:
        id: the question's id (`elicitationId` / input-request key on the wire).
        message: the question as the person reads it.
        schema: the `requestedSchema` (no properties for a plain link).
        mode: `"form"` or `"url"`.
        tool: the tool that asks (None outside a tool call elicitkit saw).
        run_id: the run, which may span several requests (None for a run that is not journaled).
        principal: the authenticated caller, as the SDK reports it.
        node: this node's id.
        route: `"native"`, `"mrtr"`, `"llm"` or `"handler"`; None until the question is put.
        replayed: answered from the run's journal while the run was replayed.
        secret_fields: fields whose values are never shown (`SecretStr` on a secure form).
        ctx: the asking tool's `Context`, for a hook that asks a follow-up question itself.
    """

    id: str
    message: str
    schema: dict[str, Any]
    mode: Mode
    tool: str | None
    run_id: str | None
    principal: str | None
    node: str
    route: RouteName | None = None
    replayed: bool = False
    secret_fields: tuple[str, ...] = ()
    ctx: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Ask:
    """What a `before_ask` hook asks instead: a new message, a new schema (form questions of `elicit`), or both."""

    message: str | None = None
    schema: Any = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the tool got from one question: a result, or the error `elicit` raised.

    Attributes:
        result: `Accepted`, `Declined` or `Cancelled`; None when the tool got an error.
        error: the exception (`ElicitationTimeout`, `ElicitationVetoed`, ...), or None.
        seconds: from the question being built to this outcome.
    """

    result: ElicitationResult[Any] | None
    error: BaseException | None
    seconds: float

    @property
    def name(self) -> OutcomeName:
        """`accept`, `decline`, `cancel`, `timeout`, `vetoed`, `invalid` (out of attempts) or `error`."""
        if self.result is not None:
            return self.result.action
        if isinstance(self.error, ElicitationTimeout):
            return "timeout"
        if isinstance(self.error, ElicitationVetoed):
            return "vetoed"
        if isinstance(self.error, InvalidElicitationContent):
            return "invalid"
        return "error"


@dataclass(frozen=True, slots=True)
class _Hook:
    fn: Callable[..., Any]
    tools: frozenset[str] | None = None
    modes: frozenset[str] | None = None
    routes: frozenset[str] | None = None
    stages: frozenset[str] = field(default_factory=frozenset)
    when: Callable[[QuestionInfo], bool] | None = None

    def wants(self, question: QuestionInfo) -> bool:
        return (
            (self.tools is None or question.tool in self.tools)
            and (self.modes is None or question.mode in self.modes)
            and (self.routes is None or question.route in self.routes)
            and (self.when is None or self.when(question))
        )

    @property
    def name(self) -> str:
        return getattr(self.fn, "__qualname__", repr(self.fn))


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    token = _inside_hook.set(True)
    try:
        result = fn(*args)
        return await result if inspect.isawaitable(result) else result
    finally:
        _inside_hook.reset(token)


def _vetoed(hook: _Hook, point: HookPoint, exc: Exception) -> ElicitationVetoed:
    """A hook that may veto broke: log it, and fail closed with a reason that gives nothing away."""
    logger.error("elicitkit: %s hook %s failed, so it fails closed", point, hook.name, exc_info=exc)
    what = "the question was not asked" if point == "before_ask" else "the answer was withheld"
    return ElicitationVetoed(f"A policy check failed, so {what}")


Asked = Callable[[QuestionInfo], Awaitable[tuple[QuestionInfo, ElicitationResult[Any]]]]
"""Puts the (possibly rewritten) question and returns it as it was put (route known) with the tool's result."""

Rewrite = Callable[[QuestionInfo, Ask], QuestionInfo]
"""Applies a `before_ask` hook's `Ask` to the question (the caller knows what kind of question it is)."""


class Hooks:
    """The hooks registered on one `Elicitation`, and the order they run in."""

    def __init__(self) -> None:
        self._hooks: dict[HookPoint, list[_Hook]] = {
            "around": [],
            "before_ask": [],
            "after_ask": [],
            "before_answer": [],
            "after_answer": [],
        }

    def add(
        self,
        point: HookPoint,
        fn: Callable[..., Any],
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        stages: Collection[Stage] = (),
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a {point} hook must be callable, not {fn!r}")
        if routes is not None and point in ("around", "before_ask"):
            raise ValueError(f"{point} hooks run before the route is chosen, so they cannot filter by route")
        for name, values in (("tools", tools), ("modes", modes), ("routes", routes)):
            if isinstance(values, str):
                raise TypeError(f"{name}= takes a collection of names, not the string {values!r}")
        self._hooks[point].append(
            _Hook(
                fn,
                frozenset(tools) if tools is not None else None,
                frozenset(modes) if modes is not None else None,
                frozenset(routes) if routes is not None else None,
                frozenset(stages),
                when,
            )
        )

    @property
    def active(self) -> bool:
        """Whether any hook applies here (none do to questions asked from inside a hook)."""
        return not _inside_hook.get() and any(self._hooks.values())

    def _for(self, point: HookPoint, question: QuestionInfo) -> list[_Hook]:
        return [hook for hook in self._hooks[point] if hook.wants(question)]

    async def exchange(
        self, question: QuestionInfo, asked: Asked, rewrite: Rewrite
    ) -> tuple[QuestionInfo, ElicitationResult[Any]]:
        """Run one question through `around`, `before_ask`, the asking itself and `before_answer`.

        Returns the question as it was finally put, and the result for the tool.
        """
        final = question

        async def core() -> ElicitationResult[Any]:
            nonlocal final
            final, result = await asked(await self._before_ask(question, rewrite))
            return await self._before_answer(final, result)

        call_next: Callable[[], Awaitable[ElicitationResult[Any]]] = core
        for hook in reversed(self._for("around", question)):
            call_next = self._wrap(hook, call_next, question)
        result = await call_next()
        return final, result

    def _wrap(
        self, hook: _Hook, call_next: Callable[[], Awaitable[ElicitationResult[Any]]], question: QuestionInfo
    ) -> Callable[[], Awaitable[ElicitationResult[Any]]]:
        async def wrapped() -> ElicitationResult[Any]:
            try:
                result: ElicitationResult[Any] = await _call(hook.fn, question, call_next)
            except ElicitationError:
                raise
            except Exception as exc:
                raise _vetoed(hook, "around", exc) from exc
            return result

        return wrapped

    async def _before_ask(self, question: QuestionInfo, rewrite: Rewrite) -> QuestionInfo:
        for hook in self._for("before_ask", question):
            try:
                asks = await _call(hook.fn, question)
                if asks is not None and not isinstance(asks, Ask):
                    raise TypeError(f"a before_ask hook returns Ask(...) or None, not {type(asks).__name__}")
                if asks is not None:
                    question = rewrite(question, asks)
            except ElicitationError:
                raise
            except Exception as exc:
                raise _vetoed(hook, "before_ask", exc) from exc
        return question

    async def _before_answer(self, question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any]:
        for hook in self._for("before_answer", question):
            try:
                replaced = await _call(hook.fn, question, result)
                if replaced is not None and getattr(replaced, "action", None) not in ("accept", "decline", "cancel"):
                    raise TypeError(
                        f"a before_answer hook returns Accepted, Declined, Cancelled or None, not {replaced!r}"
                    )
            except ElicitationError:
                raise
            except Exception as exc:
                raise _vetoed(hook, "before_answer", exc) from exc
            if replaced is not None:
                result = replaced
        return result

    async def asked(self, question: QuestionInfo, stage: Stage) -> None:
        """Tell `after_ask` observers that the question reached `stage` on its route."""
        for hook in self._for("after_ask", question):
            if not hook.stages or stage in hook.stages:
                await _observe(hook, "after_ask", question, stage)

    async def answered(self, question: QuestionInfo, outcome: Outcome) -> None:
        """Tell `after_answer` observers what the tool got."""
        for hook in self._for("after_answer", question):
            await _observe(hook, "after_answer", question, outcome)


async def _observe(hook: _Hook, point: HookPoint, *args: Any) -> None:
    try:
        await _call(hook.fn, *args)
    except Exception:
        logger.exception("elicitkit: %s hook %s failed; ignored (observers never change the outcome)", point, hook.name)
