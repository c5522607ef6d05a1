"""What hooks are handed: `QuestionInfo` (a question), `Ask` (a rewrite), `Outcome` (what the tool got)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from elicitkit._core.kinds import Mode, RouteName
from elicitkit._errors import ElicitationTimeout, ElicitationVetoed, InvalidElicitationContent
from elicitkit._results import ElicitationResult

__all__ = ["Ask", "Outcome", "OutcomeName", "QuestionInfo"]

OutcomeName = Literal["accept", "decline", "cancel", "timeout", "vetoed", "invalid", "error"]


@dataclass(frozen=True, slots=True, eq=False)
class QuestionInfo:
    """What a hook knows about a question; read-only to hooks (rewrite a question with `Ask`).

    It is one object per question: elicitkit fills in `route` once the question
    is put (and the message and schema after a `before_ask` rewrite), so a hook
    that keeps it sees the question as it stands.

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
        route: `"native"`, `"mrtr"`, `"llm"` or `"handler"`; None until the question is put.
        replayed: answered from the run's journal while the run was replayed.
        secret_fields: fields whose values are never shown (`SecretStr` on a secure form).
        ctx: the asking tool's `Context`, for a hook that asks a follow-up question itself.
    """

    id: str
    message: str
    schema: Mapping[str, Any]
    mode: Mode
    tool: str | None
    run_id: str | None
    principal: str | None
    node: str
    route: RouteName | None = None
    replayed: bool = False
    secret_fields: tuple[str, ...] = ()
    arguments: Mapping[str, Any] | None = field(default=None, repr=False)
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
