"""`elicitkit ask`: a question from any program running inside a served tool, answered over the call's FIFO.

```sh
elicitkit ask confirm "Deploy 2.1?"
env=$(elicitkit ask choice "Which environment?" staging prod --value)
elicitkit ask form "Database settings" --schema schema.json
```

It prints the reply, `{"action", "content", ...}` (with `--value`, only the
answer's value), and exits 0 accept, 1 decline, 2 cancel, 3 timeout, 4 not
supported, 5 any other error, 64 for a bad command line. The standard library
only: any language can run it, or speak the same protocol itself (docs/shell.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["EXIT_CODES", "ask", "main"]

EXIT_CODES = {"accept": 0, "decline": 1, "cancel": 2, "timeout": 3, "not_supported": 4, "error": 5}
USAGE = 64  # EX_USAGE: argparse's own 2 would read as "cancelled"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: {message}\n")


def ask(request: dict[str, Any]) -> dict[str, Any]:
    """Send `request` to the serving process and return its reply (never polls: the reply comes on a FIFO)."""
    if os.environ.get("MCP_ELICIT_SUPPORTED") != "1":
        return {"action": "decline", "content": None, "error": "not_supported"}
    folder, fifo = os.environ.get("ELICITKIT_CALL_DIR"), os.environ.get("ELICITKIT_ASK")
    if not folder or not fifo or not Path(fifo).is_fifo():
        message = "not inside a tool served by elicitkit (no ELICITKIT_ASK)"
        return {"action": "error", "content": None, "error": "invalid_request", "message": message}
    base = Path(folder) / f"q.{os.getpid()}.{secrets.token_hex(6)}"
    request_file, reply_fifo = base.with_name(base.name + ".json"), base.with_name(base.name + ".fifo")
    try:
        with open(os.open(request_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            json.dump(request, f)
        os.mkfifo(reply_fifo, 0o600)
        reply = os.open(reply_fifo, os.O_RDWR)  # ours before the server can write, so nothing is lost
        try:
            with open(fifo, "w", encoding="utf-8") as channel:
                channel.write(base.name + "\n")
            line = _read_line(reply)
        finally:
            os.close(reply)
    finally:
        for path in (request_file, reply_fifo):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    body: dict[str, Any] = json.loads(line)
    return body


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def code_of(reply: dict[str, Any]) -> int:
    """The exit code for a reply: the error's kind when there was no answer, else the action."""
    return EXIT_CODES.get(str(reply.get("error") or reply.get("action")), EXIT_CODES["error"])


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="elicitkit ask", description="Ask the person, from inside a tool served by elicitkit.")
    kinds = parser.add_subparsers(dest="kind", required=True, parser_class=_Parser)
    common = _Parser(add_help=False)
    common.add_argument("--title", help="the field's label")
    common.add_argument("--description", help="help text under the field")
    common.add_argument("--timeout", type=float, help="seconds to wait (default: the server's)")
    common.add_argument("--field", default="value", help="the answer's key in content (default: value)")
    common.add_argument("--value", action="store_true", help="print only the answer's value (text as is)")
    for name, text in [("confirm", "yes or no"), ("text", "a line of text"), ("number", "a number")]:
        sub = kinds.add_parser(name, parents=[common], help=f"ask for {text}")
        sub.add_argument("message")
        sub.add_argument("--default")
        if name == "text":
            sub.add_argument("--min", type=int, dest="min_length")
            sub.add_argument("--max", type=int, dest="max_length")
            sub.add_argument("--format", choices=["email", "uri", "date", "date-time"])
        if name == "number":
            sub.add_argument("--integer", action="store_true")
            sub.add_argument("--min", type=float, dest="minimum")
            sub.add_argument("--max", type=float, dest="maximum")
    for name, text in [("choice", "one of OPTIONS"), ("choices", "any of OPTIONS (multi-select)")]:
        sub = kinds.add_parser(name, parents=[common], help=f"ask for {text}; an OPTION may be value:Title")
        sub.add_argument("message")
        sub.add_argument("options", nargs="+", metavar="OPTION")
        sub.add_argument(
            "--default", help="the preselected value" + ("s, comma-separated" if name == "choices" else "")
        )
        if name == "choices":
            sub.add_argument("--min", type=int, dest="min_items")
            sub.add_argument("--max", type=int, dest="max_items")
    form = kinds.add_parser("form", parents=[common], help="ask with a restricted JSON schema")
    form.add_argument("message")
    form.add_argument("--schema", required=True, help="a JSON file, - for stdin, or the JSON itself")
    url = kinds.add_parser("url", parents=[common], help="send the person to a URL")
    url.add_argument("message")
    url.add_argument("url")
    return parser


