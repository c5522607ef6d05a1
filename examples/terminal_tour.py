"""terminal-tour: one tool per kind of question, to try `elicitkit call` with.

    elicitkit tools "python examples/terminal_tour.py"
    elicitkit call "python examples/terminal_tour.py" profile
    elicitkit call "python examples/terminal_tour.py" docs
    elicitkit call "python examples/terminal_tour.py" ship --arg version=2.1
    elicitkit call "python examples/terminal_tour.py" build

Over HTTP: `python examples/terminal_tour.py --http 8000`, then
`elicitkit call http://127.0.0.1:8000/mcp profile`.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field, SecretStr

from elicitkit import Accepted, Elicitation, Titles

server = MCPServer("terminal-tour")
hitl = Elicitation(server, timeout=600)


class Profile(BaseModel):
    name: str = Field(min_length=2, max_length=20, description="What the team calls you")
    age: int = Field(default=30, ge=18, le=99)
    team: Annotated[Literal["ops", "dev"], Titles(ops="Operations", dev="Development")]
    checks: list[Literal["lint", "unit", "e2e"]] = Field(default=["lint"], min_length=1)


@server.tool()
async def profile(ctx: Context) -> str:
    """A form with every kind of field: text with limits, a number with a range, a titled choice, a multi-select."""
    answer = await hitl.elicit(ctx, "Tell us about yourself", Profile)
    if not isinstance(answer, Accepted):
        return f"profile: {answer.action}"
    p = answer.data
    return f"profile: {p.name}, {p.age}, {p.team}, {'+'.join(p.checks)}"


@server.tool()
async def docs(ctx: Context) -> str:
    """A link the person is asked to open (URL mode)."""
    answer = await hitl.elicit_url(ctx, "Read the release notes first", "https://docs.example.com/releases/2.1")
    return f"docs: {answer.action}"


@server.tool()
async def ship(version: str, ctx: Context) -> str:
    """A yes/no question."""
    answer = await hitl.confirm(ctx, f"Ship {version}?", default=True)
    if isinstance(answer, Accepted):
        return f"ship {version}: {'yes' if answer.data else 'no'}"
    return f"ship {version}: {answer.action}"


class Token(BaseModel):
    token: SecretStr = Field(min_length=8, description="Never passes through the client or the model")


@server.tool()
async def login(ctx: Context) -> str:
    """A secret asked on elicitkit's own page (URL mode): needs the server over HTTP (`--http PORT`)."""
    answer = await hitl.secure_form(ctx, "Paste your deploy token", Token)
    if isinstance(answer, Accepted):
        return f"login: token of {len(answer.data.token.get_secret_value())} characters received"
    return f"login: {answer.action}"


@server.tool()
async def build(ctx: Context) -> str:
    """Report progress while working (shown as a bar), then ask whether to publish."""
    for step, what in enumerate(["compiling", "testing", "packaging"], start=1):
        await ctx.report_progress(step, 3, what)
    answer = await hitl.confirm(ctx, "Publish the build?")
    return f"build: {'published' if isinstance(answer, Accepted) and answer.data else 'kept'}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        hitl.public_url = f"http://127.0.0.1:{sys.argv[2]}"
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
