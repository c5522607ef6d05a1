"""Two people with principals of their own, for the security tests: OAuth users of one server, and their browsers.

The server checks bearer tokens (`tests.test_fallback.Tokens`: `tok-alice`, `tok-bob`), so the SDK binds
`requestState` to each caller's principal; elicitkit's pages learn who is looking from an `X-Test-User`
header, which stands in for a session cookie or SSO (`page_identity`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken, principal_components
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import compact_json
from starlette.requests import Request

from elicitkit import Elicitation
from tests.test_fallback import Tokens

USER = "X-Test-User"


def principal_of(user: str) -> str:
    """The principal the SDK binds a request of `user`'s to (their token's client, issuer and subject)."""
    token = AccessToken(token=f"tok-{user}", client_id="test-client", scopes=[], subject=user)
    return compact_json(principal_components(token))


async def who(request: Request) -> str | None:
    user = request.headers.get(USER)
    return None if user is None else principal_of(user)


def signed_in_server(name: str = "signed-in", **options: Any) -> tuple[MCPServer, Elicitation]:
    """A server whose callers sign in, and whose pages check that the person opening them was the one asked."""
    server = MCPServer(
        name,
        auth=AuthSettings(
            issuer_url="https://auth.example.com",
            resource_server_url="http://127.0.0.1/mcp",
            validate_token_resource=False,  # the test verifier vouches for its own tokens
        ),
        token_verifier=Tokens(),
    )
    return server, Elicitation(server, page_identity=who, **options)


@asynccontextmanager
async def as_user(url: str, user: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP carrying `user`'s bearer token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer tok-{user}"}) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,
    ):
        yield client


def browser(base: str, user: str) -> httpx.AsyncClient:
    """`user`'s browser, signed in to the site that serves elicitkit's pages at `base`."""
    return httpx.AsyncClient(base_url=base, headers={USER: user})
