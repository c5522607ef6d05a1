"""The fallback route: when the client cannot show a form, the model asks the person.

The tool call returns a normal result whose text tells the model what to ask
and exactly how to hand the answer back (the `sendElicitationResult` system
tool), plus `_meta["elicitationPending"]` with the same fields FrontMCP uses:
`elicitId`, `message`, `schema`, `expiresAt` (epoch milliseconds) and
`instructions`. The tool body stays suspended meanwhile.

For a client that renders MCP Apps, the same result is what elicitkit's form
view in the chat reads (`VIEW_URI`, named by every tool's `_meta.ui.resourceUri`):
the pending question also names the tool to answer with (`answerTool`), and the
text tells the model that the person sees the form, so that a host that renders
nothing still has the model ask.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from mcp.server.context import HandlerResult
from mcp_types import CallToolResult, ElicitResult, ListToolsResult, TextContent

from elicitkit._mcp import ToolContext
from elicitkit._schema.choices import options_of

__all__ = [
    "DEFAULT_TOOL",
    "PROBLEMS_META",
    "VIEW_URI",
    "Fallback",
    "FallbackHandler",
    "PendingQuestion",
    "SendResultArgs",
    "describe_field",
    "error_result",
    "parse_send_args",
    "render_pending",
    "shape_tools",
    "tool_description",
    "widen_output_schema",
]

DEFAULT_TOOL = "sendElicitationResult"
META_KEY = "elicitationPending"
PROBLEMS_META = "elicitationProblems"
"""The `_meta` key of a refused answer's result: the refused fields, for elicitkit's view in the chat."""
VIEW_URI = "ui://elicitkit/form"
"""elicitkit's form view (MCP Apps), served by `resources/read`."""

PENDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        META_KEY: {
            "type": "object",
            "properties": {
                "elicitId": {"type": "string"},
                "message": {"type": "string"},
                "schema": {"type": "object"},
                "expiresAt": {"type": "integer"},
                "instructions": {"type": "string"},
            },
            "required": ["elicitId", "message", "schema", "expiresAt", "instructions"],
        }
    },
    "required": [META_KEY],
}


def widen_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's output schema that also admits the pending-question result (its `structuredContent`).

    Clients validate `structuredContent` against `outputSchema`; without this a
    typed tool's fallback result would be refused. The root stays an object, as
    the spec requires; `anyOf` (not `oneOf`) so a permissive schema still matches.
    """
    return {"type": "object", "anyOf": [schema, PENDING_SCHEMA]}


@dataclass(frozen=True, slots=True)
class PendingQuestion:
    """A question handed to a custom fallback handler."""

    id: str
    message: str
    schema: dict[str, Any]
    expires_at: float
    """Seconds since the epoch."""


FallbackHandler = Callable[[ToolContext, PendingQuestion], Awaitable[ElicitResult]]
"""`async (ctx, question) -> ElicitResult`: answers questions the client cannot show; the answer is validated."""

Fallback = Literal["llm", "error"] | FallbackHandler
"""What happens when the client cannot show a question: `"llm"` (the model asks the person),
`"error"` (`ElicitationNotSupported`), or a `FallbackHandler` of the server's own."""


def tool_description(name: str) -> str:
    return (
        "Hand the user's answer to a pending question back to the tool that asked it. "
        f"Call {name} only after a tool result asked you to put a question to the user and you have their reply. "
        'action: "accept" with content (the answer, matching the question\'s fields), '
        '"decline" (the user said no) or "cancel" (the user wants to stop).'
    )


def _choices(prop: Mapping[str, Any]) -> list[str]:
    return [
        f"{json.dumps(value)} ({title})" if title != value else json.dumps(value)
        for value, title in options_of(prop) or ()
    ]


def describe_field(name: str, prop: Mapping[str, Any], required: bool) -> str:
    """One line per field: type, whether required, constraints, choices, default, title and description."""
    kind = prop.get("type", "string")
    facts: list[str] = []
    if kind == "array":
        items = prop.get("items", {})
        facts.append(f"a list of one or more of: {', '.join(_choices(items))}")
        if "minItems" in prop:
            facts.append(f"at least {prop['minItems']}")
        if "maxItems" in prop:
            facts.append(f"at most {prop['maxItems']}")
    elif _choices(prop):
        facts.append(f"one of: {', '.join(_choices(prop))}")
    else:
        names = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false"}
        facts.append(names.get(kind, kind))
        if "format" in prop:
            facts.append(f"format {prop['format']}")
        if "minLength" in prop:
            facts.append(f"at least {prop['minLength']} characters")
        if "maxLength" in prop:
            facts.append(f"at most {prop['maxLength']} characters")
        if "minimum" in prop:
            facts.append(f"minimum {prop['minimum']}")
        if "maximum" in prop:
            facts.append(f"maximum {prop['maximum']}")
    facts.append("required" if required else "optional")
    if "default" in prop:
        facts.append(f"default {json.dumps(prop['default'])}")
    label = " — ".join(x for x in (prop.get("title"), prop.get("description")) if x)
    return f"- {name} ({'; '.join(facts)})" + (f": {label}" if label else "")


