"""The outcomes of an elicitation, as data: `Accepted[T]`, `Declined`, `Cancelled`.

```python
match await hitl.elicit(ctx, "Deploy?", Approval):
    case Accepted(data=Approval(approved=True)): ...
    case Declined() | Cancelled(): ...
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

__all__ = ["Accepted", "Cancelled", "Declined", "ElicitationResult", "Status"]

Status: TypeAlias = Literal["accept", "decline", "cancel"]
"""What the person did: the wire's `action`, also each result's `.status` (FrontMCP's name)."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Accepted(Generic[T]):
    """The person answered.

    Attributes:
        data: the validated answer: an instance of the model, dataclass or
            TypedDict asked with, the single value for a helper such as
            `confirm`, or a dict for a raw schema.
        content: the answer exactly as it arrived on the wire.
        meta: the `_meta` of the client's reply, when it carried one (not part of the answer: results compare
            equal, and print, without it).
    """

    data: T
    content: dict[str, Any] = field(default_factory=dict[str, Any])
    action: Literal["accept"] = "accept"
    meta: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> Literal["accept"]:
        """`"accept"`, the same as `action` (FrontMCP's name for it)."""
        return self.action


@dataclass(frozen=True, slots=True)
class Declined:
    """The person explicitly said no, or a `before_answer` hook turned their answer into a no.

    Attributes:
        reason: why: what the person wrote when declining on a channel (Slack, Discord, Teams), or what a hook
            that declined on their behalf gave; None when nobody said.
        meta: the `_meta` of the client's reply, when it carried one (results compare equal, and print, without it).
    """

    reason: str | None = None
    action: Literal["decline"] = "decline"
    meta: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> Literal["decline"]:
        """`"decline"`, the same as `action` (FrontMCP's name for it)."""
        return self.action


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The person dismissed the question without choosing, or it was withdrawn.

    Attributes:
        meta: the `_meta` of the client's reply, when it carried one (results compare equal, and print, without it).
    """

    action: Literal["cancel"] = "cancel"
    meta: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> Literal["cancel"]:
        """`"cancel"`, the same as `action` (FrontMCP's name for it)."""
        return self.action


ElicitationResult: TypeAlias = Accepted[T] | Declined | Cancelled
"""What `elicit` and its helpers return: `Accepted[T]` (the answer in `.data`), `Declined` or `Cancelled`."""
