"""release-in-chat: a two-question release tool whose forms show inside the chat (MCP Apps).

A host that renders MCP Apps (Claude, ChatGPT, VS Code, Goose, ...) shows each question as elicitkit's form
view beside the tool call; one that shows elicitation forms itself gets them its own way; one that shows
neither has the model ask. Run it over streamable HTTP (`python examples/release_in_chat.py 8000`, then add
http://127.0.0.1:8000/mcp to your host) or over stdio (`python examples/release_in_chat.py`).
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, Titles

server = MCPServer("release-in-chat")
hitl = Elicitation(server, timeout=600)  # app_view=True by default; "first" prefers the view; False turns it off


class Release(BaseModel):
    replicas: int = Field(default=3, ge=1, le=64, title="Replicas")
    region: Annotated[Literal["eu", "us"], Titles(eu="Europe (Frankfurt)", us="America (Virginia)")] = Field(
        title="Region"
    )
    checks: list[Literal["lint", "unit", "e2e"]] = Field(title="Checks to run", min_length=1)


class GoAhead(BaseModel):
    now: bool = Field(title="Roll out now")


@server.tool()
async def release(service: str, ctx: Context) -> str:
    """Release a service, after a person says how."""
    plan = await hitl.elicit(ctx, f"Release {service}?", Release)
    if not isinstance(plan, Accepted):
        return f"{service} was not released"
    go = await hitl.elicit(ctx, f"{plan.data.replicas} replicas of {service}: roll out now?", GoAhead)
    if not isinstance(go, Accepted) or not go.data.now:
        return f"{service} is staged, not rolled out"
    return f"{service} rolled out to {plan.data.region} after {', '.join(plan.data.checks)}"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("streamable-http", port=int(sys.argv[1]))
    else:
        server.run()
