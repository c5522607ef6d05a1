"""What hooks are handed: `QuestionInfo` (a question), `Ask` (a rewrite), `Outcome` (what the tool got)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from elicitkit._core.kinds import Mode, RouteName
from elicitkit._engine.question import Question
from elicitkit._errors import ElicitationTimeout, ElicitationVetoed, InvalidElicitationContent
from elicitkit._results import ElicitationResult

__all__ = ["Ask", "Outcome", "OutcomeName", "QuestionInfo"]

OutcomeName = Literal["accept", "decline", "cancel", "timeout", "vetoed", "invalid", "error"]


class QuestionInfo:
    """What a hook knows about a question: a read-only view of it as it stands (rewrite a question with `Ask`).

    It is one object per question, and it reads the question itself: the route
    once the question is put, the message and schema after a `before_ask`
    rewrite, so a hook that keeps it sees the question as it stands.

    Attributes:
        id: the question's id (`elicitationId` / input-request key on the wire).
        message: the question as the person reads it.
        schema: the `requestedSchema` (no properties for a plain link); a read-only view.
        mode: `"form"` or `"url"`.
        tool: the tool that asks (None outside a tool call elicitkit saw).
        arguments: the arguments that tool was called with, a read-only view (None outside a tool call
            elicitkit saw). Nested values are shared with the run: never change them.
        run_id: the run, which may span several requests (None for a run that is not journaled).
        principal: the authenticated caller, as the SDK reports it.
        node: this node's id.
        route: `"native"`, `"mrtr"`, `"llm"`, `"app"`, `"handler"` or `"channel"`; None until the question is put.
        replayed: answered from the run's journal while the run was replayed.
        secret_fields: fields whose values are never shown (`SecretStr` on a secure form).
        ctx: the asking tool's `Context`, for a hook that asks a follow-up question itself.
    """

    __slots__ = ("_arguments", "_ctx", "_node", "_principal", "_question", "_run_id", "_schema", "_tool", "_wire")

    def __init__(
        self,
        question: Question,
        *,
        tool: str | None,
        run_id: str | None,
        principal: str | None,
        node: str,
        arguments: Mapping[str, Any] | None = None,
        ctx: Any = None,
    ) -> None:
        self._question = question
        self._tool = tool
        self._run_id = run_id
        self._principal = principal
        self._node = node
        self._arguments = None if arguments is None else MappingProxyType(arguments)
        self._ctx = ctx
        self._wire: dict[str, Any] | None = None
        self._schema: Mapping[str, Any] = MappingProxyType({})

    @property
    def id(self) -> str:
        return self._question.id

    @property
    def message(self) -> str:
        return self._question.message

    @property
    def schema(self) -> Mapping[str, Any]:
        wire = self._question.schema.wire
        if wire is not self._wire:  # one view per schema: a rewrite gets a new one
            self._wire, self._schema = wire, MappingProxyType(wire)
        return self._schema

    @property
    def mode(self) -> Mode:
        return self._question.mode

    @property
    def tool(self) -> str | None:
        return self._tool

    @property
    def arguments(self) -> Mapping[str, Any] | None:
        return self._arguments

    @property
    def run_id(self) -> str | None:
        return self._run_id

    @property
    def principal(self) -> str | None:
        return self._principal

    @property
    def node(self) -> str:
        return self._node

    @property
    def route(self) -> RouteName | None:
        return self._question.route

    @property
    def replayed(self) -> bool:
        return self._question.replayed

    @property
    def secret_fields(self) -> tuple[str, ...]:
        return self._question.secret_fields

    @property
    def ctx(self) -> Any:
        return self._ctx

    def __repr__(self) -> str:
        return (
            f"QuestionInfo(id={self.id!r}, message={self.message!r}, mode={self.mode!r}, tool={self.tool!r}, "
            f"run_id={self.run_id!r}, principal={self.principal!r}, node={self.node!r}, route={self.route!r}, "
            f"replayed={self.replayed!r}, secret_fields={self.secret_fields!r})"
        )


class Unchanged(enum.Enum):
    """The type of `Ask.timeout`'s default: the question keeps the time it was asked with."""

    TIMEOUT = "the question's own timeout"

    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED = Unchanged.TIMEOUT


@dataclass(frozen=True, slots=True)
class Ask:
    """What a `before_ask` hook asks instead: a new message, a new schema (form questions of `elicit`), a new
    timeout, or any of them together.

    Attributes:
        timeout: seconds the person has from now (None: no limit); left out, the question keeps its own.
    """

    message: str | None = None
    schema: Any = None
    timeout: float | Unchanged | None = UNCHANGED


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
