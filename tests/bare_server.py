"""A server written with the bare `mcp` SDK (no elicitkit), for `elicitkit call` to talk to."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field

server = MCPServer("bare")


class Name(BaseModel):
    name: str = Field(min_length=1)


@server.tool()
async def greet(ctx: Context) -> str:
    """Ask for a name with the SDK's own `ctx.elicit` (2025-11-25)."""
    answer = await ctx.elicit("Who are you?", Name)
    return f"Hello, {answer.data.name}" if answer.action == "accept" else f"No name ({answer.action})"


async def ask_name(ctx: Context) -> Elicit[Name]:
    return Elicit("Who are you?", Name)


@server.tool()
async def welcome(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask for a name with the SDK's `Resolve`/`Elicit` (2026-07-28: the question comes back as input required)."""
    return f"Welcome, {name.name}"


if __name__ == "__main__":
    server.run()
