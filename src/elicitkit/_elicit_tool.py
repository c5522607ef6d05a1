"""The `elicit` tool: an agent asks a person a question of its own making, on a human channel.

`hitl.install_elicit_tool()` registers the tool mcp.do's "Human Functions"
offer, as mcp.do documents it: input `{message, schema, uiType}` (`uiType` an
enum of the channels installed, `slack` by default where Slack is one), and
its results, byte for byte:

| outcome | text | `isError` |
| --- | --- | --- |
| answered | `User provided: {"approved":true}` (JavaScript's `JSON.stringify`) | false |
| declined | `User declined: {the person's reason}` | true |
| cancelled | `User canceled: Request canceled` | true |
| no answer in time | `User canceled: Request timed out after 3 minutes` | true |

plus structured content `{action, content?, reason?}`. The time a person has
depends on who calls, as on mcp.do: 3 minutes for anonymous callers, 5 for
authenticated ones (`PerCaller`). Unlike mcp.do, the answer arrives by push on
a signed callback, is validated against the schema, and the schema itself is
held to MCP's restricted form schema (refused with the reason otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field, JsonValue

from elicitkit._errors import ElicitationError, ElicitationTimeout, SchemaError
from elicitkit._jstext import number, stringify
from elicitkit._mcp import ToolContext
from elicitkit._results import Accepted, Declined, ElicitationResult
from elicitkit._servers import ServerSeam
from elicitkit._timeouts import ServerDefault, Timeout, check_message, check_seconds, seconds
from elicitkit.channels.base import Via, web

__all__ = ["DESCRIPTION", "MCPDO_TIMEOUTS", "UI_TYPES", "PerCaller", "install", "per_caller"]

DESCRIPTION = "Request structured input from user via Human Functions"
UI_TYPES = ("slack", "discord", "teams", "web")
"""mcp.do's `uiType` enum, in its order; the first one installed is the default."""

MCPDO_TIMEOUTS: Mapping[str, float | None] = {"anonymous": 180, "authenticated": 300}
"""How long mcp.do's `elicit` waits for a person: 3 minutes for anonymous callers, 5 for authenticated ones."""

PerCaller: TypeAlias = Timeout | Mapping[str, float | None] | Callable[[str | None], float | None]
"""How long the `elicit` tool waits, by caller: seconds (None: no limit), `SERVER_DEFAULT`, a mapping
`{"anonymous": ..., "authenticated": ...}`, or a function of the caller's principal (None when anonymous)."""

_CALLERS = frozenset({"anonymous", "authenticated"})


class Elicit(Protocol):
    """`hitl.elicit`, as the tool calls it."""

    async def __call__(
        self, ctx: ToolContext, message: str, schema: Mapping[str, Any], *, via: Via, timeout: float
    ) -> ElicitationResult[Any]: ...


def per_caller(timeout: PerCaller, server_default: float | None) -> Callable[[str | None], float]:
    """The seconds the tool waits for a caller's question (`math.inf`: no limit), from what was installed.

    Raises:
        ValueError: a mapping with other keys than "anonymous" and "authenticated", or a bad number of seconds.
        TypeError: something that is none of the shapes `PerCaller` lists.
    """
    if timeout is None or isinstance(timeout, ServerDefault | int | float):
        fixed = seconds(timeout, server_default)
        return lambda principal: fixed
    if isinstance(timeout, Mapping):
        unknown = ", ".join(sorted(map(repr, set(timeout) - _CALLERS)))
        if unknown:
            raise ValueError(f'timeout by caller takes the keys "anonymous" and "authenticated", not {unknown}')
        for key, value in timeout.items():
            check_seconds(value, f"timeout[{key!r}]")
        fallback = seconds(ServerDefault.TIMEOUT, server_default)  # a caller the mapping leaves out
        anonymous = seconds(timeout["anonymous"], None) if "anonymous" in timeout else fallback
        known = seconds(timeout["authenticated"], None) if "authenticated" in timeout else fallback
        return lambda principal: anonymous if principal is None else known
    if callable(timeout):
        decide = timeout

        def by_caller(principal: str | None) -> float:
            decided = decide(principal)
            check_seconds(decided, "the timeout the elicit tool's timeout function returned")
            return seconds(decided, None)

        return by_caller
    raise TypeError(f"timeout must be seconds, None, a mapping by caller or a function, not {type(timeout).__name__}")


def install(
    server: ServerSeam,
    ask: Elicit,
    principal_of: Callable[[ToolContext], str | None],
    channels: frozenset[str],
    destinations: Mapping[str, Via],
    name: str,
    limit: Callable[[str | None], float],
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
    offered = [ui_type for ui_type in UI_TYPES if ui_type in routes]
    default = offered[0]
    enum: list[JsonValue] = list(offered)

    async def elicit(
        message: str = Field(description="Message explaining what information is needed"),
        schema: dict[str, Any] = Field(  # noqa: B008  (pydantic's way to describe a parameter)
            description="JSON Schema for requested data (flat object only)",
        ),
        ctx: Context = None,  # type: ignore[assignment]  # the SDK injects it
        uiType: str = Field(
            default=default,
            description=f"UI platform to use (default: {default})",
            json_schema_extra={"enum": enum},
        ),
    ) -> CallToolResult:
        via = routes.get(uiType)
        if via is None:
            return _error(f"uiType {uiType!r} is not available on this server (available: {', '.join(offered)})")
        try:
            check_message(message)
        except ValueError as exc:  # the agent's own input: refused as a tool error, like a bad schema
            return _error(str(exc))
        try:
            result = await ask(ctx, message, schema, via=via, timeout=limit(principal_of(ctx)))
        except SchemaError as exc:
            return _error(f"The schema cannot be shown as a form: {exc}")
        except ElicitationTimeout as exc:
            # The time that ran out: the caller's, or what a `before_ask` hook made of it.
            timed_out = f"Request timed out after {_minutes(exc.timeout)}"
            return _outcome("cancel", f"User canceled: {timed_out}", reason="timeout")
        except ElicitationError as exc:
            return _error(f"Could not ask the user: {exc}")
        if isinstance(result, Accepted):
            content = dict(result.content or {})
            return _outcome("accept", f"User provided: {stringify(content)}", content=content)
        if isinstance(result, Declined):
            reason = result.reason or "the user declined"
            return _outcome("decline", f"User declined: {reason}", reason=reason)
        return _outcome("cancel", "User canceled: Request canceled", reason="cancelled")

    server.add_system_tool(elicit, name=name, description=DESCRIPTION)


def _minutes(limit: float) -> str:
    if math.isinf(limit):
        return "no limit"
    shown = number(limit / 60)
    return f"{shown} minute" + ("" if shown == "1" else "s")


def _outcome(action: str, text: str, **structured: Any) -> CallToolResult:
    """The tool's result for the person's outcome: only an answer is a success, as on mcp.do."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"action": action, **structured},
        is_error=action != "accept",
    )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
