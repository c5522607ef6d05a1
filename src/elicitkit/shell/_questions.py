"""A shell tool's question, read from what the script wrote, asked through `hitl`, and its reply.

Both ways a script asks (mcp-bash's request file, and elicitkit's ask FIFO)
carry the same JSON: `{"message", "mode": "form", "schema"}` or `{"message",
"mode": "url", "url"}`, optionally `"timeout"` in seconds. The schema may also
be a string holding the schema's JSON (the shell SDK sends a caller's schema
so, and it is read as exactly one object). A request is strict JSON: a key
given twice, or `NaN`, is refused, since readers disagree on what it means.
Every question goes through `Elicitation.elicit` / `elicit_url`, so the answer
is validated before the script sees it, and every route, hook, store and
channel applies.

The reply is mcp-bash's `{"action", "content"}`, where `action` is `accept`,
`decline`, `cancel` or `error` (mcp-bash's own word for "no answer"), plus
`"error"` saying why (`timeout`, `not_supported`, `invalid_request`,
`refused`) and, for links, `"elicitationId"`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from elicitkit._core.kinds import new_id
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    SchemaError,
)
from elicitkit._mcp import ToolContext
from elicitkit._results import Accepted, Declined
from elicitkit._timeouts import Timeout

if TYPE_CHECKING:
    from elicitkit._elicitation import Elicitation

__all__ = ["Reply", "ShellQuestion", "ask", "parse"]

logger = logging.getLogger("elicitkit.shell")

Origin = Literal["file", "fifo"]  # mcp-bash's request file, or elicitkit's ask FIFO
ErrorKind = Literal["timeout", "not_supported", "invalid_request", "refused"]
MAX_REQUEST = 256 * 1024


class BadRequest(ValueError):
    """What the script wrote is not a question elicitkit can ask."""


@dataclass(frozen=True)
class ShellQuestion:
    message: str
    mode: Literal["form", "url"]
    schema: dict[str, Any]
    url: str
    timeout: float | None  # None: the bridge's default
    origin: Origin = "fifo"


@dataclass(frozen=True)
class Reply:
    action: Literal["accept", "decline", "cancel", "error"]
    content: dict[str, Any] | None = None
    error: ErrorKind | None = None
    detail: str | None = None
    elicitation_id: str | None = None

    def to_json(self) -> str:
        body: dict[str, Any] = {"action": self.action, "content": self.content}
        if self.error is not None:
            body["error"] = self.error
        if self.detail is not None:
            body["message"] = self.detail
        if self.elicitation_id is not None:
            body["elicitationId"] = self.elicitation_id
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def parse(raw: bytes, origin: Origin = "fifo") -> ShellQuestion:
    """Read a request as a script wrote it; `BadRequest` says what is wrong."""
    if len(raw) > MAX_REQUEST:
        raise BadRequest(f"the request is larger than {MAX_REQUEST} bytes")
    body = _strict_json(raw, "the request")
    if not isinstance(body, dict):
        raise BadRequest("the request must be a JSON object")
    message = body.get("message")
    if not isinstance(message, str) or not message.strip():
        raise BadRequest('the request needs a non-empty "message"')
    mode = body.get("mode") or "form"
    timeout = body.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0
    ):
        raise BadRequest('"timeout" must be a positive number of seconds')
    if mode == "url":
        url = body.get("url")
        if not isinstance(url, str) or not url:
            raise BadRequest('a "url" request needs a "url"')
        return ShellQuestion(message, "url", {}, url, timeout, origin)
    if mode != "form":
        raise BadRequest(f'"mode" must be "form" or "url", not {mode!r}')
    schema = body.get("schema", body.get("requestedSchema"))
    if isinstance(schema, str):
        schema = _strict_json(schema, 'the "schema" text')
    if not isinstance(schema, dict):
        raise BadRequest('a form request needs a "schema" object')
    return ShellQuestion(message, "form", _spec_shapes(schema), "", timeout, origin)


def _strict_json(raw: bytes | str, what: str) -> Any:
    """JSON as every reader reads it alike: no key twice in an object, no NaN or Infinity."""
    try:
        return json.loads(raw, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"{what} is not JSON: {exc}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    body = dict(pairs)
    if len(body) != len(pairs):
        keys = [key for key, _ in pairs]
        twice = next(key for key in keys if keys.count(key) > 1)
        raise BadRequest(f"the request gives {twice!r} twice")
    return body


def _no_constant(name: str) -> Any:
    raise BadRequest(f"{name} is not a JSON number")


def _spec_shapes(schema: dict[str, Any]) -> dict[str, Any]:
    """mcp-bash writes a titled multi-select as `items.oneOf`; the spec (SEP-1330) says `items.anyOf`."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return schema
    fixed = {}
    for name, prop in properties.items():
        items = prop.get("items") if isinstance(prop, Mapping) else None
        if isinstance(items, Mapping) and "oneOf" in items and "anyOf" not in items:
            rest = {k: v for k, v in items.items() if k != "oneOf"}
            prop = {**prop, "items": {**rest, "anyOf": items["oneOf"]}}
        fixed[name] = prop
    return {**schema, "properties": fixed}


async def ask(hitl: Elicitation, ctx: ToolContext, question: ShellQuestion, default_timeout: Timeout) -> Reply:
    """Ask `question` and return what the script is told; nothing the person typed is logged."""
    timeout = question.timeout if question.timeout is not None else default_timeout
    try:
        if question.mode == "url":
            elicitation_id = new_id()
            opened = await hitl.elicit_url(
                ctx, question.message, question.url, timeout=timeout, elicitation_id=elicitation_id
            )
            return Reply(opened.action, elicitation_id=elicitation_id)
        answer = await hitl.elicit(ctx, question.message, question.schema, timeout=timeout)
    except ElicitationTimeout as exc:
        return Reply("error", error="timeout", detail=f"no answer within {exc.timeout:g} seconds")
    except ElicitationNotSupported as exc:
        # mcp-bash's word for a client that cannot ask: a synthetic decline.
        return Reply("decline", error="not_supported", detail=str(exc))
    except (SchemaError, ValueError) as exc:
        if isinstance(exc, InvalidElicitationContent | ElicitationClientError):
            return Reply("error", error="refused", detail=str(exc))
        return Reply("error", error="invalid_request", detail=str(exc))
    except ElicitationError as exc:  # a veto, the client's error, an invalid answer: the script gets no content
        return Reply("error", error="refused", detail=str(exc))
    if isinstance(answer, Accepted):
        return Reply("accept", content=dict(answer.data))  # validated, defaults applied
    return Reply("decline" if isinstance(answer, Declined) else "cancel")
