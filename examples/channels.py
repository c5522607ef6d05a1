"""release-desk: questions that go to people where they are, and an `elicit` tool for agents.

- `release` asks the release manager in elicitkit's web inbox (answer at
  http://127.0.0.1:8000/elicit/inbox), and, when Slack is configured, asks
  #releases for the go-ahead;
- `elicit` (mcp.do's Human Functions tool) lets an agent ask a question of its
  own making in the inbox (or on Slack);
- calls whose question goes to a channel run as MCP tasks where the client
  takes them, so nobody's tool call is held open while a person thinks.

Run it with `python examples/channels.py` (streamable HTTP on 127.0.0.1:8000,
MCP at /mcp). Who opens the inbox is read from the `X-User` header or a `user`
cookie (a stand-in for your SSO); the default is `release-manager`. Set
SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET to add Slack (see docs/channels.md).
"""

from __future__ import annotations

import os

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field
from starlette.requests import Request

from elicitkit import Accepted, Elicitation
from elicitkit.channels import Channel, SlackChannel, Via, WebInbox, slack, web

MANAGER = "release-manager"


async def who_is_this(request: Request) -> str | None:
    """Your SSO goes here; the example trusts a header or a cookie."""
    return request.headers.get("x-user") or request.cookies.get("user") or MANAGER


class Release(BaseModel):
    go: bool = Field(title="Release now?")
    notes: str | None = Field(default=None, title="Release notes", max_length=200)


def build(public_url: str = "http://127.0.0.1:8000") -> tuple[MCPServer, Elicitation]:
    server = MCPServer("release-desk")
    channels: list[Channel] = [WebInbox()]
    destinations: dict[str, Via] = {"web": web(MANAGER)}
    if os.environ.get("SLACK_BOT_TOKEN") and os.environ.get("SLACK_SIGNING_SECRET"):
        channels.append(SlackChannel(os.environ["SLACK_BOT_TOKEN"], os.environ["SLACK_SIGNING_SECRET"]))
        destinations["slack"] = slack("#releases")
    hitl = Elicitation(server, public_url=public_url, page_identity=who_is_this, channels=channels)
    hitl.install_elicit_tool(destinations)

    @server.tool()
    async def release(version: str, ctx: Context) -> str:
        """Release a version once the release manager says so."""
        answer = await hitl.elicit(ctx, f"Release {version}?", Release, via=destinations.get("slack", web(MANAGER)))
        match answer:
            case Accepted(data=Release(go=True, notes=notes)):
                return f"Released {version}" + (f": {notes}" if notes else "")
            case _:
                return f"{version} was not released"

    return server, hitl


if __name__ == "__main__":
    server, hitl = build()
    uvicorn.run(hitl.http_app(), host="127.0.0.1", port=8000)
