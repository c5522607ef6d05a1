"""Discord: questions as channel messages, answers through the app's Interactions Endpoint URL.

```python
hitl = Elicitation(server, channels=[DiscordChannel(bot_token, public_key)], public_url="https://desk.example.com")
await hitl.confirm(ctx, "Deploy v2.1?", via=discord("1234567890", approvers={"80351110224678912"}))
```

Wire format
-----------
Out, through the REST API (`api_url`, v10) with `Authorization: Bot <token>` and a
`User-Agent: DiscordBot (url, version)` as Discord requires:

- `POST /channels/{channel_id}/messages`: an embed (the message, the tool, the deadline, the token in
  its footer) and components (buttons, a string select); `allowed_mentions` parses nothing, so a
  question's text never pings anyone. The reference kept with the question is
  `{"channel_id", "message_id"}`.
- `PATCH /channels/{channel_id}/messages/{message_id}` when the question closes: the outcome
  (`Closing.text`) instead of the components, and no token.
- A 429 is retried once, after its `retry_after` (or `Retry-After`); any other error raises `DiscordError`.

In, on `POST /elicit/channels/{name}/interactions` (the app's Interactions Endpoint URL): Discord
posts every interaction as JSON and takes the HTTP response as the interaction's response.

- PING (type 1) → PONG `{"type": 1}` (Discord sends one when the URL is saved).
- MESSAGE_COMPONENT (type 3): a button or select → the desk; the verdict goes back as an ephemeral message
  (`{"type": 4, "data": {"content", "flags": 64}}`); "Answer…" and "Decline" (why?) open a modal (type 9);
  "Answer on a secure page" sends the desk's one-time link ephemerally, to the clicker only.
- MODAL_SUBMIT (type 5): the fields as the schema's types, or the decline's reason → the desk → ephemeral verdict.

Who replied is the signed payload's `member.user` (in a server) or `user` (in a DM); their id is
what `approvers` lists.

Where the token lives: in the footer of the message's embed, `elicitkit · <token>`. A `custom_id`
holds at most 100 characters and a token is ~145, so controls carry only short ids (`ek:yes`,
`ek:pick:2`, `ek:f:0`), and the token is read back from the `message` object Discord includes,
signed, in every component interaction and in a modal submit opened from a component. A modal's
`custom_id` is `ek:m:<message id>` and must match that message. Nothing is kept in memory, so any
node can take any interaction. (Details and the rendering rules: `discord_components`.)

Security checks, in order, each answered with 401 as Discord expects
----------------------------------------------------------------------
1. Signature: `X-Signature-Ed25519` (hex) must be the application's Ed25519 signature
   (`public_key`) of `X-Signature-Timestamp` + the raw body. Discord probes the endpoint with bad
   signatures and disables an app that accepts them.
2. Freshness: the timestamp must be within `tolerance` seconds of this clock.
3. Replays: a signature is accepted once. Accepted signatures are remembered for twice the window
   (past any timestamp they could carry, after which step 2 refuses them), at most 10,000 of them,
   on this node; the desk takes an answer only once across every node regardless, so a replay that
   slips past this memory can repeat a reply, never an answer.

Discord waits 3 seconds for the response: the desk answers in milliseconds unless the run lives on
another node that does not answer (`forward_timeout`), which should stay well under that.
"""

from __future__ import annotations

import json
import math
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from elicitkit._errors import ElicitationError
from elicitkit.channels._discord_components import (
    DECLINE,
    FORM,
    NO_MENTIONS,
    SECURE,
    closed_message,
    decline_modal,
    modal,
    question_message,
)
from elicitkit.channels._discord_replies import (
    content_of_click,
    content_of_modal,
    decline_message_id,
    modal_message_id,
    reason_of_modal,
    token_of,
)
from elicitkit.channels.base import ChannelRefused, Closing, Desk, Prompt, Responder, Verdict

__all__ = ["DiscordChannel", "DiscordError"]

