"""The `elicit` tool: an agent asks a person a question of its own making, on a human channel.

`hitl.install_elicit_tool()` registers an MCP tool with the input mcp.do's
"Human Functions" `elicit` tool takes — `{message, schema, uiType}` — and its
result texts (`User provided: {json}`, `User declined: {reason}`, `User
canceled: Request timed out after N minutes`), plus structured content
`{action, content?, reason?}`. Unlike mcp.do, the person's answer arrives by
push on a signed callback, is validated against the schema, and the schema
itself is held to MCP's restricted form schema (refused with the reason
otherwise).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Protocol

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from elicitkit._errors import ElicitationError, ElicitationTimeout, SchemaError
from elicitkit._mcp import ToolContext
from elicitkit._results import Accepted, Declined, ElicitationResult
from elicitkit._servers import ServerSeam
from elicitkit._timeouts import check_message
from elicitkit.channels.base import Via, web

__all__ = ["DESCRIPTION", "install"]

DESCRIPTION = "Request structured input from user via Human Functions"
UI_TYPES = ("slack", "discord", "teams", "web")


class Ask(Protocol):
    async def __call__(
        self, ctx: ToolContext, message: str, schema: Mapping[str, Any], *, via: Via, timeout: float
    ) -> ElicitationResult[Any]: ...


def install(
    server: ServerSeam,
    ask: Ask,
    channels: frozenset[str],
    destinations: Mapping[str, Via],
    name: str,
    limit: float,
) -> None:
    """Register the tool on `server`; `destinations` maps each uiType to where its questions go."""
    routes = dict(destinations)
    if "web" in channels and "web" not in routes:
        routes["web"] = web()
    for ui_type, via in routes.items():
        if ui_type not in UI_TYPES:
            raise ValueError(f"uiType must be one of {', '.join(UI_TYPES)}, not {ui_type!r}")
        if via.channel not in channels:
            raise ValueError(f"uiType {ui_type!r} goes to channel {via.channel!r}, which was not added")
    if not routes:
        raise ValueError(
            "The elicit tool needs somewhere to ask: add a channel (channels=[WebInbox(), SlackChannel(...)]) "
            'and, for chat channels, say where: install_elicit_tool({"slack": slack("#approvals")})'
        )
    offered = sorted(routes)
    default = "web" if "web" in routes else offered[0]

    async def elicit(
        message: str = Field(description="The question to ask the person."),
        schema: dict[str, Any] = Field(  # noqa: B008  (pydantic's way to describe a parameter)
            description="A flat JSON Schema object of primitive fields (string, number, integer, boolean, enums).",
        ),
        ctx: Context = None,  # type: ignore[assignment]  # the SDK injects it
        uiType: str | None = Field(
            default=None, description=f"Where to ask: one of {', '.join(offered)} (default {default})."
        ),
    ) -> CallToolResult:
        ui_type = uiType or default
        via = routes.get(ui_type)
        if via is None:
            return _error(f"uiType {ui_type!r} is not available on this server (available: {', '.join(offered)})")
        try:
            check_message(message)
        except ValueError as exc:  # the agent's own input: refused as a tool error, like a bad schema
            return _error(str(exc))
        try:
            result = await ask(ctx, message, schema, via=via, timeout=limit)
        except SchemaError as exc:
            return _error(f"The schema cannot be shown as a form: {exc}")
        except ElicitationTimeout:
            return _result("cancel", f"User canceled: Request timed out after {_minutes(limit)}", reason="timeout")
        except ElicitationError as exc:
            return _error(f"Could not ask the user: {exc}")
        if isinstance(result, Accepted):
            content = dict(result.content or {})
            return _result("accept", f"User provided: {json.dumps(content)}", content=content)
        if isinstance(result, Declined):
            reason = result.reason or "the user declined"
            return _result("decline", f"User declined: {reason}", reason=reason)
        return _result("cancel", "User canceled: the request was cancelled", reason="cancelled")

    server.add_system_tool(elicit, name=name, description=DESCRIPTION)


def _minutes(limit: float) -> str:
    if math.isinf(limit):
        return "no limit"
    minutes = limit / 60
    shown = f"{minutes:g}" if minutes >= 1 else f"{minutes:.2g}"
    return f"{shown} minute" + ("" if shown == "1" else "s")


def _result(action: str, text: str, **structured: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={"action": action, **structured}
    )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
