"""The `elicitkit` command.

`elicitkit call SERVER TOOL` calls a tool, answering its questions at the
terminal (`elicitkit._term`); `elicitkit tools SERVER` lists tools.
`elicitkit demo` runs the deploy-desk example against a scripted person
(`elicitkit._demo`). `elicitkit serve DIR` serves a folder of shell tools and
`elicitkit ask` asks from inside one (`elicitkit.shell`).

Only the standard library is imported up front: each command imports what it
needs, so `elicitkit ask`, run once per question inside a tool, starts fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_types import ElicitResult

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ask"]:
        # `elicitkit ask` has its own parser (and its own -h): everything after `ask` is its own, as typed.
        from elicitkit.shell._ask import main as ask_main

        return ask_main(argv[1:])
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
    call.add_argument(
        "--plain",
        action="store_true",
        help="numbered prompts, one line each, nothing redrawn (screen readers; automatic when TERM=dumb)",
    )
    tools = commands.add_parser("tools", help="list a server's tools and their input schemas")
    tools.add_argument("server", metavar="SERVER", help=server_help)
    tools.add_argument("--protocol", choices=["auto", "2025-11-25", "2026-07-28"], default="auto", help=protocol_help)
    tools.add_argument("--json", action="store_true", help="print the raw tools/list result as JSON")
    serve = commands.add_parser("serve", help="serve a folder of shell tools (mcp-bash's layout) as an MCP server")
    serve.add_argument("folder", metavar="DIR", help="a project folder with tools/<name>/tool.meta.json, or tools/")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp (default: stdio)")
    serve.add_argument("--name", help="the server's name (default: the folder's)")
    serve.add_argument(
        "--store", help="where questions and runs live: memory://, sqlite:///FILE, redis://..., redis+cluster://..."
    )
    serve.add_argument(
        "--plaintext-store",
        action="store_true",
        help="let a durable --store run without ELICITKIT_SECRET, keeping it in plaintext (tests, local development)",
    )
    serve.add_argument(
        "--timeout", type=float, help="seconds a tool may run unless its timeoutSecs says (default: none)"
    )
    serve.add_argument("--question-timeout", type=float, help="seconds a question waits (default: 300)")
    serve.add_argument(
        "--session-idle-timeout",
        type=float,
        help="seconds a 2025-11-25 HTTP session may go without a request before it is closed (default: 600)",
    )
    serve.add_argument("--inherit-env", action="store_true", help="give tools this environment, not a minimal one")
    serve.add_argument("--fallback", choices=["llm", "error"], default="llm", help="for clients without forms")
    serve.add_argument("--public-url", help="where elicitkit's pages are reached (default: the --http address)")
    # Listed for the top-level help only: `main` hands `elicitkit ask …` to its own parser before this one runs.
    commands.add_parser("ask", help="ask the person from inside a served tool (see: elicitkit ask -h)")
    sdk = commands.add_parser("shell-sdk", help="print the shell SDK to eval (or its path, with --path)")
    sdk.add_argument("--path", action="store_true", help="print the path of tool-sdk.sh instead")
    args = parser.parse_args(argv)
    if args.command == "shell-sdk":
        from elicitkit.shell import sdk_path

        print(sdk_path() if args.path else sdk_path().read_text(encoding="utf-8"), end="\n" if args.path else "")
        return 0
    if args.command == "serve":
        return _serve(args)
    if args.command in ("call", "tools"):
        return _client_command(parser, args)

    if args.command == "demo":
        from elicitkit._demo import run_demo

        run_demo(args.server)
    return 0


def _client_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import anyio

    try:
        from rich.console import Console

        from elicitkit._term import call as term
        from elicitkit._term.arguments import UsageError, parse_arguments
        from elicitkit._term.reach import Unreachable
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
        parse_arguments(args.arg, args.args)  # malformed arguments and answers are refused before connecting
        answers = _answers(args.answers)
        options = {"protocol": args.protocol, "raw": args.json, "answers": answers, "console": console}
        return anyio.run(partial(term.call, args.server, args.tool, args.arg, args.args, plain=args.plain, **options))
    except KeyboardInterrupt:
        console.print("Interrupted.")
        return 130
    except UsageError as exc:
        console.print(f"elicitkit {args.command}: {safe(exc)}", style="red", soft_wrap=True)
        return 2
    except Unreachable as exc:
        console.print(f"elicitkit {args.command}: {safe(exc)}", style="red", soft_wrap=True)
        if exc.output:
            console.print(exc.output, highlight=False, soft_wrap=True)
        return 3
    except Exception as exc:  # one clear line, no traceback
        console.print(f"elicitkit {args.command}: {type(exc).__name__}: {safe(exc)}", style="red", soft_wrap=True)
        return 3


def _serve(args: argparse.Namespace) -> int:
    from elicitkit.shell import _handoff

    try:
        # Before anything else: the secrets leave this process's environment (it executes itself again,
        # handing them over on a pipe), so no tool can read them in /proc/<pid>/environ.
        moved = _handoff.taken()
        _handoff.hand_over()
    except (ValueError, OSError) as exc:
        print(f"elicitkit serve: {exc}", file=sys.stderr)
        return 2

    from elicitkit._elicitation import DEFAULT_SESSION_IDLE_TIMEOUT
    from elicitkit._timeouts import SERVER_DEFAULT
    from elicitkit.shell import FolderError
    from elicitkit.shell._serve import serve

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)  # stdout is the protocol on stdio
    try:
        serve(
            args.folder,
            environ={**os.environ, **moved},
            http=args.http,
            name=args.name,
            store=args.store,
            plaintext_store=args.plaintext_store,
            timeout=args.timeout,
            question_timeout=args.question_timeout if args.question_timeout is not None else SERVER_DEFAULT,
            session_idle_timeout=args.session_idle_timeout or DEFAULT_SESSION_IDLE_TIMEOUT,
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
    from mcp_types import ElicitResult

    from elicitkit._term.arguments import UsageError

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
