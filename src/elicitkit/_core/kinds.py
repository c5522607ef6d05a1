"""The words of the domain: modes, routes, actions, and the states a question and a run go through."""

from __future__ import annotations

import enum
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ACTIONS",
    "Action",
    "Answer",
    "Hosting",
    "Mode",
    "QuestionState",
    "RouteName",
    "Stage",
    "is_id",
    "new_id",
]

Mode = Literal["form", "url"]
"""How a question is shown: a form the client renders, or a link the person opens."""

RouteName = Literal["native", "mrtr", "llm", "handler", "channel"]
"""How a question reaches the person: 2025-11-25 `elicitation/create`, 2026-07-28 `InputRequiredResult`,
the model (fallback tool), the server's own fallback handler, or a human channel (web inbox, Slack, ...)."""

Stage = Literal["stored", "sent"]
"""How far a question has gone on its route: persisted for another request or node to answer, and put to the
person (the request sent, or handed to the request that returns it)."""

Action = Literal["accept", "decline", "cancel"]
ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")


class QuestionState(enum.Enum):
    OPEN = "open"
    """Asked, no reply yet."""
    ACKNOWLEDGED = "acknowledged"
    """The client accepted a link to one of elicitkit's pages; the page will carry the answer."""
    ANSWERED = "answered"


class Hosting(enum.Enum):
    """Where a tool body runs."""

    INLINE = "inline"
    """Inside its own request (a 2025-11-25 client that shows forms): nothing is stored."""
    HOSTED = "hosted"
    """In a task of its own, journaled, outliving requests (MRTR, the model fallback, replay)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's reply as it came off the wire: action plus optional content, and the reply's `_meta`."""

    action: str
    content: Any = None
    meta: Any = None
    """The `_meta` of the client's reply (an `ElicitResult`'s), when it carried one."""


_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def new_id() -> str:
    """128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def is_id(text: object) -> bool:
    """Whether `text` can be one of elicitkit's ids (runs, questions, tasks): 1 to 128 letters, digits, `-` and
    `_`. Anything else that arrives as an id is unknown, without asking the store."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None
