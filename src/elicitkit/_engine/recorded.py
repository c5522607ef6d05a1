"""What a stored record says: a hosted run's (`RunRecord`) and a question's (`QuestionRecord`), as `Records` opens
them. A stored question can be ruled on like a live one (its schema, its mode, whether it follows a schema at all):
the door takes an answer for a question whose run is held nowhere by its record."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from elicitkit._core.kinds import Answer, Mode, RouteName
from elicitkit._errors import InvalidElicitationContent
from elicitkit._schema import FormSchema, compile_schema, problems_in

__all__ = ["QuestionRecord", "RunRecord"]


@dataclass(frozen=True, slots=True)
class RunRecord:
    tool: str
    arguments: dict[str, Any]
    mrtr: bool


@dataclass(frozen=True, slots=True)
class QuestionRecord:
    """A stored question: what was asked, where it went, and whose it is."""

    run_id: str
    seq: int
    digest: str
    message: str
    schema: dict[str, Any]
    route: RouteName
    principal: str | None
    mode: Mode = "form"
    secret: tuple[str, ...] = ()
    observable: bool = False
    """Completed by elicitkit's own page (the client's accept only acknowledges it)."""
    content_private: bool = False
    """Its answer is a third party's callback parameters, which follow no schema."""
    via: list[Any] | None = None
    """A channel question's destination (`Via.to_json`)."""
    ref: dict[str, Any] | None = None
    """A channel question's message, as its channel identifies it."""
    node: str | None = None
    """The node that asked (a channel question of a run that is not hosted lives only there)."""
    tool: str | None = None
    hosted: bool = True
    expires_at: float = 0.0

    def form(self) -> FormSchema:
        """Its schema as elicitkit reads and checks it (secret fields marked)."""
        return replace(compile_schema(self.schema), secret_fields=self.secret)

    @property
    def secret_fields(self) -> tuple[str, ...]:
        return self.secret

    @property
    def is_open(self) -> bool:
        """A stored question is open for as long as its record lives (the journal says whether it was answered)."""
        return True

    def problems(self, answer: Answer) -> InvalidElicitationContent | None:
        """Why an answer cannot be taken, checked against the stored schema."""
        return problems_in(compile_schema(self.schema), answer.action, answer.content)