def _example(prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type", "string")
    if kind == "boolean":
        return "<true|false>"
    if kind in ("integer", "number"):
        return f"<{kind}>"
    if kind == "array":
        return ["<choice>"]
    return "<choice>" if _choices(prop) else "<text>"


def render_pending(
    question_id: str, message: str, schema: dict[str, Any], expires_at: float, tool: str, *, in_view: bool = False
) -> CallToolResult:
    """The tool result that asks the model to put `message` to the person; `in_view`: the host shows the person the
    question in elicitkit's form view, which answers through `tool` itself."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = "\n".join(describe_field(k, p, k in required) for k, p in properties.items())
    example = {k: _example(p) for k, p in properties.items()}
    accept = json.dumps({"elicitId": question_id, "action": "accept", "content": example})
    expiry = datetime.fromtimestamp(expires_at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    instructions = (
        f"Ask the user the question in the conversation, then call the tool `{tool}` "
        f'with elicitId "{question_id}". Do not guess or invent the answer. '
        f"If the user accepts, call `{tool}` with {accept}; "
        f'if they decline, with {{"elicitId": "{question_id}", "action": "decline"}}; '
        f'to stop, with {{"elicitId": "{question_id}", "action": "cancel"}}. '
        f"The question expires at {expiry}."
    )
    shown = (
        "The user is being shown this question as a form in the conversation; when they answer it there, the tool "
        f"continues by itself and you need not call `{tool}`. Only if no form is shown to them: "
        if in_view
        else ""
    )
    text = (
        "This tool is waiting for an answer from the user before it can continue.\n\n"
        f"Question for the user: {message}\n\n" + (f"Fields:\n{fields}\n\n" if fields else "") + shown + instructions
    )
    pending = {
        "elicitId": question_id,
        "message": message,
        "schema": schema,
        "expiresAt": int(expires_at * 1000),
        "instructions": instructions,
    }
    if in_view:
        pending["answerTool"] = tool
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={META_KEY: pending}, _meta={META_KEY: pending}
    )


def error_result(text: str, meta: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta)


@dataclass(frozen=True, slots=True)
class SendResultArgs:
    elicit_id: str
    action: str
    content: Any


def parse_send_args(arguments: Any, tool: str) -> SendResultArgs | CallToolResult:
    """The system tool's arguments, or an error result saying what is wrong with them."""
    if not isinstance(arguments, Mapping):
        return error_result(f"{tool} needs arguments {{elicitId, action, content?}}")
    elicit_id, action = arguments.get("elicitId"), arguments.get("action")
    content = arguments.get("content")
    if not isinstance(elicit_id, str) or not elicit_id:
        return error_result(f"{tool}: elicitId must be the id given in the question")
    if action not in ("accept", "decline", "cancel"):
        return error_result(f'{tool}: action must be "accept", "decline" or "cancel"')
    if action != "accept" or content is None:
        # A link's accept carries nothing; a form's accept without content is refused with its question's fields.
        return SendResultArgs(elicit_id, action, None)
    if not isinstance(content, Mapping):
        return error_result(f"{tool}: content must be an object with the answer's fields")
    return SendResultArgs(elicit_id, action, dict(content))


def shape_tools(
    result: HandlerResult, fallback_tool: str, *, needed: bool, tasks: bool = False, view: bool = False
) -> HandlerResult:
    """A `tools/list` result with the fallback tool shown only when `needed`, and output schemas widened then;
    with `tasks`, every tool says it may run as a 2025-11-25 task; with `view`, every tool that may ask (all but
    the fallback tool, and those with a view of their own) names elicitkit's form view (`_meta.ui.resourceUri`)."""
    if isinstance(result, ListToolsResult):
        wire: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif isinstance(result, dict) and isinstance(result.get("tools"), list):
        wire = result
    else:
        return result
    tools: list[dict[str, Any]] = wire["tools"]
    if not needed:
        shaped = [t for t in tools if t.get("name") != fallback_tool]
    else:
        shaped = [
            {**t, "outputSchema": widen_output_schema(t["outputSchema"])} if t.get("outputSchema") else t for t in tools
        ]
    if tasks:
        shaped = [{**t, "execution": {"taskSupport": "optional", **t.get("execution", {})}} for t in shaped]
    if view:
        shaped = [_with_view(t) if t.get("name") != fallback_tool else t for t in shaped]
    return {**wire, "tools": shaped}


def _with_view(tool: dict[str, Any]) -> dict[str, Any]:
    meta = tool.get("_meta")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    ui = meta.get("ui")
    if isinstance(ui, Mapping) and "resourceUri" in ui:
        return tool  # the tool's own view wins
    meta["ui"] = {**(ui if isinstance(ui, Mapping) else {}), "resourceUri": VIEW_URI}
    return {**tool, "_meta": meta}
