"""The server's settings for runs and routes, and what a client can show (declared, corrected by overrides)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext

from elicitkit import _mcp
from elicitkit._clients import ClientOverride, apps_for, modes_for
from elicitkit._core.kinds import Mode
from elicitkit._core.routing import AppView
from elicitkit._engine.question import Question
from elicitkit._fallback import Fallback

__all__ = ["Policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    run_expiry: float
    """Seconds a suspended run waits for the next request (retry, fallback answer) before it is freed."""
    url_wait: float
    """Seconds a request waits for a person on elicitkit's page before it is told to come back."""
    keepalive: float | None
    one_pending_per_session: bool
    fallback: Fallback
    fallback_tool: str
    client_overrides: tuple[ClientOverride, ...]
    node: str
    shared: bool
    """Nodes share the store: answers may land on a node that does not hold the run."""
    forward_timeout: float
    lease: float
    max_suspended: int | None = None
    """Suspended bodies a node keeps; the longest waiting beyond this hibernate (None: no limit)."""
    app_view: AppView = "fallback"
    """When a client that renders MCP Apps views is shown elicitkit's form in the chat: `"fallback"` (for forms it
    cannot show itself), `"first"` (for every form) or `"off"`."""
    task_tool: Callable[[str], bool] = lambda name: False
    """Whether the tool `name` was declared to run as a background task (fastmcp's `task=True`): its questions
    make a 2026-07-28 call a task, as `elicit(..., task=True)` does."""

    def __post_init__(self) -> None:
        limit = self.max_suspended
        if limit is not None and (type(limit) is not int or limit < 1):
            raise ValueError(f"max_suspended must be a whole number of runs, 1 or more, or None, not {limit!r}")

    @property
    def uses_model(self) -> bool:
        return self.fallback == "llm"

    @property
    def answer_tool_on(self) -> bool:
        """Whether the fallback tool takes answers: for the model fallback, and for elicitkit's view in the chat."""
        return self.uses_model or self.app_view != "off"

    @property
    def run_record_ttl(self) -> float:
        """How long a waiting run's record is written to last: half as long again as its wait for the next request,
        so a run asking question after question renews it only every other expiry or so, not every round."""
        return self.run_expiry * 1.5

    def wall_expiry(self, question: Question) -> float:
        """When a hosted question's records and offers expire (epoch seconds): its deadline, or, for a question
        without limit, as long as its run may wait for the next request."""
        return min(question.expires_wall(), time.time() + self.run_expiry)

    def client_modes(self, rctx: ServerRequestContext[Any, Any]) -> frozenset[Mode]:
        return modes_for(self.client_overrides, _mcp.client_info(rctx), _mcp.capabilities(rctx))

    def native_possible(self, rctx: ServerRequestContext[Any, Any], mode: Mode = "form") -> bool:
        """Can the client of `rctx` show `mode` itself, on this request's era?"""
        if mode not in self.client_modes(rctx):
            return False
        return _mcp.is_mrtr(rctx.protocol_version) or rctx.session.can_send_request

    def needs_host(self, rctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether a tool body called by `rctx` may need to outlive its request (and so runs in its own task)."""
        return _mcp.is_mrtr(rctx.protocol_version) or self.model_fallback_shown(rctx)

    def app_view_for(self, rctx: ServerRequestContext[Any, Any]) -> AppView:
        """How this client is shown elicitkit's form view in the chat: "off" unless it renders MCP Apps (declared,
        corrected by overrides)."""
        if self.app_view == "off":
            return "off"
        overrides = self.client_overrides
        if not apps_for(overrides, _mcp.client_info(rctx) if overrides else None, _mcp.capabilities(rctx)):
            return "off"
        return self.app_view

    def model_fallback_shown(self, rctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether this client gets the fallback tool: it cannot show forms and the model fallback is on, or its
        forms may be shown in elicitkit's view in the chat (which answers through that tool)."""
        if self.uses_model and not self.native_possible(rctx):
            return True
        view = self.app_view_for(rctx)
        return view == "first" or (view == "fallback" and not self.native_possible(rctx))
