"""What the calling client says it can show."""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import ClientCapabilities

from elicitkit import _mcp

__all__ = ["Mode", "supports_elicitation", "supports_mode"]

Mode = Literal["form", "url"]


def supports_elicitation(ctx: Context[Any, Any], mode: Mode = "form") -> bool:
    """True when the client of this request declared it can show `mode` elicitations.

    Works on both eras: 2025-11-25 reads the `initialize` capabilities,
    2026-07-28 the capabilities carried by this very request. A bare
    `elicitation: {}` (as Claude Code sends) means form mode only.
    """
    return supports_mode(_mcp.capabilities(_mcp.request_context(ctx)), mode)


def supports_mode(caps: ClientCapabilities | None, mode: Mode) -> bool:
    """True when declared capabilities `caps` include `mode` elicitations."""
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None:
        return False
    if mode == "url":
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None
