"""The bot's side of the Bot Connector REST API (the bot → Teams), for the Teams channel.

`Connector` calls the API at the configured `service_url` (never at a URL an
activity names) with the bot's own token. `BotToken` gets that token with the
OAuth client-credentials grant (`POST token_url`, form
`grant_type=client_credentials`, `client_id`, `client_secret`,
`scope=https://api.botframework.com/.default`) and caches it until five minutes
before `expires_in`.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import anyio
import httpx

from elicitkit._errors import ElicitationError

__all__ = ["BotToken", "Connector", "TeamsError", "json_body"]

SCOPE = "https://api.botframework.com/.default"
HTTP_TIMEOUT = 10.0
_RENEW_EARLY = 300.0


class TeamsError(ElicitationError):
    """The Bot Framework could not be reached, or refused the bot (wrong app id or password, unknown conversation)."""


class BotToken:
    """The bot's own access token for the Connector API, fetched with client credentials and cached."""

    def __init__(self, app_id: str, app_password: str, token_url: str) -> None:
        self.app_id = app_id
        self._password = app_password
        self.token_url = token_url
        self._token: str | None = None
        self._renew_at = 0.0
        self._lock = anyio.Lock()

    async def get(self) -> str:
        """A valid token (fetched when there is none, or it is about to expire).

        Raises:
            TeamsError: the token endpoint is unreachable or refused the app id and password.
        """
        async with self._lock:
            if self._token is not None and time.monotonic() < self._renew_at:
                return self._token
            form = {
                "grant_type": "client_credentials",
                "client_id": self.app_id,
                "client_secret": self._password,
                "scope": SCOPE,
            }
            try:
                async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as client:
                    response = await client.post(self.token_url, data=form)
            except httpx.HTTPError as exc:
                raise TeamsError(f"Could not reach the Bot Framework token endpoint {self.token_url}: {exc}") from None
            body = json_body(response)
            token, lifetime = body.get("access_token"), body.get("expires_in")
            if response.status_code != 200 or not isinstance(token, str):
                error = body.get("error") or f"HTTP {response.status_code}"
                raise TeamsError(f"The Bot Framework refused a token for app {self.app_id!r}: {error}")
            try:
                seconds = float(lifetime)  # type: ignore[arg-type]  # checked by the except
            except (TypeError, ValueError):
                seconds = 3600.0
            self._token = token
            self._renew_at = time.monotonic() + max(seconds - _RENEW_EARLY, seconds / 2)
            return token

    def forget(self, token: str) -> None:
        """Drop `token` (the connector refused it), so the next `get` fetches a new one."""
        if self._token == token:
            self._token = None


class Connector:
    """The Bot Connector REST API at `service_url`, called with the bot's token."""

    def __init__(self, service_url: str, token: BotToken) -> None:
        self.service_url = service_url
        self.token = token

    async def send(self, method: str, path: str, activity: dict[str, Any], what: str) -> dict[str, Any]:
        """`method` `activity` to `path`; the Connector's JSON answer (`{"id": ...}`).

        Raises:
            TeamsError: Teams could not be reached or refused (`what` says what the bot was doing).
        """
        return json_body(await self._call(method, path, activity, what))

    async def member(self, conversation: str, user_id: str) -> dict[str, Any] | None:
        """Teams' own record of `user_id` as a member of `conversation` (`GET /v3/conversations/{conversation}/
        members/{user_id}`: its Teams user `id`, `aadObjectId`, `name`, ...); None when Teams knows no such member
        there (404).

        Raises:
            TeamsError: Teams could not be reached or refused the lookup.
        """
        path = f"/v3/conversations/{quote(conversation, safe='')}/members/{quote(user_id, safe='')}"
        response = await self._call("GET", path, None, "look up who pressed a button", lookup=True)
        return None if response.status_code == 404 else json_body(response)

    async def _call(
        self, method: str, path: str, activity: dict[str, Any] | None, what: str, *, lookup: bool = False
    ) -> httpx.Response:
        """The Connector's response (a lookup's 404 too); anything else unsuccessful raises `TeamsError`."""
        # A client per call: the Channel protocol has no close, and people answer at human pace.
        url = self.service_url + path
        for attempt in (1, 2):
            token = await self.token.get()
            try:
                async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as client:
                    response = await client.request(
                        method, url, json=activity, headers={"Authorization": f"Bearer {token}"}
                    )
            except httpx.HTTPError as exc:
                raise TeamsError(f"Could not reach Teams to {what} ({method} {url}): {exc}") from None
            if response.status_code == 401 and attempt == 1:
                self.token.forget(token)  # revoked or rotated early: one fresh token, then give up
                continue
            if not response.is_success and not (lookup and response.status_code == 404):
                error = json_body(response).get("error")
                detail = error.get("message") if isinstance(error, dict) else None
                raise TeamsError(f"Teams refused to {what}: HTTP {response.status_code} {detail or ''}".rstrip())
            return response
        raise AssertionError("unreachable")  # pragma: no cover


def json_body(response: httpx.Response) -> dict[str, Any]:
    """A response's JSON object, or {} when it has none."""
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
