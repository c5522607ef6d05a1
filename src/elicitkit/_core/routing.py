"""Which route a question takes to the person: one pure function of what the server and the client allow."""

from __future__ import annotations

import enum
from typing import Literal, NamedTuple

from elicitkit._core.kinds import Mode, RouteName

__all__ = ["AppView", "NoRoute", "RouteFacts", "choose_route", "explain"]

FallbackKind = Literal["llm", "error", "handler"]
AppView = Literal["off", "fallback", "first"]


class RouteFacts(NamedTuple):
    """What the choice depends on, read off the question, its run and the request waiting for it."""

    mode: Mode
    to_channel: bool
    """The question goes to a human channel (`via=`)."""
    in_run: bool
    """Asked from a tool call elicitkit saw (through the server it is attached to)."""
    hosted: bool
    """That run's body runs in a task of its own and is journaled (it can outlive a request)."""
    legacy_task: bool
    """That run is a 2025-11-25 task: its questions go on the `tasks/result` request the client sends."""
    client_shows: bool
    """The client declared it can show this mode (overrides applied)."""
    can_send: bool
    """The request can carry a request to the client (2025-11-25 with a back-channel)."""
    mrtr: bool
    """The request speaks 2026-07-28."""
    fallback: FallbackKind
    """What the server does when the client cannot show the question."""
    app_view: AppView = "off"
    """Whether the client renders elicitkit's form view in the chat (MCP Apps), and when the server uses it:
    `"off"` (the client renders no apps, or the server turned the view off), `"fallback"` (for questions the
    client cannot show itself) or `"first"` (even when it can)."""


class NoRoute(enum.Enum):
    """Why no route reaches the person."""

    CHANNEL_OUTSIDE_RUN = "channel_outside_run"
    MRTR_OUTSIDE_HOST = "mrtr_outside_host"
    CLIENT_CANNOT_SHOW = "client_cannot_show"
    FALLBACK_OUTSIDE_HOST = "fallback_outside_host"


def choose_route(facts: RouteFacts) -> RouteName | NoRoute:
    """The route for a question, or why there is none."""
    if facts.to_channel:
        return "channel" if facts.in_run else NoRoute.CHANNEL_OUTSIDE_RUN
    if facts.legacy_task and facts.client_shows:
        return "native"  # a 2025-11-25 task asks its client through the `tasks/result` it sends
    # A form (never a link: secrets go to elicitkit's own page, not through the host) shown in the chat.
    in_view = facts.mode == "form" and facts.app_view != "off"
    if in_view and facts.app_view == "first":
        return "app" if facts.hosted else NoRoute.FALLBACK_OUTSIDE_HOST
    if facts.client_shows and (facts.mrtr or facts.can_send):
        if not facts.mrtr:
            return "native"
        return "mrtr" if facts.hosted else NoRoute.MRTR_OUTSIDE_HOST
    if in_view:
        return "app" if facts.hosted else NoRoute.FALLBACK_OUTSIDE_HOST
    if facts.fallback == "error":
        return NoRoute.CLIENT_CANNOT_SHOW
    if facts.fallback == "llm":
        return "llm" if facts.hosted else NoRoute.FALLBACK_OUTSIDE_HOST
    return "handler"


def explain(why: NoRoute, mode: Mode) -> str:
    """What the tool is told (in `ElicitationNotSupported`) when no route reaches the person."""
    what = "links (URL mode)" if mode == "url" else "elicitation forms"
    if why is NoRoute.CHANNEL_OUTSIDE_RUN:
        return (
            "A question for a channel must be asked from a tool called through the server that "
            "Elicitation(server) is attached to"
        )
    if why is NoRoute.MRTR_OUTSIDE_HOST:
        return (
            "On MCP 2026-07-28 a question can only be asked from a tool called through the server "
            "that Elicitation(server) is attached to, while the server's lifespan is running"
        )
    if why is NoRoute.CLIENT_CANNOT_SHOW:
        return f"The client did not declare that it can show {what}"
    return (
        f"The client cannot show {what}, and the fallback route needs the tool to run "
        "through the server that Elicitation(server) is attached to, while its lifespan is running"
    )
