"""The `elicitkit` command.

`elicitkit call SERVER TOOL` calls a tool, answering its questions at the
terminal (`elicitkit._term`); `elicitkit tools SERVER` lists tools.
`elicitkit demo` runs the deploy-desk example (examples/deploy_desk.py, which
the wheel ships as elicitkit/_examples/deploy_desk.py) against a scripted person
on both MCP protocol eras and prints what each side said.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData, TextContent

from elicitkit._schema.choices import choices_of
from elicitkit._timeouts import SERVER_DEFAULT
from elicitkit.testing import ScriptedHuman, accept, call_through_model, decline

__all__ = ["main"]

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="elicitkit", description="Human-in-the-loop elicitation for MCP servers.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the deploy-desk example against a scripted person on both eras")
    demo.add_argument("--server", help="path to a module defining `server` (default: the deploy-desk example)")
    server_help = "an http(s)://…/mcp URL, or the command line that starts a stdio server (quote it)"
    protocol_help = "the protocol revision to speak (default: the newest the server speaks)"
    call = commands.add_parser("call", help="call a tool, answering its questions at this terminal")
    call.add_argument("server", metavar="SERVER", help=server_help)
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE", help="an argument (JSON or text)")
    call.add_argument("--args", metavar="JSON", help="all arguments as one JSON object")
    call.add_argument("--protocol", choices=["auto", "2025-11-25", "2026-07-28"], default="auto", help=protocol_help)
    call.add_argument("--json", action="store_true", help="print the raw result as JSON (for scripts)")
    call.add_argument("--answers", metavar="FILE", help="answer questions from a JSON list of {action, content}")
    tools = commands.add_parser("tools", help="list a server's tools and their input schemas")
    tools.add_argument("server", metavar="SERVER", help=server_help)
    tools.add_argument("--protocol", choices=["auto", "2025-11-25", "2026-07-28"], default="auto", help=protocol_help)
    tools.add_argument("--json", action="store_true", help="print the raw tools/list result as JSON")
    serve = commands.add_parser("serve", help="serve a folder of shell tools (mcp-bash's layout) as an MCP server")
    serve.add_argument("folder", metavar="DIR", help="a project folder with tools/<name>/tool.meta.json, or tools/")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp (default: stdio)")
    serve.add_argument("--name", help="the server's name (default: the folder's)")
    serve.add_argument("--store", help="where questions and runs live: memory://, sqlite:///FILE, redis://...")
    serve.add_argument(
        "--timeout", type=float, help="seconds a tool may run unless its timeoutSecs says (default: none)"
    )
    serve.add_argument("--question-timeout", type=float, help="seconds a question waits (default: 300)")
    serve.add_argument("--inherit-env", action="store_true", help="give tools this environment, not a minimal one")
    serve.add_argument("--fallback", choices=["llm", "error"], default="llm", help="for clients without forms")
    serve.add_argument("--public-url", help="where elicitkit's pages are reached (default: the --http address)")
    ask = commands.add_parser("ask", help="ask the person from inside a served tool (see: elicitkit ask -h)")
    ask.add_argument("rest", nargs=argparse.REMAINDER)
    sdk = commands.add_parser("shell-sdk", help="print the shell SDK to eval (or its path, with --path)")
    sdk.add_argument("--path", action="store_true", help="print the path of tool-sdk.sh instead")
    args = parser.parse_args(argv)
    if args.command == "ask":
        from elicitkit.shell._ask import main as ask_main

        return ask_main(args.rest)
    if args.command == "shell-sdk":
        from elicitkit.shell import sdk_path

        print(sdk_path() if args.path else sdk_path().read_text(encoding="utf-8"), end="\n" if args.path else "")
        return 0
    if args.command == "serve":
        return _serve(args)
    if args.command in ("call", "tools"):
        return _client_command(parser, args)

    if args.command == "demo":
        path = _find_example(args.server)
        server = _load_server(path)
        # The SDK logs every failed tool call at INFO; the transcript already shows them.
        logging.getLogger("mcp").setLevel(logging.WARNING)
        # The audit trail (one record per question and answer) would repeat the transcript line by line.
        logging.getLogger("elicitkit.audit").setLevel(logging.WARNING)
        print(f"elicitkit demo: {path.name} answered by a scripted person")
        anyio.run(_demo, server, print)
        print("\nSame tool code on both eras, with or without forms; every answer validated before the tool saw it.")
    return 0


def _client_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        from rich.console import Console

        from elicitkit._term import call as term
        from elicitkit._term.text import safe
    except ImportError:  # pragma: no cover - depends on the installation
        raise SystemExit("elicitkit call needs the terminal extras: pip install 'elicitkit[cli]'") from None
    console = Console(stderr=args.json)  # with --json, stdout carries only the result
    logging.getLogger("mcp").setLevel(logging.WARNING)
    try:
        if args.command == "tools":
            return anyio.run(
                lambda: term.list_tools(args.server, protocol=args.protocol, raw=args.json, console=console)
            )
        term.parse_arguments(args.arg, args.args)  # malformed arguments and answers are refused before connecting
        answers = _answers(args.answers)
        options = {"protocol": args.protocol, "raw": args.json, "answers": answers, "console": console}
        return anyio.run(partial(term.call, args.server, args.tool, args.arg, args.args, **options))
    except KeyboardInterrupt:
        console.print("Interrupted.")
        return 130
    except Exception as exc:  # one clear line, no traceback
        cause: BaseException = exc
        while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
            cause = cause.exceptions[0]  # the SDK's task groups wrap the one error that matters
        if isinstance(cause, term.UsageError):
            console.print(f"elicitkit {args.command}: {safe(cause)}", style="red", soft_wrap=True)
            return 2
        # The server could not be reached, or failed the call.
        console.print(f"elicitkit {args.command}: {type(cause).__name__}: {safe(cause)}", style="red", soft_wrap=True)
        return 3


def _serve(args: argparse.Namespace) -> int:
    from elicitkit.shell import FolderError
    from elicitkit.shell._serve import serve

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)  # stdout is the protocol on stdio
    try:
        serve(
            args.folder,
            http=args.http,
            name=args.name,
            store=args.store,
            timeout=args.timeout,
            question_timeout=args.question_timeout if args.question_timeout is not None else SERVER_DEFAULT,
            inherit_env=args.inherit_env,
            fallback=args.fallback,
            public_url=args.public_url,
        )
    except (FolderError, ValueError, OSError) as exc:
        print(f"elicitkit serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def _answers(path: str | None) -> list[ElicitResult] | None:
    """The scripted answers, all checked before anything is called."""
    from elicitkit._term.call import UsageError

    if path is None:
        return None
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"--answers: cannot read {path}: {exc}") from None
    if not isinstance(loaded, list):
        raise UsageError("--answers takes a JSON list of {action, content} objects")
    try:
        return [ElicitResult.model_validate(answer) for answer in loaded]
    except ValueError:
        raise UsageError('--answers: every entry must be {"action": accept|decline|cancel, "content": {...}}') from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
