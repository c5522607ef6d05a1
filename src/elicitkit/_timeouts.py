"""`timeout=` as anyio and httpx read it: seconds, `None` for no limit, and a sentinel for "the server's default".

The same checks guard every way of asking (`elicit`, the helpers,
`elicit_url`, `secure_form`, `url_flow`), so a bad argument fails the same
way everywhere, before anything is sent.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

__all__ = [
    "SERVER_DEFAULT",
    "LINK_LIFETIME_MAX",
    "MAX_MESSAGE",
    "MessageRefused",
    "ServerDefault",
    "Timeout",
    "check_message",
    "is_text",
    "check_seconds",
    "seconds",
]


class ServerDefault(enum.Enum):
    """The type of `SERVER_DEFAULT`."""

    TIMEOUT = "the timeout given to Elicitation(...)"

    def __repr__(self) -> str:
        return "SERVER_DEFAULT"


SERVER_DEFAULT = ServerDefault.TIMEOUT
"""`timeout=SERVER_DEFAULT` (what leaving it out means): wait as long as `Elicitation(timeout=...)` says."""

Timeout = float | None | ServerDefault
"""Seconds to wait for an answer; `None` waits without limit; `SERVER_DEFAULT` uses the server's."""

LINK_LIFETIME_MAX = 7 * 24 * 3600.0
"""A link to one of elicitkit's pages stops working after this long even when its question has no limit."""


def check_seconds(value: Any, name: str = "timeout", *, none_ok: bool = True) -> None:
    """Refuse anything but a positive number of seconds (or None, meaning no limit, where `none_ok`)."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not value > 0:
        allowed = "a positive number of seconds, or None for no limit" if none_ok else "a positive number of seconds"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")


def seconds(given: Timeout, default: float | None) -> float:
    """The seconds to wait (`math.inf` for no limit), checking what the caller gave."""
    if isinstance(given, ServerDefault):
        return math.inf if default is None else default
    check_seconds(given)
    return math.inf if given is None else float(given)


MAX_MESSAGE = 20_000
"""Characters a question's message may have: a person reads it on a form, a page, an inbox or a chat message."""


class MessageRefused(ToolError, ValueError):
    """A message elicitkit will not send. A `ValueError`; also the SDK's `ToolError`, because a message often holds
    the caller's own text (`f"Deploy {version}?"`): escaping a tool, it ends the call as an `isError` result that
    says why, not as an unexpected exception logged with its traceback."""


def check_message(message: Any) -> None:
    if not isinstance(message, str) or not message.strip():
        raise MessageRefused("An elicitation needs a non-empty message")
    if len(message) > MAX_MESSAGE:
        raise MessageRefused(
            f"An elicitation's message may have at most {MAX_MESSAGE:,} characters, not {len(message):,}"
        )
    if not is_text(message):
        raise MessageRefused("An elicitation's message must be Unicode text: it has a lone surrogate")


def is_text(text: str) -> bool:
    """Whether `text` can be written out (UTF-8) at all: a lone surrogate (JSON's `\\ud800`) cannot, and would
    break every page, chat message and store record that shows it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