PING, MESSAGE_COMPONENT, MODAL_SUBMIT = 1, 3, 5
PONG, CHANNEL_MESSAGE, MODAL = 1, 4, 9
EPHEMERAL = 1 << 6
"""Message flag: only the person who interacted sees the reply."""

_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."
_NOT_OURS = "This is not an open elicitkit question."
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_RETRY_AFTER_MAX = 10.0
"""A longer rate limit fails the post instead of holding the tool (and Discord's 3-second budget) hostage."""


class DiscordError(ElicitationError):
    """Discord's REST API could not be reached, or refused a request.

    Attributes:
        status: the HTTP status (None when Discord was not reached).
        code: Discord's JSON error code (e.g. 50001 Missing Access), when it sent one.
    """

    def __init__(self, text: str, status: int | None = None, code: int | None = None) -> None:
        super().__init__(text)
        self.status = status
        self.code = code


class DiscordChannel:
    """Ask questions in Discord channels; answers arrive on the app's Interactions Endpoint URL.

    Args:
        bot_token: the bot's token (Developer Portal → Bot); the bot must be in the server.
        public_key: the application's public key, hex (Developer Portal → General Information).
        api_url: Discord's REST API.
        name: the channel's name in `Via` and in its callback URL, `/elicit/channels/<name>/interactions`.
        tolerance: seconds an interaction's signed timestamp may be off this clock (and how long
            signatures are remembered against replays).

    Raises:
        ValueError: an empty token, a public key that is not 32 bytes of hex, an `api_url` that is
            not https (http only on loopback), or a tolerance that is not positive.
    """

    body_limit = 1 << 20
    """The largest callback body read: interactions are a few KB, anything near this is not from Discord."""

    def __init__(
        self,
        bot_token: str,
        public_key: str,
        *,
        api_url: str = "https://discord.com/api/v10",
        name: str = "discord",
        tolerance: float = 300,
    ) -> None:
        if not bot_token:
            raise ValueError("bot_token is empty: pass the bot's token from the Developer Portal's Bot page")
        try:
            key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        except ValueError:
            raise ValueError(
                "public_key is the application's Ed25519 public key in hex (64 characters, Developer Portal → "
                "General Information → Public Key)"
            ) from None
        if tolerance <= 0:
            raise ValueError(f"tolerance must be a positive number of seconds, not {tolerance!r}")
        url = httpx.URL(api_url)
        if url.scheme != "https" and not (url.scheme == "http" and url.host in _LOOPBACK):
            # The bot token goes with every request: never in the clear beyond this machine.
            raise ValueError(f"api_url must be an https URL (http only on loopback), not {api_url!r}")
        self.name = name
        self.api_url = api_url.rstrip("/")
        self._bot_token = bot_token
        self._signatures = Signatures(key, tolerance)
        self._desk: Desk | None = None

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        self._desk = desk

    def routes(self) -> Sequence[Route]:
        return [Route(f"/elicit/channels/{self.name}/interactions", self._interactions, methods=["POST"])]

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        """Post the question in the channel `prompt.target`; `{"channel_id", "message_id"}`.

        Raises:
            ChannelRefused: no channel id, or a field Discord cannot show.
            DiscordError: Discord refused the message.
        """
        channel_id = prompt.target
        if not channel_id or not channel_id.isdigit():
            raise ChannelRefused(f"a Discord question goes to a channel id (digits), not {channel_id!r}")
        message = await self._call("POST", f"/channels/{channel_id}/messages", question_message(prompt))
        return {"channel_id": channel_id, "message_id": str(message["id"])}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        """Replace the message's controls with the outcome.

        Raises:
            DiscordError: Discord refused the edit.
        """
        path = f"/channels/{ref['channel_id']}/messages/{ref['message_id']}"
        await self._call("PATCH", path, closed_message(prompt, closing))

    # -- REST --------------------------------------------------------------------------------------------------

    async def _call(self, method: str, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bot {self._bot_token}", "User-Agent": _user_agent()}
        # A client per call (posts are rare, and the channel outlives event loops), on one TLS context:
        # building a context loads the CA bundle, which costs more than the request.
        try:
            async with httpx.AsyncClient(base_url=self.api_url, headers=headers, timeout=10.0, verify=_tls()) as http:
                response = await http.request(method, path, json=body)
                if response.status_code == 429:
                    await anyio.sleep(_retry_after(response, method, path))
                    response = await http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise DiscordError(f"Could not reach Discord for {method} {path}: {exc!r}") from exc
        if response.is_error:
            raise _error(response, method, path)
        found: dict[str, Any] = response.json()
        return found

    # -- interactions ------------------------------------------------------------------------------------------

    async def _interactions(self, request: Request) -> Response:
        body = await request.body()  # read by elicitkit within `body_limit` and its read timeout
        headers = request.headers
        refused = self._signatures.check(
            headers.get("X-Signature-Ed25519"), headers.get("X-Signature-Timestamp"), body, time.time()
        )
        if refused is not None:
            return PlainTextResponse(refused, status_code=401)
        try:
            interaction = json.loads(body)
        except ValueError:
            return PlainTextResponse("The body is not JSON", status_code=400)
        if not isinstance(interaction, dict):
            return PlainTextResponse("The body is not an interaction", status_code=400)
        kind = interaction.get("type")
        if kind == PING:
            return JSONResponse({"type": PONG})
        responder = self._responder(interaction)
        data = interaction.get("data")
        if self._desk is None or responder is None or not isinstance(data, dict):
            return JSONResponse(_ephemeral(_NOT_OURS))
        if kind == MESSAGE_COMPONENT:
            return JSONResponse(await self._component(self._desk, interaction, data, responder))
        if kind == MODAL_SUBMIT:
            return JSONResponse(await self._submit(self._desk, interaction, data, responder))
        return JSONResponse(_ephemeral(_NOT_OURS))

    async def _component(
        self, desk: Desk, interaction: Mapping[str, Any], data: Mapping[str, Any], responder: Responder
    ) -> dict[str, Any]:
        message = interaction.get("message")
        token = token_of(message)
        if token is None or not isinstance(message, Mapping):
            return _ephemeral(_NOT_OURS)
        custom_id = str(data.get("custom_id", ""))
        if custom_id == SECURE:
            return _secure_link(await desk.secure_link(token, responder))
        prompt = await desk.prompt(token)
        if prompt is None:
            return _ephemeral(_CLOSED)
        if custom_id == DECLINE:
            return {"type": MODAL, "data": decline_modal(prompt, str(message.get("id")))}
        if custom_id == FORM:
            return {"type": MODAL, "data": modal(prompt, str(message.get("id")))}
        content = content_of_click(prompt, custom_id, data.get("values"))
        if content is None:
            return _ephemeral("That control is not part of this question.")
        return _ephemeral((await desk.reply(token, responder, "accept", content)).message)

    async def _submit(
        self, desk: Desk, interaction: Mapping[str, Any], data: Mapping[str, Any], responder: Responder
    ) -> dict[str, Any]:
        message = interaction.get("message")
        token = token_of(message)
        custom_id = str(data.get("custom_id", ""))
        opened_from = decline_message_id(custom_id) or modal_message_id(custom_id)
        if token is None or not isinstance(message, Mapping) or opened_from != str(message.get("id")):
            return _ephemeral(_NOT_OURS)
        if decline_message_id(custom_id) is not None:
            reason = reason_of_modal(data.get("components"))
            return _ephemeral((await desk.reply(token, responder, "decline", None, reason=reason)).message)
        prompt = await desk.prompt(token)
        if prompt is None:
            return _ephemeral(_CLOSED)
        content = content_of_modal(prompt, data.get("components"))
        return _ephemeral((await desk.reply(token, responder, "accept", content)).message)

    def _responder(self, interaction: Mapping[str, Any]) -> Responder | None:
        """Who interacted: `member.user` in a server, `user` in a DM; shown by server nickname, else display name."""
        member = interaction.get("member")
        member = member if isinstance(member, Mapping) else {}
        user = member.get("user") or interaction.get("user")
        if not isinstance(user, Mapping) or not user.get("id"):
            return None
        name = member.get("nick") or user.get("global_name") or user.get("username")
        return Responder(self.name, str(user["id"]), str(name) if name else None)


class Signatures:
    """Discord's request checks, without IO: signature, freshness, and one use of each signature."""

    def __init__(self, key: Ed25519PublicKey, tolerance: float, remember: int = 10_000) -> None:
        self.key = key
        self.tolerance = tolerance
        self.remember = remember
        self._seen: dict[bytes, float] = {}
        """Accepted signatures → when they may be forgotten; insertion order is that order."""

    def check(self, signature: str | None, timestamp: str | None, body: bytes, now: float) -> str | None:
        """Why the request is refused, or None when it is genuine, fresh and new (and is now remembered)."""
        if not signature or not timestamp:
            return "Missing X-Signature-Ed25519 or X-Signature-Timestamp"
        try:
            raw = bytes.fromhex(signature)
            self.key.verify(raw, timestamp.encode() + body)
        except (ValueError, InvalidSignature):
            return "Invalid request signature"
        try:
            sent = float(timestamp)
        except ValueError:
            return "Invalid request timestamp"
        if abs(now - sent) > self.tolerance:
            return "Stale request timestamp"
        self._forget(now)
        if raw in self._seen:
            return "Replayed request"
        if len(self._seen) >= self.remember:
            del self._seen[next(iter(self._seen))]
        # Kept past any timestamp this request could carry: later, the freshness check refuses it anyway.
        self._seen[raw] = now + 2 * self.tolerance
        return None

    def _forget(self, now: float) -> None:
        for signature, until in list(self._seen.items()):
            if until > now:
                break
            del self._seen[signature]


def _ephemeral(text: str, components: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A CHANNEL_MESSAGE_WITH_SOURCE response only the person who interacted sees."""
    text = text if len(text) <= 2000 else text[:1999] + "…"
    data: dict[str, Any] = {"content": text, "flags": EPHEMERAL, "allowed_mentions": NO_MENTIONS}
    if components:
        data["components"] = list(components)
    return {"type": CHANNEL_MESSAGE, "data": data}


def _secure_link(verdict: Verdict) -> dict[str, Any]:
    """The desk's one-time link, to the clicker only; Discord sends no interaction for a link button."""
    if not verdict.ok:
        return _ephemeral(verdict.message)
    text = f"Answer on this one-time page, meant for you only: <{verdict.message}>"
    button = {"type": 2, "style": 5, "label": "Open the secure page", "url": verdict.message}
    return _ephemeral(text, [{"type": 1, "components": [button]}])


def _retry_after(response: httpx.Response, method: str, path: str) -> float:
    """Seconds to wait before the one retry, from the body's `retry_after` (precise) or `Retry-After`."""
    try:
        wait = float(response.json()["retry_after"])
    except (ValueError, TypeError, KeyError):
        try:
            wait = float(response.headers.get("Retry-After", "inf"))
        except ValueError:
            wait = math.inf
    if not wait <= _RETRY_AFTER_MAX:  # NaN included
        raise _error(response, method, path)
    return max(0.0, wait)


def _error(response: httpx.Response, method: str, path: str) -> DiscordError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    code = body.get("code") if isinstance(body.get("code"), int) else None
    status = response.status_code
    hint = {
        401: " (is bot_token the bot's token, from the Developer Portal's Bot page?)",
        403: " (is the bot in that server, with View Channel, Send Messages and Embed Links there?)",
        404: " (is the channel id right?)",
    }.get(status, "")
    text = f"Discord refused {method} {path}: {status} {body.get('message') or response.reason_phrase} (code {code})"
    return DiscordError(text + hint, status, code)


@cache
def _tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()


@cache
def _user_agent() -> str:
    try:
        release = version("elicitkit")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        release = "0"
    return f"DiscordBot (https://pypi.org/project/elicitkit/, {release})"