def _request(args: argparse.Namespace) -> dict[str, Any]:
    request: dict[str, Any] = {"message": args.message, "mode": "form"}
    if args.timeout is not None:
        request["timeout"] = args.timeout
    if args.kind == "url":
        return request | {"mode": "url", "url": args.url}
    if args.kind == "form":
        return request | {"schema": _schema_arg(args.schema)}
    prop = _property(args)
    for key in ("title", "description"):
        if getattr(args, key) is not None:
            prop[key] = getattr(args, key)
    schema: dict[str, Any] = {"type": "object", "properties": {args.field: prop}}
    if "default" not in prop:
        schema["required"] = [args.field]
    return request | {"schema": schema}


def _property(args: argparse.Namespace) -> dict[str, Any]:
    if args.kind == "confirm":
        prop: dict[str, Any] = {"type": "boolean"}
        if args.default is not None:
            prop["default"] = args.default.lower() in ("1", "true", "yes", "y")
        return prop
    if args.kind == "text":
        prop = {"type": "string"}
        for key, value in [("minLength", args.min_length), ("maxLength", args.max_length), ("format", args.format)]:
            if value is not None:
                prop[key] = value
        return prop | ({"default": args.default} if args.default is not None else {})
    if args.kind == "number":
        prop = {"type": "integer" if args.integer else "number"}
        for key, value in [("minimum", args.minimum), ("maximum", args.maximum)]:
            if value is not None:
                prop[key] = int(value) if args.integer else value
        if args.default is not None:
            prop["default"] = int(args.default) if args.integer else float(args.default)
        return prop
    values = [o.partition(":")[0] for o in args.options]
    titled = any(":" in o for o in args.options)
    options = [{"const": v, "title": o.partition(":")[2] or v} for v, o in zip(values, args.options, strict=True)]
    if args.kind == "choice":
        prop = {"type": "string", "oneOf": options} if titled else {"type": "string", "enum": values}
        return prop | ({"default": args.default} if args.default is not None else {})
    prop = {"type": "array", "items": {"anyOf": options} if titled else {"type": "string", "enum": values}}
    for key, value in [("minItems", args.min_items), ("maxItems", args.max_items)]:
        if value is not None:
            prop[key] = value
    return prop | ({"default": args.default.split(",")} if args.default is not None else {})


def _schema_arg(given: str) -> Any:
    text = sys.stdin.read() if given == "-" else given if given.lstrip().startswith("{") else Path(given).read_text()
    return json.loads(text)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        request = _request(args)
    except (OSError, ValueError) as exc:
        print(f"elicitkit ask: {exc}", file=sys.stderr)
        return USAGE
    reply = ask(request)
    code = code_of(reply)
    if args.value and code == 0 and args.kind != "url":
        value = (reply.get("content") or {}).get(args.field)
        print(value if isinstance(value, str) else json.dumps(value))
    else:
        print(json.dumps(reply, ensure_ascii=False))
    if code != 0 and reply.get("message"):
        print(f"elicitkit ask: {reply['message']}", file=sys.stderr)
    return code
