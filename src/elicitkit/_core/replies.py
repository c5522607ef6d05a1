"""What a reply does to a question: the one decision every answer goes through, wherever it arrives.

An answer comes from one of seven sources: the client's reply to a native
`elicitation/create` (`client`), the server's own fallback handler
(`handler`), a 2026-07-28 retry (`retry`), the model through the fallback tool
(`model`), a `tasks/update` (`task`), one of elicitkit's pages (`page`), or a
human channel (`channel`). Each may answer only the questions put on its way
(`accepts`); what the reply then does is `rule`'s to say, the same for all.
The engine's door (`_engine/door.py`) finds the question, performs the IO
around this decision (journal, one-time claim, delivery) and nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Literal

from elicitkit._core.journal import Held
from elicitkit._core.kinds import BY_ANSWER_TOOL, Answer, Mode, RouteName

__all__ = ["Ruling", "Source", "Standing", "accepts", "counts_attempt", "rule"]

Source = Literal["client", "handler", "retry", "model", "task", "page", "channel"]

Standing = Literal["open", "answered", "gone"]
"""Where the question stands as the reply arrives: waiting, answered already, or no longer there (withdrawn,
expired, never asked of this caller)."""


class Ruling(enum.Enum):
    ANSWERS = "answers"
    """The question takes this answer."""
    ACKNOWLEDGES = "acknowledges"
    """The person agreed to open elicitkit's own page, which will carry the real answer."""
    REFUSED = "refused"
    """The accepted content breaks the question's schema."""
    STALE = "stale"
    """The question no longer stands: closed, withdrawn, expired, or the run went past it."""
    DUPLICATE = "duplicate"
    """The question was answered already: this reply changes nothing."""


def accepts(source: Source, route: RouteName | None, observable: bool) -> bool:
    """Whether `source` may answer a question put on `route` (`observable`: elicitkit's own page completes it)."""
    if source in ("client", "handler"):
        return True  # the reply to the route's own request
    if source in ("retry", "task"):
        return route == "mrtr"
    if source == "model":
        return route in BY_ANSWER_TOOL  # the model, or elicitkit's view in the chat, through the fallback tool
    if source == "page":
        return observable or route == "channel"  # a channel question's secure link opens one of our pages
    return route == "channel"


def counts_attempt(source: Source) -> bool:
    """Whether a refused answer uses up one of the question's attempts.

    A client or the model may keep sending the same wrong answer; a person on elicitkit's page or a channel
    corrects it where they typed it, and may take as many tries as they need.
    """
    return source not in ("page", "channel")


def rule(
    standing: Standing,
    held: Held,
    mode: Mode,
    observable: bool,
    follows_schema: bool,
    answer: Answer,
    source: Source,
    problems: Callable[[Answer], object | None],
) -> Ruling:
    """What a reply does to its question.

    Args:
        standing: where the question stands.
        held: what the run's journal holds at its position (`EMPTY` when not read: the write tells later).
        mode: `form` or `url`.
        observable: a link to elicitkit's own page (a secure form, a third-party flow that comes back).
        follows_schema: whether a page's content follows the question's schema (a secure form), or is a third
            party's callback parameters, which follow none.
        answer: the reply (`accept`, `decline` or `cancel`, and an accept's content).
        source: where the reply comes from.
        problems: checks an accept's content against the schema (called only when content must be checked);
            None when it fits.
    """
    if standing == "gone" or held is Held.MOVED_ON:
        return Ruling.STALE
    if standing == "answered" or held is Held.SAME:
        return Ruling.DUPLICATE
    if answer.action != "accept":
        return Ruling.ANSWERS
    if observable and source != "page":
        # The spec's URL-mode accept: the user agreed to open the link. Our page brings the answer itself.
        return Ruling.ACKNOWLEDGES
    carries_content = mode == "form" or (source == "page" and follows_schema)
    if carries_content and problems(answer) is not None:
        return Ruling.REFUSED
    return Ruling.ANSWERS
