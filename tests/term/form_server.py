"""A server for the terminal tests: a long choice, a bounded multi-select, keepalives every 0.2 s, a short deadline.

python tests/term/form_server.py            (stdio)
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, ElicitationTimeout, Titles

server = MCPServer("term-forms")
hitl = Elicitation(server, timeout=600, keepalive=0.2)

Region = Literal[
    "us-east", "us-west", "ca-central", "sa-east", "eu-west", "eu-north",
    "eu-south", "me-central", "af-south", "ap-south", "ap-east", "ap-northeast",
]  # fmt: skip
REGION_TITLES = Titles(**{r: r.replace("-", " ").title() for r in Region.__args__})  # type: ignore[attr-defined]


class Release(BaseModel):
    region: Annotated[Region, REGION_TITLES] = Field(description="Where it runs")
    checks: list[Literal["lint", "unit", "e2e", "perf"]] = Field(default=["lint"], min_length=1, max_length=2)
    notify: bool = True


@server.tool()
async def release(ctx: Context) -> str:
    """A long titled choice (filtered by typing), a multi-select of 1-2, a boolean defaulting to yes."""
    answer = await hitl.elicit(ctx, "Release settings", Release)
    if not isinstance(answer, Accepted):
        return f"release: {answer.action}"
    r = answer.data
    return f"release: {r.region}, {'+'.join(r.checks)}, {'notify' if r.notify else 'quiet'}"


@server.tool()
async def name(ctx: Context) -> str:
    """Report progress, then ask for text while keepalives arrive (2025-11-25) and the clock runs."""
    await ctx.report_progress(1, 2, "warming up")
    answer = await hitl.text(ctx, "Who is deploying?", min_length=1)
    return f"name: {answer.data}" if isinstance(answer, Accepted) else f"name: {answer.action}"


@server.tool()
async def hurry(ctx: Context, seconds: float = 2.0) -> str:
    """A question the server waits for only `seconds`."""
    try:
        answer = await hitl.confirm(ctx, "Quick: go ahead?", timeout=seconds)
    except ElicitationTimeout:
        return "hurry: nobody answered in time"
    return f"hurry: {answer.action}"


if __name__ == "__main__":
    server.run()
