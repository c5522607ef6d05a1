"""What becomes of a finished script: its stdout, exit status, `mcp_fail` and embedded files, as a tool result.

- Exit 0: stdout is the result. A CallToolResult as mcp-bash's
  `mcp_result_success` prints it is taken as it is; other text is one text
  item, unchanged (nothing added, nothing stripped), and when it is a JSON
  object it is the `structuredContent` too, as mcp-bash sets it.
- `mcp_fail CODE MESSAGE [DATA]` (the tool error file): that JSON-RPC error.
- Another exit: in an mcp-bash project (one with `server.d/`), the JSON-RPC
  error mcp-bash answers with: a `{code, message}` the script printed, else
  -32603 naming stdout ("Tool failed") or stderr's first line. Elsewhere an
  error result the model can read, with stderr's tail.
- Files named through `mcp_result_text_with_resource` (the resources file)
  are embedded after the text, read only when they are inside the call's roots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import mimetypes
from pathlib import Path
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    TextContent,
    TextResourceContents,
)
from pydantic import ValidationError

from elicitkit.shell._roots import Root

__all__ = ["Finished", "tool_result", "timed_out"]

logger = logging.getLogger("elicitkit.shell")

MAX_EMBEDDED = 10 * 1024 * 1024  # bytes of one embedded file


class Finished:
    """A script that has exited: what it printed and left behind."""

    def __init__(
        self,
        name: str,
        code: int | None,
        stdout: str,
        stderr: str,
        *,
        overflowed: int | None = None,
        tool_error: bytes | None = None,
        resources: bytes | None = None,
    ) -> None:
        self.name, self.code, self.stdout, self.stderr = name, code, stdout, stderr
        self.overflowed = overflowed  # the output limit it went past, if it did
        self.tool_error, self.resources = tool_error, resources


def tool_result(done: Finished, *, mcp_bash: bool, roots: list[Root]) -> CallToolResult:
    """The result of the call `done` was, or the JSON-RPC error it fails with (raised).

    Raises:
        MCPError: the script called `mcp_fail`, or (in an mcp-bash project) exited non-zero.
    """
    failure = _tool_error(done.tool_error)
    if failure is not None:
        raise failure
    if done.overflowed is not None:
        message = f"Tool {done.name} printed more than {done.overflowed} bytes"
        if mcp_bash:
            raise MCPError(code=-32603, message=f"Tool output exceeded {done.overflowed} bytes")
        return error_result(message, done.stderr, exit_code=done.code)
    if done.code != 0:
        if mcp_bash:
            raise _mcp_bash_failure(done)
        message = done.stdout.strip() or f"Tool {done.name} exited with status {done.code}"
        return error_result(message, done.stderr, exit_code=done.code)
    result = _success(done.stdout)
    embedded = _embedded(done.resources, roots)
    meta = {**(result.meta or {}), "exitCode": 0}  # as mcp-bash marks every result
    return result.model_copy(update={"content": [*result.content, *embedded], "meta": meta})


def timed_out(name: str, limit: float, stderr: str) -> CallToolResult:
    return error_result(f"Tool {name} timed out after {limit:g} seconds", stderr, exit_code=None)


def error_result(message: str, stderr: str, *, exit_code: int | None) -> CallToolResult:
    text = message if not stderr.strip() or stderr.strip() in message else f"{message}\n{stderr.rstrip()}"
    meta: dict[str, Any] = {} if exit_code is None else {"exitCode": exit_code}
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta or None)


def _success(text: str) -> CallToolResult:
    parsed: Any = None
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        with contextlib.suppress(json.JSONDecodeError):
            parsed = json.loads(stripped)
    if isinstance(parsed, dict) and isinstance(parsed.get("content"), list):
        # A CallToolResult, as mcp-bash's mcp_result_success / mcp_result_error print it.
        with contextlib.suppress(ValidationError):
            return CallToolResult.model_validate(parsed)
    content: list[ContentBlock] = [TextContent(type="text", text=text)] if text else []
    if isinstance(parsed, dict):  # JSON output is structured content too, as mcp-bash gives it
        return CallToolResult(content=content, structured_content=parsed)
    return CallToolResult(content=content)


def _tool_error(written: bytes | None) -> MCPError | None:
    """`mcp_fail CODE MESSAGE [DATA]`: mcp-bash answers the call with that JSON-RPC error."""
    if not written:
        return None
    body = _error_body(written.decode("utf-8", "replace"))
    if body is not None:
        return body
    return MCPError(code=-32603, message="Tool failed", data=written.decode("utf-8", "replace"))


def _error_body(text: str) -> MCPError | None:
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return None
    code = body.get("code") if isinstance(body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(code, int | float) and not isinstance(code, bool) and code == int(code) and isinstance(message, str):
        return MCPError(code=int(code), message=message, data=body.get("data"))
    return None


def _mcp_bash_failure(done: Finished) -> MCPError:
    """A script that exited non-zero, failed as mcp-bash fails the call."""
    if done.stdout:
        printed = _error_body(done.stdout.strip())
        return printed or MCPError(code=-32603, message="Tool failed", data=done.stdout)
    tail = done.stderr.rstrip("\n")  # as mcp-bash reads it: $(...) drops the final newlines
    first = tail.lstrip("\n").split("\n", 1)[0].replace("\r", "") if tail.strip() else ""
    meta: dict[str, Any] = {"exitCode": done.code} | ({"stderr": tail} if tail else {})
    data: dict[str, Any] = {"exitCode": done.code, "_meta": meta} | ({"stderrTail": tail} if tail else {})
    return MCPError(code=-32603, message=first or "Tool failed", data=data)


def _embedded(written: bytes | None, roots: list[Root]) -> list[EmbeddedResource]:
    """The files the script named for embedding (a JSON list of {path, mimeType?, uri?}, or path lines)."""
    if not written or not written.strip():
        return []
    return [item for spec in _specs(written) if (item := _embed(spec, roots)) is not None]


def _specs(written: bytes) -> list[dict[str, str]]:
    text = written.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        # mcp-bash's older form: one "path<TAB>mimeType<TAB>uri" a line.
        lines = [line.split("\t") for line in text.splitlines() if line.strip()]
        return [
            {"path": p[0], "mimeType": p[1] if len(p) > 1 else "", "uri": p[2] if len(p) > 2 else ""} for p in lines
        ]
    items = body if isinstance(body, list) else [body]
    specs = []
    for item in items:
        if isinstance(item, str):
            specs.append({"path": item})
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            specs.append({k: v for k, v in item.items() if isinstance(v, str)})
    return specs


def _embed(spec: dict[str, str], roots: list[Root]) -> EmbeddedResource | None:
    path = Path(spec["path"]).resolve()
    if not any(path == root.path or path.is_relative_to(root.path) for root in roots):
        logger.warning("shell tool: not embedded (outside the call's roots): %s", spec["path"])
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_EMBEDDED:
            raise OSError("not a regular file within the size limit")
        data = path.read_bytes()
    except OSError as exc:
        logger.warning("shell tool: not embedded (%s): %s", exc, spec["path"])
        return None
    mime = spec.get("mimeType") or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    uri = spec.get("uri") or path.as_uri()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        blob = base64.b64encode(data).decode("ascii")
        return EmbeddedResource(type="resource", resource=BlobResourceContents(uri=uri, mime_type=mime, blob=blob))
    if not (mime.startswith("text/") or mime.endswith(("json", "xml", "yaml", "javascript")) or "+" in mime):
        blob = base64.b64encode(data).decode("ascii")
        return EmbeddedResource(type="resource", resource=BlobResourceContents(uri=uri, mime_type=mime, blob=blob))
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime, text=text))
