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
| `before_ask` | `(question)` | return `Ask(message=, schema=, timeout=)` to rewrite the question; raise to veto |
| `after_ask` | `(question, stage)`: `"stored"`, then `"sent"` | observe (the route is known from here on) |
| `before_answer` | `(question, result)` | return another result (`Declined(reason=...)`); raise to withhold it |
| `after_answer` | `(question, outcome)` | observe what the tool got: a result or an error (timeout, veto, ...) |

Hooks of one point run in the order they were registered; each `before_*`
hook sees what the previous one made of the question or result. Hooks run in
the tool body's own task, on the node that holds the run, so every route (the
client's form, a 2026-07-28 retry, the model fallback, a handler, elicitkit's
pages) reaches the same points. When a run is replayed from its journal its
questions are not asked again (no `after_ask`), but the other points run
again (from `before_answer` on, `question.replayed` says so), so a rewrite or
veto holds on every replay.

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
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from typing_extensions import TypeIs

from elicitkit._core.kinds import Mode, RouteName, Stage
from elicitkit._errors import ElicitationError, ElicitationVetoed
from elicitkit._hookdata import Ask, QuestionInfo
from elicitkit._results import ElicitationResult

__all__ = ["HookPoint", "Hooks", "pending"]

logger = logging.getLogger("elicitkit")

HookPoint = Literal["around", "before_ask", "after_ask", "before_answer", "after_answer"]

_inside_hook: ContextVar[bool] = ContextVar("elicitkit_inside_hook", default=False)
_VETO_POINTS: frozenset[HookPoint] = frozenset({"around", "before_ask", "before_answer"})
_PASSING = "_elicitkit_from_call_next"
"""Marks an exception that the asking itself raised, on its way out through `around` hooks."""


@dataclass(frozen=True, slots=True)
class _Hook:
    fn: Callable[..., Any]
    is_async: bool
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


def pending(value: object) -> TypeIs[Awaitable[Any]]:
    """Whether a hook's (or a hook stage's) return is something to await; cheaper than `inspect.isawaitable`."""
    return value is not None and hasattr(value, "__await__")


def _invoke(hook: _Hook, *args: Any) -> Any:
    """Call a hook: its result, or (for an async hook) an awaitable of it.

    What an async hook asks while it runs runs no hooks itself. A sync hook
    cannot ask (asking is awaited), so it is called as it is, with nothing to await.
    """
    if hook.is_async:
        return _guarded(hook.fn(*args))
    result = hook.fn(*args)
    return _guarded(result) if pending(result) else result


async def _guarded(started: Awaitable[Any]) -> Any:
    token = _inside_hook.set(True)
    try:
        return await started
    finally:
        _inside_hook.reset(token)


async def _call(hook: _Hook, *args: Any) -> Any:
    result = _invoke(hook, *args)
    return await result if pending(result) else result


