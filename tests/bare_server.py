"""A server written with the bare `mcp` SDK (no elicitkit), for `elicitkit call` to talk to."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("bare")


class Name(BaseModel):
    name: str = Field(min_length=1)


@server.tool()
async def greet(ctx: Context) -> str:
    """Ask for a name with the SDK's own `ctx.elicit` (2025-11-25)."""
    answer = await ctx.elicit("Who are you?", Name)
    return f"Hello, {answer.data.name}" if answer.action == "accept" else f"No name ({answer.action})"


if __name__ == "__main__":
    server.run()
