"""The `tools/call` and `tools/list` middleware: the one entry from the SDK into the engine.

A call is one of three things: an answer for the model fallback's system
tool, a 2026-07-28 retry carrying elicitkit's `requestState` (both go to the
inbox), or a new call (the run host starts it). Store trouble becomes an
error the client can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from elicitkit._core.codec import is_ours
from elicitkit._engine import refusals
from elicitkit._engine.host import RunHost
from elicitkit._engine.inbox import Inbox
from elicitkit._engine.policy import Policy
from elicitkit._errors import StoreUnavailable, TamperedRecord
from elicitkit._fallback import shape_tools

__all__ = ["ToolsMiddleware"]

logger = logging.getLogger("elicitkit")


class ToolsMiddleware:
    def __init__(self, policy: Policy, host: RunHost, inbox: Inbox) -> None:
        self.policy = policy
        self.host = host
        self.inbox = inbox

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/list":
            # The fallback tool is shown only to clients that need it, with output schemas widened for them.
            return shape_tools(
                await call_next(ctx), self.policy.fallback_tool, needed=self.policy.model_fallback_shown(ctx)
            )
        if ctx.method != "tools/call" or ctx.request_id is None:
            return await call_next(ctx)
        params = ctx.params or {}
        name = str(params.get("name", ""))
        try:
            if self.policy.uses_model and name == self.policy.fallback_tool:
                return await self.inbox.fallback_answer(ctx, params.get("arguments"), call_next)
            if is_ours(params.get("requestState")):
                return await self.inbox.retry(ctx, params, call_next)
            arguments = params.get("arguments")
            arguments = dict(arguments) if isinstance(arguments, Mapping) else {}
            return await self.host.start(ctx, name, arguments, call_next)
        except StoreUnavailable as exc:
            logger.warning("tools/call %r refused: %s", name, exc)
            raise refusals.store_unavailable(str(exc)) from exc
        except TamperedRecord as exc:
            logger.error("tools/call %r refused: a stored record failed authentication", name)
            raise refusals.tampered() from exc
