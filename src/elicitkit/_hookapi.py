"""Registering hooks on `Elicitation`: `@hitl.before_ask`, `@hitl.after_answer(tools={"deploy"})`, ...

Each decorator works bare or with filters, and returns the function unchanged.
Filters narrow which questions a hook sees: `tools` (the asking tool's name),
`modes` (`"form"`, `"url"`), `routes` (`"native"`, `"mrtr"`, `"llm"`,
`"handler"`; not for `around` and `before_ask`, which run before the route is
chosen), `when` (any predicate on the `QuestionInfo`), and for `after_ask` the
`stages` to be told of (`"stored"`, `"sent"`; both by default).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, TypeVar, overload

from elicitkit._core.kinds import Mode, RouteName, Stage
from elicitkit._hookdata import QuestionInfo
from elicitkit._hooks import HookPoint, Hooks

__all__ = ["HookMethods"]

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]


class HookMethods:
    """The hook decorators of `Elicitation`; see `elicitkit._hooks` for when each runs."""

    _hooks: Hooks

    def _register(self, point: HookPoint, fn: F | None, **filters: Any) -> F | Callable[[F], F]:
        def register(hook: F) -> F:
            self._hooks.add(point, hook, **filters)
            return hook

        return register if fn is None else register(fn)

    @overload
    def around(self, fn: F, /) -> F: ...
    @overload
    def around(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def around(self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, when: Any = None) -> Any:
        """`async (question, call_next) -> result`: wrap a whole question (`await call_next()` asks it)."""
        return self._register("around", fn, tools=tools, modes=modes, when=when)

    @overload
    def before_ask(self, fn: F, /) -> F: ...
    @overload
    def before_ask(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def before_ask(self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, when: Any = None) -> Any:
        """`(question) -> Ask | None`: rewrite the message or schema before it is asked; raise to veto."""
        return self._register("before_ask", fn, tools=tools, modes=modes, when=when)

    @overload
    def after_ask(self, fn: F, /) -> F: ...
    @overload
    def after_ask(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        stages: Collection[Stage] = (),
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def after_ask(
        self,
        fn: Any = None,
        /,
        *,
        tools: Any = None,
        modes: Any = None,
        routes: Any = None,
        stages: Any = (),
        when: Any = None,
    ) -> Any:
        """`(question, stage) -> None`: observe a question reaching a stage on its route (`question.route` is set)."""
        return self._register("after_ask", fn, tools=tools, modes=modes, routes=routes, stages=stages, when=when)

    @overload
    def before_answer(self, fn: F, /) -> F: ...
    @overload
    def before_answer(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def before_answer(
        self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, routes: Any = None, when: Any = None
    ) -> Any:
        """`(question, result) -> result | None`: rewrite or veto a validated answer before the tool sees it."""
        return self._register("before_answer", fn, tools=tools, modes=modes, routes=routes, when=when)

    @overload
    def after_answer(self, fn: F, /) -> F: ...
    @overload
    def after_answer(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def after_answer(
        self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, routes: Any = None, when: Any = None
    ) -> Any:
        """`(question, outcome) -> None`: observe what the tool got, a result or an error."""
        return self._register("after_answer", fn, tools=tools, modes=modes, routes=routes, when=when)
