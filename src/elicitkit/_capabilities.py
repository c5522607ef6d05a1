"""What the calling client says it can show."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from elicitkit import _mcp
from elicitkit._clients import Mode, declared_modes

__all__ = ["Mode", "supports_elicitation"]


def supports_elicitation(ctx: Context[Any, Any], mode: Mode = "form") -> bool:
    """True when the client of this request declared it can show `mode` elicitations.

    Works on both eras: 2025-11-25 reads the `initialize` capabilities,
    2026-07-28 the capabilities carried by this very request. A bare
    `elicitation: {}` (as Claude Code sends) means form mode only. Per-client
    overrides are not applied here; `Elicitation.supports` applies them.
    """
    return mode in declared_modes(_mcp.capabilities(_mcp.request_context(ctx)))
