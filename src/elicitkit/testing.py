"""Test helpers for servers that use elicitkit: a scripted person and a real HTTP server.

```python
human = ScriptedHuman(accept({"approved": True}), decline())
async with Client(server, elicitation_callback=human) as client:
    result = await client.call_tool("deploy", {"version": "2.1"})
assert [q.message for q in human.transcript] == ["Deploy 2.1?", ...]
```
"""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

__all__ = [
    "Exchange",
    "ScriptedHuman",
    "accept",
    "call_through_model",
    "cancel",
    "decline",
    "serve_app",
    "serve_http",
]

Reply = ElicitResult | ErrorData
Script = Reply | Callable[[ElicitRequestParams], Reply]


def accept(content: Mapping[str, Any] | None = None) -> ElicitResult:
    """The person submits the form with `content`."""
    return ElicitResult(action="accept", content=dict(content) if content is not None else None)


def decline() -> ElicitResult:
    """The person says no."""
    return ElicitResult(action="decline")


def cancel() -> ElicitResult:
    """The person dismisses the question."""
    return ElicitResult(action="cancel")


@dataclass(frozen=True, slots=True)
class Exchange:
    """One question the scripted person saw, and what they replied."""

    message: str
    schema: dict[str, Any] | None
    reply: Reply


class ScriptedHuman:
    """An elicitation callback for `mcp.Client` that answers from a script.

    Each script entry answers one question, in order: an `ElicitResult`
    (`accept(...)`, `decline()`, `cancel()`), an `ErrorData`, or a callable
    that receives the request params and returns one. The last entry repeats
    when `repeat_last=True`. Every exchange is recorded in `transcript`.
    """

    def __init__(self, *script: Script, repeat_last: bool = False) -> None:
        self._script = list(script)
        self._repeat_last = repeat_last
        self.transcript: list[Exchange] = []
        self._asked = anyio.Event()

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> Reply:
        if not self._script:
            raise AssertionError(f"ScriptedHuman has no answer left for {params.message!r}")
        entry = self._script[0] if self._repeat_last and len(self._script) == 1 else self._script.pop(0)
        reply = entry(params) if callable(entry) else entry
        schema = params.requested_schema if isinstance(params, ElicitRequestFormParams) else None
        self.transcript.append(Exchange(params.message, schema, reply))
        self._asked.set()
        return reply

    async def wait_for_question(self) -> None:
        """Return once the person has been asked anything since the last call."""
        await self._asked.wait()
        self._asked = anyio.Event()


@asynccontextmanager
async def serve_http(server: MCPServer[Any], **app_options: Any) -> AsyncIterator[str]:
    """Serve `server` over real streamable HTTP on 127.0.0.1 (a free port); yield the `/mcp` URL.

    `app_options` go to `server.streamable_http_app(...)`. Needs uvicorn
    (`pip install 'elicitkit[dev]'`).
    """
    async with serve_app(server.streamable_http_app(**app_options)) as base:
        yield f"{base}{app_options.get('streamable_http_path', '/mcp')}"


@asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    """Serve any ASGI app (with its lifespan) on 127.0.0.1 at a free port; yield its base URL."""
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("serve_app needs uvicorn: pip install 'elicitkit[dev]'") from None

    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    started = anyio.Event()

    async def serve() -> None:
        original = http.startup

        async def startup(sockets: list[socket.socket] | None = None) -> None:
            await original(sockets=sockets)
            started.set()

        http.startup = startup  # type: ignore[method-assign]
        await http.serve(sockets=[sock])

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        with anyio.fail_after(10):
            await started.wait()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            http.should_exit = True
    sock.close()


async def call_through_model(
    client: Client,
    name: str,
    arguments: Mapping[str, Any] | None,
    human: Callable[[Any, ElicitRequestParams], Any],
    *,
    max_questions: int = 50,
) -> CallToolResult:
    """Call a tool the way a model does for a client that cannot show forms.

    Whenever a result carries `_meta["elicitationPending"]`, the question is put
    to `human` (an elicitation callback such as `ScriptedHuman`), and the answer
    is handed back through the system tool the instructions name. Uses only
    what the server returned. Returns the first result with no pending question.
    """
    result = await client.call_tool(name, dict(arguments or {}))
    for _ in range(max_questions):
        pending = (result.meta or {}).get("elicitationPending")
        if not isinstance(pending, dict):
            return result
        tool = re.search(r"call the tool `([^`]+)`", pending["instructions"])
        if tool is None:
            raise AssertionError(f"The instructions name no tool to call: {pending['instructions']!r}")
        params = ElicitRequestFormParams(message=pending["message"], requested_schema=pending["schema"])
        reply = await human(None, params)
        if isinstance(reply, ErrorData):
            raise AssertionError(f"The person could not answer: {reply.message}")
        answer: dict[str, Any] = {"elicitId": pending["elicitId"], "action": reply.action}
        if reply.content is not None:
            answer["content"] = reply.content
        result = await client.call_tool(tool.group(1), answer)
    raise AssertionError(f"Still asking after {max_questions} questions")
