"""The elicitation tools the MCP conformance suite calls, written with elicitkit's public API.

`tests/test_conformance.py` serves this over streamable HTTP and runs the suite's
server scenarios `tools-call-elicitation`, `elicitation-sep1034-defaults` and
`elicitation-sep1330-enums` against it (npm package `@modelcontextprotocol/conformance`).
By hand: `python examples/conformance_server.py 8000`, then
`npx @modelcontextprotocol/conformance server --url http://127.0.0.1:8000/mcp`.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation, ElicitationResult

server = MCPServer("elicitkit-conformance")
# The scenarios require an error, not the model fallback, from clients that cannot show forms.
hitl = Elicitation(server, fallback="error", timeout=60)


class UserInfo(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


class Defaults(BaseModel):
    """SEP-1034: a default on every primitive type."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


# SEP-1330: all five choice shapes. The legacy titled form (enumNames) only exists as a raw schema; elicitkit
# sends a raw schema exactly as written.
ENUMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def _content(answer: ElicitationResult[Any]) -> str:
    return json.dumps(answer.content if isinstance(answer, Accepted) else {})


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the user for a username and an email address."""
    answer = await hitl.elicit(ctx, message, UserInfo)
    return f"User response: <action: {answer.action}, content: {_content(answer)}>"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Ask with a default on every primitive type (SEP-1034)."""
    answer = await hitl.elicit(ctx, "Please review your details", Defaults)
    return f"Elicitation completed: action={answer.action}, content={_content(answer)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Ask with every enum shape (SEP-1330)."""
    answer = await hitl.elicit(ctx, "Please pick your options", ENUMS)
    return f"Elicitation completed: action={answer.action}, content={_content(answer)}"


if __name__ == "__main__":
    server.run("streamable-http", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