def _vetoed(hook: _Hook, point: HookPoint, exc: Exception) -> ElicitationVetoed:
    """A hook that may veto broke: log it, and fail closed with a reason that gives nothing away."""
    logger.error("elicitkit: %s hook %s failed, so it fails closed", point, hook.name, exc_info=exc)
    what = "the question was not asked" if point == "before_ask" else "the answer was withheld"
    return ElicitationVetoed(f"A policy check failed, so {what}")


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
        self._unfiltered: set[HookPoint] = set(self._hooks)
        """Points whose hooks all see every question (no filter to check)."""

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
        if when is not None and (inspect.iscoroutinefunction(when) or not callable(when)):
            raise TypeError("when= takes a plain (not async) function of the question, returning True or False")
        if tools is not None or modes is not None or routes is not None or when is not None:
            self._unfiltered.discard(point)
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        self._hooks[point].append(
            _Hook(
                fn,
                is_async,
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
        hooks = self._hooks[point]
        if point in self._unfiltered:
            return hooks
        wanted = []
        for hook in hooks:
            try:
                if hook.wants(question):
                    wanted.append(hook)
            except Exception as exc:
                # A broken filter is a broken hook: it fails closed where a hook may veto, else it is skipped.
                if point in _VETO_POINTS:
                    raise _vetoed(hook, point, exc) from exc
                _observer_failed(point, hook)
        return wanted

    def has(self, point: HookPoint) -> bool:
        """Whether any hook is registered at `point` (filters aside)."""
        return bool(self._hooks[point])

    async def around(self, question: QuestionInfo, inner: Callable[[], Awaitable[ElicitationResult[Any]]]) -> Any:
        """Run `inner` (the rest of the question's way) inside every `around` hook, first registered outermost."""
        call_next = inner
        for hook in reversed(self._for("around", question)):
            call_next = self._wrap(hook, call_next, question)
        return await call_next()

    def _wrap(
        self, hook: _Hook, call_next: Callable[[], Awaitable[ElicitationResult[Any]]], question: QuestionInfo
    ) -> Callable[[], Awaitable[ElicitationResult[Any]]]:
        calls = 0

        async def inner() -> ElicitationResult[Any]:
            nonlocal calls
            calls += 1
            if calls > 1:  # the hook's mistake, so not marked as passing through: it fails closed
                raise RuntimeError("call_next() was called twice: an around hook asks its question once")
            try:
                return await call_next()
            except BaseException as exc:
                # What the rest of the way raised passes through this hook unchanged: it is not the hook's fault.
                with suppress(AttributeError):
                    setattr(exc, _PASSING, True)
                raise

        async def wrapped() -> ElicitationResult[Any]:
            try:
                result = await _call(hook, question, inner)
            except ElicitationError:
                raise
            except Exception as exc:
                if getattr(exc, _PASSING, False):
                    raise
                raise _vetoed(hook, "around", exc) from exc
            return _replacement(hook, result, None, "around")

        return wrapped

    def before_ask(self, question: QuestionInfo, rewrite: Rewrite) -> Awaitable[QuestionInfo] | QuestionInfo:
        """Run the `before_ask` hooks: the question as they left it (`rewrite` applies an `Ask`).

        Sync hooks run now; from the first async one on, the rest is returned to be awaited.
        """
        hooks = self._for("before_ask", question)
        for i, hook in enumerate(hooks):
            asks = self._checked(hook, "before_ask", question)
            if pending(asks):
                return self._before_ask_rest(hook, asks, hooks[i + 1 :], question, rewrite)
            question = self._rewrite(hook, asks, question, rewrite)
        return question

    async def _before_ask_rest(
        self, hook: _Hook, started: Awaitable[Any], rest: list[_Hook], question: QuestionInfo, rewrite: Rewrite
    ) -> QuestionInfo:
        question = self._rewrite(hook, await self._settled(hook, "before_ask", started), question, rewrite)
        for later in rest:
            asks = self._checked(later, "before_ask", question)
            if pending(asks):
                asks = await self._settled(later, "before_ask", asks)
            question = self._rewrite(later, asks, question, rewrite)
        return question

    @staticmethod
    def _rewrite(hook: _Hook, asks: Any, question: QuestionInfo, rewrite: Rewrite) -> QuestionInfo:
        if asks is None:
            return question
        try:
            if not isinstance(asks, Ask):
                raise TypeError(f"a before_ask hook returns Ask(...) or None, not {type(asks).__name__}")
            return rewrite(question, asks)
        except ElicitationError:
            raise
        except Exception as exc:
            raise _vetoed(hook, "before_ask", exc) from exc

    def before_answer(
        self, question: QuestionInfo, result: ElicitationResult[Any]
    ) -> Awaitable[ElicitationResult[Any]] | ElicitationResult[Any]:
        """Run the `before_answer` hooks: the result as they left it.

        Sync hooks run now; from the first async one on, the rest is returned to be awaited.
        """
        hooks = self._for("before_answer", question)
        for i, hook in enumerate(hooks):
            replaced = self._checked(hook, "before_answer", question, result)
            if pending(replaced):
                return self._before_answer_rest(hook, replaced, hooks[i + 1 :], question, result)
            result = _replacement(hook, replaced, result)
        return result

    async def _before_answer_rest(
        self,
        hook: _Hook,
        started: Awaitable[Any],
        rest: list[_Hook],
        question: QuestionInfo,
        result: ElicitationResult[Any],
    ) -> ElicitationResult[Any]:
        result = _replacement(hook, await self._settled(hook, "before_answer", started), result)
        for later in rest:
            replaced = self._checked(later, "before_answer", question, result)
            if pending(replaced):
                replaced = await self._settled(later, "before_answer", replaced)
            result = _replacement(later, replaced, result)
        return result

    @staticmethod
    def _checked(hook: _Hook, point: HookPoint, *args: Any) -> Any:
        """Call a hook that may veto: any failure fails closed."""
        try:
            return _invoke(hook, *args)
        except ElicitationError:
            raise
        except Exception as exc:
            raise _vetoed(hook, point, exc) from exc

    @staticmethod
    async def _settled(hook: _Hook, point: HookPoint, started: Awaitable[Any]) -> Any:
        try:
            return await started
        except ElicitationError:
            raise
        except Exception as exc:
            raise _vetoed(hook, point, exc) from exc

    def observe(self, point: HookPoint, question: QuestionInfo, *args: Any) -> Awaitable[None] | None:
        """Tell the `after_ask` (args: stage) or `after_answer` (args: outcome) observers, in order.

        Sync observers run now; from the first async one on, the rest is returned to be awaited.
        An observer that raises is logged and skipped: observers never change the outcome.
        """
        hooks = self._for(point, question)
        for i, hook in enumerate(hooks):
            if hook.stages and args[0] not in hook.stages:
                continue
            try:
                result = _invoke(hook, question, *args)
            except Exception:
                _observer_failed(point, hook)
                continue
            if pending(result):
                return _observe_rest(point, hook, result, hooks[i + 1 :], question, args)
        return None


async def _observe_rest(
    point: HookPoint,
    hook: _Hook,
    started: Awaitable[Any],
    rest: list[_Hook],
    question: QuestionInfo,
    args: tuple[Any, ...],
) -> None:
    try:
        await started
    except Exception:
        _observer_failed(point, hook)
    for later in rest:
        if later.stages and args[0] not in later.stages:
            continue
        try:
            result = _invoke(later, question, *args)
            if pending(result):
                await result
        except Exception:
            _observer_failed(point, later)


def _replacement(
    hook: _Hook, replaced: Any, result: ElicitationResult[Any] | None, point: HookPoint = "before_answer"
) -> ElicitationResult[Any]:
    """What a hook hands back instead of `result` (None keeps it); anything but a result fails closed."""
    if replaced is None and result is not None:
        return result
    if getattr(replaced, "action", None) not in ("accept", "decline", "cancel"):
        allowed = "Accepted, Declined, Cancelled or None" if result is not None else "the result of call_next()"
        exc = TypeError(f"the {point} hook must return {allowed}, not {replaced!r}")
        raise _vetoed(hook, point, exc) from exc
    new: ElicitationResult[Any] = replaced
    return new


def _observer_failed(point: HookPoint, hook: _Hook) -> None:
    logger.exception("elicitkit: %s hook %s failed; ignored (observers never change the outcome)", point, hook.name)
