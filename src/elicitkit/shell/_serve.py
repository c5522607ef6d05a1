"""`elicitkit serve DIR`: a folder of shell tools as an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

from elicitkit._crypto import secret_ring
from elicitkit._elicitation import DEFAULT_SESSION_IDLE_TIMEOUT, Elicitation
from elicitkit._timeouts import SERVER_DEFAULT, Timeout
from elicitkit.shell._add import add_project
from elicitkit.shell._project import find_project
from elicitkit.stores import durable_store

__all__ = ["serve"]


def serve(
    folder: str,
    *,
    http: str | None,
    name: str | None,
    store: str | None,
    plaintext_store: bool,
    timeout: float | None,
    question_timeout: Timeout = SERVER_DEFAULT,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
    inherit_env: bool,
    fallback: str,
    public_url: str | None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Serve `folder`'s tools until interrupted; `http` is `HOST:PORT` (port 0 picks a free one).

    `session_idle_timeout` closes 2025-11-25 HTTP sessions left that long without a request (None: never).

    `environ` is where the secret is read from (`None`: `os.environ`): the
    environment `elicitkit serve` was started with, its secrets included,
    which its own no longer holds.
    """
    project = find_project(folder)  # a folder that cannot be served is refused before anything starts
    ring = secret_ring(None, store=durable_store(store), plaintext_store=plaintext_store, environ=environ)
    info = project.server
    server = MCPServer(
        name or info.name or Path(folder).resolve().name or "shell-tools",
        title=info.title,
        description=info.description,
        instructions=info.instructions,
        website_url=info.website_url,
        version=info.version or "",
    )
    hitl = Elicitation(
        server,
        store=store,
        secret=ring or None,
        plaintext_store=plaintext_store and not ring,  # a secret given still seals, as with Elicitation's
        fallback=fallback,  # type: ignore[arg-type]
        public_url=public_url,
        session_idle_timeout=session_idle_timeout,
    )
    add_project(hitl, project, timeout=timeout, question_timeout=question_timeout, inherit_env=inherit_env)
    tools = project.tools
    say = f"elicitkit serve: {len(tools)} tool(s) from {folder}: {', '.join(t.name for t in tools) or '(none)'}"
    print(say, file=sys.stderr, flush=True)
    if http is None:
        server.run("stdio")
        return
    anyio.run(_serve_http, hitl, http)


async def _serve_http(hitl: Elicitation, where: str) -> None:
    import uvicorn

    host, _, port = where.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, int(port)))
    bound = sock.getsockname()[1]
    base = f"http://{'[' + host + ']' if family == socket.AF_INET6 else host}:{bound}"
    if hitl.public_url is None:
        hitl.public_url = base  # elicitkit's own pages (secure forms) on the same port
    config = uvicorn.Config(hitl.http_app(), log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    http = uvicorn.Server(config)
    original = http.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original(sockets=sockets)
        print(f"elicitkit serve: listening on {base}/mcp", file=sys.stderr, flush=True)

    http.startup = startup  # type: ignore[method-assign]
    await http.serve(sockets=[sock])
