"""The words of the domain: modes, routes, actions, and the states a question and a run go through."""

from __future__ import annotations

import base64
import enum
import os
import re
from typing import Any, Literal, NamedTuple

__all__ = [
    "ACTIONS",
    "BY_ANSWER_TOOL",
    "BY_LATER_REQUEST",
    "EXPIRES_AT_META",
    "MAX_REASON",
    "Action",
    "Answer",
    "Hosting",
    "Mode",
    "QuestionState",
    "RouteName",
    "Stage",
    "decline_reason",
    "is_id",
    "new_id",
]

EXPIRES_AT_META = "elicitkit/expiresAt"
"""The `_meta` key of an `elicitation/create` request saying when the server stops waiting for its answer (epoch
milliseconds), so a client can show the deadline counting down and close the question when it passes."""

Mode = Literal["form", "url"]
"""How a question is shown: a form the client renders, or a link the person opens."""

RouteName = Literal["native", "mrtr", "llm", "app", "handler", "channel"]
"""How a question reaches the person: 2025-11-25 `elicitation/create`, 2026-07-28 `InputRequiredResult`,
the model (fallback tool), elicitkit's form inside the chat (an MCP Apps view, which answers through the
fallback tool), the server's own fallback handler, or a human channel (web inbox, Slack, ...)."""

BY_ANSWER_TOOL: frozenset[RouteName] = frozenset({"llm", "app"})
"""The routes whose questions ride a tool result and are answered through the fallback tool (`sendElicitationResult`),
by the model or by elicitkit's view in the chat."""
BY_LATER_REQUEST: frozenset[RouteName] = frozenset({"mrtr", "llm", "app"})
"""The routes whose questions a later request answers (a retry, the fallback tool): stored as records meanwhile."""

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


class Answer(NamedTuple):
    """A person's reply as it came off the wire: action plus optional content, the reply's `_meta`, and why,
    for a decline. (A named tuple: immutable, and made without a frozen dataclass's four `object.__setattr__`
    calls, once for every answer.)"""

    action: str
    content: Any = None
    meta: Any = None
    """The `_meta` of the client's reply (an `ElicitResult`'s), when it carried one."""
    reason: str | None = None
    """What the person said when declining on a channel (None: they gave no reason)."""


MAX_REASON = 1_000
"""Characters a decline's reason may have: it is read by the tool, an agent, and shown in a chat message."""


def decline_reason(given: Any) -> str | None:
    """A decline's reason as it is kept: surrounding whitespace dropped, None when nothing is left.

    Raises:
        ValueError: it is not text, is longer than `MAX_REASON`, or holds a lone surrogate (says why).
    """
    if given is None:
        return None
    if not isinstance(given, str):
        raise ValueError("A reason for declining must be text")
    reason = given.strip()
    if len(reason) > MAX_REASON:
        raise ValueError(f"A reason for declining may have at most {MAX_REASON:,} characters, not {len(reason):,}")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("A reason for declining must be Unicode text: it has a lone surrogate") from None
    return reason or None


_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


_IDS_PER_READ = 128
_ids: list[str] = []  # read from the random source, not yet handed out
os.register_at_fork(after_in_child=_ids.clear)


def new_id() -> str:
    """A new id: 22 URL-safe characters, 132 random bits from the operating system's random source.

    The source is read for 128 ids at a time: each read is a system call, which cost a question more than the
    rest of making its id. A forked child drops the ids its parent read and not yet handed out."""
    try:
        return _ids.pop()
    except IndexError:
        # 33 bytes to every 44 characters, no padding: each character is one of 64, uniformly random.
        text = base64.urlsafe_b64encode(os.urandom(33 * _IDS_PER_READ // 2)).decode()
        _ids.extend(text[i : i + 22] for i in range(0, len(text), 22))
        return _ids.pop()


def is_id(text: object) -> bool:
    """Whether `text` can be one of elicitkit's ids (runs, questions, tasks): 1 to 128 letters, digits, `-` and
    `_`. Anything else that arrives as an id is unknown, without asking the store."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None
