"""elicitkit for tools written for fastmcp alone: `adopt` makes fastmcp's own `ctx.elicit` ask through elicitkit.

```python
from fastmcp import Context, FastMCP
from elicitkit.fastmcp import adopt

server = FastMCP("deploy-desk")
adopt(server)                      # or adopt(server, store="sqlite:///state.db", ...)

@server.tool
async def deploy(version: str, ctx: Context) -> str:
    result = await ctx.elicit(f"Deploy {version}?", bool)   # unchanged fastmcp code
    return "Deployed" if result.action == "accept" and result.data else "Not deployed"
```

Needs `pip install 'elicitkit[fastmcp]'`; importing this module imports fastmcp.
"""

from __future__ import annotations

from typing import Any

try:
    from fastmcp import Context, FastMCP
except ImportError as error:
    raise ImportError("elicitkit.fastmcp needs fastmcp: pip install 'elicitkit[fastmcp]'") from error

from elicitkit import _fastmcp
from elicitkit._elicitation import ATTACHED, Elicitation
from elicitkit._results import ElicitationResult

__all__ = ["adopt"]


def adopt(server: FastMCP[Any], **options: Any) -> Elicitation:
    """Make `await ctx.elicit(message, response_type)` in `server`'s tools ask through elicitkit.

    fastmcp's own call, arguments and result types (`AcceptedElicitation` with
    `.data`, `DeclinedElicitation`, `CancelledElicitation`) stay as they are;
    what changes is how the question travels: `elicitation/create` on
    2025-11-25, `InputRequiredResult` rounds on 2026-07-28 with the tool body
    waiting between them (where fastmcp alone raises), the model fallback for
    a client without forms, and elicitkit's timeout, hooks and stores. Other
    servers in the process keep fastmcp's own `ctx.elicit`.

    Args:
        server: the fastmcp server whose tools' `ctx.elicit` elicitkit answers.
        options: `Elicitation`'s options, when elicitkit is not attached to the
            server yet; otherwise the attached `Elicitation` is used, as it is.

    Returns:
        The server's `Elicitation`, for `hitl.elicit`, hooks and the rest.

    Raises:
        ValueError: `options` were given but an `Elicitation` is already attached.
    """
    hitl: Elicitation | None = getattr(server, ATTACHED, None)
    if hitl is None:
        hitl = Elicitation(server, **options)
    elif options:
        raise ValueError("This server already has an Elicitation attached: adopt(server) uses it as it is")

    async def ask(ctx: Context, message: str, schema: dict[str, Any]) -> ElicitationResult[Any]:
        return await hitl.elicit(ctx, message, schema)

    _fastmcp.adopt_context_elicit(server, ask)
    return hitl
