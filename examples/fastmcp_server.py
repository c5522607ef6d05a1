"""deploy-desk on fastmcp: the same release tool, written with fastmcp's `FastMCP` and `Context`.

Needs `pip install 'elicitkit[fastmcp]'`. Run it as a stdio MCP server
(`python examples/fastmcp_server.py`) or over HTTP
(`python examples/fastmcp_server.py --http 8000`, MCP at `/mcp`). It asks on
both protocol eras: with `elicitation/create` on 2025-11-25, and with
`InputRequiredResult` rounds on 2026-07-28 (what fastmcp's own `Client`
negotiates by default), the tool body waiting between rounds; a client that
cannot show forms gets the question through the model.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, Titles

server = FastMCP("deploy-desk")
hitl = Elicitation(server, timeout=120)


class Approval(BaseModel):
    approved: bool = Field(title="Approve", description="Ship this release?")
    note: str | None = Field(default=None, max_length=200, description="Anything the team should know")


class Window(BaseModel):
    when: Annotated[Literal["now", "tonight", "weekend"], Titles(now="Right now", tonight="Tonight 22:00")] = "now"
    notify: bool = Field(default=True, description="Tell #releases")


ENVIRONMENTS = {"staging": "Staging", "prod-eu": "Production (EU)", "prod-us": "Production (US)"}
CHECKS = ["lint", "unit tests", "smoke tests", "canary"]


@server.tool
async def deploy(version: str, ctx: Context) -> str:
    """Deploy a version after a person approves it, picks the target and the checks."""
    approval = await hitl.elicit(ctx, f"Deploy {version}?", Approval)
    if not (isinstance(approval, Accepted) and approval.data.approved):
        return f"{version} was not deployed."
    target = await hitl.titled_choice(ctx, "Where to?", ENVIRONMENTS, default="staging")
    if not isinstance(target, Accepted):
        return f"{version} was not deployed: no target chosen."
    checks = await hitl.choices(ctx, "Which checks must pass first?", CHECKS, min_items=1)
    if not isinstance(checks, Accepted):
        return f"{version} was not deployed: no checks chosen."
    note = f" Note: {approval.data.note}" if approval.data.note else ""
    return f"Deployed {version} to {ENVIRONMENTS[target.data]} after {', '.join(checks.data)}.{note}"


@server.tool
async def schedule(version: str, ctx: Context) -> str:
    """Schedule a release window, asking the person when."""
    window = await hitl.elicit(ctx, f"When should {version} go out?", Window)
    match window:
        case Accepted(data=Window(when=when, notify=notify)):
            return f"{version} scheduled {when}" + (", #releases told." if notify else ".")
        case _:
            return f"{version} not scheduled ({window.action})."


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("http", port=int(sys.argv[2]), show_banner=False)
    else:
        server.run(show_banner=False)
