"""`elicitkit demo`: the deploy-desk example answered by a scripted person on both eras, narrated.

It runs examples/deploy_desk.py (which the wheel ships as
elicitkit/_examples/deploy_desk.py) or any module defining `server`, and prints
what each side said.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData, TextContent

from elicitkit._schema.choices import choices_of
from elicitkit.testing import ScriptedHuman, accept, call_through_model, decline

__all__ = ["run_demo"]

_EXAMPLE = "deploy_desk.py"

# (tool, arguments, the person's replies in order)
Scene = tuple[str, dict[str, Any], list[ElicitResult]]
SCENES: list[Scene] = [
    (
        "deploy",
        {"version": "2.1"},
        [
            accept({"approved": True, "note": "after the standup"}),
            accept({"value": "prod-eu"}),
            accept({"value": ["lint", "unit tests"]}),
        ],
    ),
    ("deploy", {"version": "2.2"}, [decline()]),
    ("schedule", {"version": "2.3"}, [accept({"when": "tonight", "notify": False})]),
    (
        "deploy",
        {"version": "2.4"},
        # The first list breaks min_items=1: it is refused and the person is asked again, saying why.
        [accept({"approved": True}), accept({"value": "staging"}), accept({"value": []}), accept({"value": ["lint"]})],
    ),
]

# (client mode, whether the client shows forms, heading)
ERAS = [
    ("legacy", True, "MCP 2025-11-25 — the server sends elicitation/create on the session"),
    ("auto", True, "MCP 2026-07-28 — the call returns InputRequiredResult, the client retries with the answers"),
    ("legacy", False, "A client that cannot show forms (2025-11-25) — the model asks in chat, answers via a tool"),
    ("auto", False, "A client that cannot show forms (2026-07-28) — the model asks in chat, answers via a tool"),
]


def _find_example(given: str | None) -> Path:
    if given:
        path = Path(given)
        if not path.is_file():
            raise SystemExit(f"elicitkit demo: {path} is not a file; pass --server PATH to a server module")
        return path
    packaged = Path(__file__).resolve().parent / "_examples" / _EXAMPLE  # installed from a wheel or an sdist
    checkout = Path(__file__).resolve().parents[2] / "examples" / _EXAMPLE  # an editable install of a clone
    for path in (packaged, checkout):
        if path.is_file():
            return path
    raise SystemExit("elicitkit demo: this installation has no deploy-desk example; pass --server PATH")


def _load_server(path: Path) -> MCPServer[Any]:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"elicitkit demo: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered first, as a normal import would, so pydantic can resolve the module's annotations.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    server = getattr(module, "server", None)
    if not isinstance(server, MCPServer):
        raise SystemExit(f"elicitkit demo: {path} defines no MCPServer named `server`")
    return server


def _fields(params: ElicitRequestParams) -> str:
    if not isinstance(params, ElicitRequestFormParams):
        return ""
    schema = params.requested_schema
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "string")
        choices = choices_of(prop.get("items", {}) if kind == "array" else prop) or []
        text = f"{name}: {kind}" + (f" of {'|'.join(choices)}" if choices else "")
        parts.append(text + (" (required)" if name in required else ""))
    return "  [" + ", ".join(parts) + "]"


def _narrating(reply: ElicitResult, say: Callable[[str], None]) -> Callable[[ElicitRequestParams], ElicitResult]:
    def answer(params: ElicitRequestParams) -> ElicitResult:
        say(f"   ? server asks: {' '.join(params.message.split())}{_fields(params)}")
        content = f" {json.dumps(reply.content)}" if reply.content is not None else ""
        say(f"   > person: {reply.action}{content}")
        return reply

    return answer


async def _demo(server: MCPServer[Any], say: Callable[[str], None]) -> None:
    for mode, shows_forms, title in ERAS:
        say(f"\n== {title} ==")
        scenes = SCENES if shows_forms else SCENES[:2]
        for tool, arguments, replies in scenes:
            human = ScriptedHuman(*(_narrating(r, say) for r in replies))
            args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            say(f"-> {tool}({args})")
            if shows_forms:
                async with Client(server, mode=mode, elicitation_callback=human) as client:
                    result = await client.call_tool(tool, arguments)
            else:
                async with Client(server, mode=mode) as client:
                    result = await call_through_model(client, tool, arguments, _via_model(human, say))
            text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
            say(f"   = {'error: ' if result.is_error else ''}{text}")


def _via_model(human: ScriptedHuman, say: Callable[[str], None]) -> Callable[[Any, ElicitRequestParams], Any]:
    async def relay(context: Any, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        say("   (tool result: a pending question for the model to ask; the model asks the person in chat)")
        reply = await human(context, params)
        say("   (the model calls sendElicitationResult with the answer; the suspended tool resumes)")
        return reply

    return relay


def run_demo(server_path: str | None) -> None:
    path = _find_example(server_path)
    server = _load_server(path)
    # The SDK logs every failed tool call at INFO; the transcript already shows them.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    # The audit trail (one record per question and answer) would repeat the transcript line by line.
    logging.getLogger("elicitkit.audit").setLevel(logging.WARNING)
    print(f"elicitkit demo: {path.name} answered by a scripted person")
    anyio.run(_demo, server, print)
    print("\nSame tool code on both eras, with or without forms; every answer validated before the tool saw it.")
