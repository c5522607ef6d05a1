"""A local Discord on 127.0.0.1: the REST endpoints `DiscordChannel` calls, and the interactions Discord sends.

`LocalDiscord` serves `POST /api/v10/channels/{id}/messages` and `PATCH .../messages/{id}` the way
Discord does: Discord-shaped message objects (snowflake ids, `author`, rich embeds, numbered
components), and Discord's refusals: 401 without the bot token, 404 Unknown Channel (10003) or
Unknown Message (10008), 400 Invalid Form Body (50035) for a message breaking Discord's limits, 429
with `retry_after` (`rate_limits`) and outages (`failures`) when a test asks. It records every call.

`Interactions` plays Discord's side of the app's Interactions Endpoint URL: it builds the interaction
Discord posts when a person clicks a button, picks from a select or submits a modal (picking controls
by their labels, as people do), signs it with the application's Ed25519 key (hex signature of
`X-Signature-Timestamp` + body), posts it as JSON, and checks the response as Discord would.
"""

from __future__ import annotations

import itertools
import json
import secrets
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence, Sized
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from elicitkit.testing import serve_app

DISCORD_EPOCH_MS = 1_420_070_400_000
CHANNEL = "1190000000000000001"
GUILD = "1180000000000000001"
# What every message object and guild member carries, that the channel never sets.
_MESSAGE: dict[str, Any] = {"type": 0, "flags": 0, "tts": False, "pinned": False, "mention_everyone": False}
_MESSAGE |= {"attachments": [], "mentions": [], "mention_roles": []}
_MEMBER: dict[str, Any] = {"nick": None, "roles": [], "permissions": "2248473465835073", "flags": 0}
_MEMBER |= {"joined_at": "2024-01-01T00:00:00+00:00", "deaf": False, "mute": False}
_increments = itertools.count()
_PLAIN_HTTP = ssl.create_default_context()
"""The callback is plain http on loopback; one context spares every post the cost of loading CA bundles."""


def snowflake() -> str:
    """A Discord id: milliseconds since Discord's epoch, shifted 22 bits, plus an increment."""
    return str(((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (next(_increments) & 0xFFF))


@dataclass(frozen=True)
class User:
    id: str
    username: str
    global_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "username": self.username, "global_name": self.global_name, "discriminator": "0"}


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: Any
    status: int


class LocalDiscord:
    """Discord's REST API as the channel uses it, recording what it received."""

    def __init__(self, channels: Sequence[str] = (CHANNEL,)) -> None:
        self.bot_token = "test." + secrets.token_urlsafe(24)
        self.application_id = "1170000000000000001"
        self.key = Ed25519PrivateKey.generate()
        self.public_key = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
        self.bot = User("1170000000000000001", "elicitkit-test")
        self.channels = set(channels)
        self.messages: dict[str, dict[str, Any]] = {}
        """Every message as it is now, by id, in the order they were posted."""
        self.calls: list[Call] = []
        self.rate_limits: list[float] = []
        """`retry_after` of the 429s the next requests get, one each."""
        self.failures: dict[str, list[int]] = {"POST": [], "PATCH": []}
        """Statuses the next requests of each method fail with (a Discord outage), one each."""
        self._changed = anyio.Event()
        self.app = Starlette(
            routes=[
                Route("/api/v10/channels/{channel_id}/messages", self._create, methods=["POST"]),
                Route("/api/v10/channels/{channel_id}/messages/{message_id}", self._edit, methods=["PATCH"]),
            ]
        )

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        """Serve on 127.0.0.1; yield the API base URL (`api_url` of the channel)."""
        async with serve_app(self.app) as base:
            yield f"{base}/api/v10"

    # -- waiting ------------------------------------------------------------------------------------------------

    async def message(self, count: int) -> dict[str, Any]:
        """The `count`-th message posted (1-based), as it is now, once it exists."""
        await self._until(lambda: len(self.messages) >= count)
        return list(self.messages.values())[count - 1]

    async def edit_of(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The body of the first edit of `message`, once it came (answered or not)."""
        path = f"/api/v10/channels/{message['channel_id']}/messages/{message['id']}"
        await self._until(lambda: any(c.method == "PATCH" and c.path == path for c in self.calls))
        body: dict[str, Any] = next(c.body for c in self.calls if c.method == "PATCH" and c.path == path)
        return body

    def edits(self) -> list[Call]:
        return [c for c in self.calls if c.method == "PATCH"]

    async def _until(self, condition: Callable[[], bool]) -> None:
        with anyio.fail_after(5):
            while not condition():
                self._changed = anyio.Event()
                await self._changed.wait()

    # -- the REST API -------------------------------------------------------------------------------------------

    async def _create(self, request: Request) -> JSONResponse:
        refused, body = await self._admit(request)
        if refused is None:
            channel_id = request.path_params["channel_id"]
            if channel_id not in self.channels:
                refused = _error(404, 10003, "Unknown Channel")
            else:
                message = self._message(snowflake(), channel_id, body)
                self.messages[message["id"]] = message
                return self._record(request, body, JSONResponse(message))
        return self._record(request, body, refused)

    async def _edit(self, request: Request) -> JSONResponse:
        refused, body = await self._admit(request)
        if refused is None:
            found = self.messages.get(request.path_params["message_id"])
            if found is None or found["channel_id"] != request.path_params["channel_id"]:
                refused = _error(404, 10008, "Unknown Message")
            else:
                edited = self._message(found["id"], found["channel_id"], {**found, **body}, edited=True)
                self.messages[found["id"]] = edited
                return self._record(request, body, JSONResponse(edited))
        return self._record(request, body, refused)

    async def _admit(self, request: Request) -> tuple[JSONResponse | None, Any]:
        """Discord's checks before a request reaches its route: auth, client, limits, body."""
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, 50109, "The request body contains invalid JSON."), None
        if request.headers.get("Authorization") != f"Bot {self.bot_token}":
            return _error(401, 0, "401: Unauthorized"), body
        if not request.headers.get("User-Agent", "").startswith("DiscordBot ("):
            return _error(400, 0, "A DiscordBot (url, version) User-Agent is required"), body
        if self.failures[request.method]:
            return _error(self.failures[request.method].pop(0), 0, "Discord is having a bad day"), body
        if self.rate_limits:
            wait = self.rate_limits.pop(0)
            limited = JSONResponse(
                {"message": "You are being rate limited.", "retry_after": wait, "global": False},
                status_code=429,
                headers={"Retry-After": str(max(1, round(wait))), "X-RateLimit-Scope": "user"},
            )
            return limited, body
        problems = message_problems(body) if isinstance(body, dict) else {"": "not a JSON object"}
        if problems:
            return _error(400, 50035, "Invalid Form Body", problems), body
        return None, body

    def _record(self, request: Request, body: Any, response: JSONResponse) -> JSONResponse:
        self.calls.append(Call(request.method, request.url.path, body, response.status_code))
        self._changed.set()
        return response

    def _message(
        self, message_id: str, channel_id: str, body: Mapping[str, Any], edited: bool = False
    ) -> dict[str, Any]:
        numbers = itertools.count(1)
        now = datetime.now(UTC).isoformat()
        return _MESSAGE | {
            "id": message_id,
            "channel_id": channel_id,
            "author": {**self.bot.to_json(), "bot": True},
            "content": body.get("content", ""),
            "embeds": [{"type": "rich", **embed} for embed in body.get("embeds", [])],
            "components": [_numbered(row, numbers) for row in body.get("components", [])],
            "timestamp": body.get("timestamp", now),
            "edited_timestamp": now if edited else None,
        }


class Interactions:
    """Discord's side of the app's Interactions Endpoint URL: what people do, signed and posted."""

    def __init__(self, discord: LocalDiscord, url: str) -> None:
        self.discord = discord
        self.url = url

    async def click(self, message: Mapping[str, Any], label: str, user: User, *, dm: bool = False) -> Reply:
        """`user` clicks the button labelled `label` on `message` (as Discord stores it now)."""
        current = self.discord.messages[message["id"]]
        button = _find(current, lambda c: c["type"] == 2 and c.get("label") == label, f"a button {label!r}")
        data = {"custom_id": button["custom_id"], "component_type": 2, "id": button["id"]}
        return await self.send(self.payload(3, data, user, current, dm=dm))

    async def choose(self, message: Mapping[str, Any], labels: Sequence[str], user: User) -> Reply:
        """`user` picks the options labelled `labels` in the message's select menu."""
        current = self.discord.messages[message["id"]]
        select = _find(current, lambda c: c["type"] == 3, "a select menu")
        values = [_option(select, label)["value"] for label in labels]
        data = {"custom_id": select["custom_id"], "component_type": 3, "id": select["id"], "values": values}
        return await self.send(self.payload(3, data, user, current))

    async def decline(self, message: Mapping[str, Any], user: User, reason: str | None = None) -> Reply:
        """`user` clicks Decline, writes `reason` (or nothing) in the modal that opens, and submits it."""
        opened = await self.click(message, "Decline", user)
        if opened.json.get("type") != 9:
            return opened  # no modal: the question is closed, say
        return await self.submit(message, opened, {"Reason (optional)": reason}, user)

    async def submit(self, message: Mapping[str, Any], opened: Reply, answers: Mapping[str, Any], user: User) -> Reply:
        """`user` fills the modal `opened` (by label: text, True/False, an option's label or a list of them)."""
        form = opened.json["data"]
        parts = []
        for number, label in enumerate(form["components"], start=1):
            control = label["component"]
            given = answers.get(label["label"])
            part: dict[str, Any] = {"type": control["type"], "id": number * 2, "custom_id": control["custom_id"]}
            if control["type"] == 4:
                part["value"] = "" if given is None else str(given)
                if control.get("required", True) and not part["value"]:
                    raise AssertionError(f"Discord does not submit a modal with {label['label']!r} empty")
            elif control["type"] == 23:
                part["value"] = bool(control.get("default", False) if given is None else given)
            elif control["type"] == 3:
                chosen = [] if given is None else [given] if isinstance(given, str) else list(given)
                part["values"] = [_option(control, text)["value"] for text in chosen]
            parts.append({"type": 18, "id": number * 2 - 1, "component": part})
        current = self.discord.messages[message["id"]]
        return await self.send(self.payload(5, {"custom_id": form["custom_id"], "components": parts}, user, current))

    async def ping(self) -> Reply:
        return await self.send(
            {
                "type": 1,
                "id": snowflake(),
                "application_id": self.discord.application_id,
                "token": secrets.token_urlsafe(32),
                "version": 1,
            }
        )

    def payload(
        self, kind: int, data: Mapping[str, Any], user: User, message: Mapping[str, Any], *, dm: bool = False
    ) -> dict[str, Any]:
        """An interaction as Discord posts it: in a server (`member`) or, with `dm`, in a DM (`user`)."""
        payload: dict[str, Any] = {
            "type": kind,
            "id": snowflake(),
            "application_id": self.discord.application_id,
            "token": "aW50ZXJhY3Rpb246" + secrets.token_urlsafe(48),
            "version": 1,
            "data": dict(data),
            "channel_id": message["channel_id"],
            "channel": {"id": message["channel_id"], "type": 1 if dm else 0},
            "message": dict(message),
            "app_permissions": "562949953421311",
            "locale": "en-GB",
            "entitlements": [],
            "authorizing_integration_owners": {"0": "0" if dm else GUILD},
            "context": 1 if dm else 0,
            "attachment_size_limit": 10485760,
        }
        if dm:
            payload["user"] = user.to_json()
        else:
            payload |= {"guild_id": GUILD, "guild_locale": "en-US"}
            payload["member"] = _MEMBER | {"user": user.to_json()}
        return payload

    async def send(
        self,
        payload: Mapping[str, Any],
        *,
        key: Ed25519PrivateKey | None = None,
        timestamp: float | None = None,
        body: bytes | None = None,
    ) -> Reply:
        """Sign `payload` as Discord does and post it; `key`, `timestamp` and `body` forge or tamper."""
        signed = json.dumps(payload, separators=(",", ":")).encode()
        stamp = str(int(time.time() if timestamp is None else timestamp))
        signature = (key or self.discord.key).sign(stamp.encode() + signed).hex()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "Discord-Interactions/1.0 (+https://discord.com)",
            "X-Signature-Ed25519": signature,
            "X-Signature-Timestamp": stamp,
        }
        return await self.post(body if body is not None else signed, headers)

    async def post(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        """Post exactly these bytes and headers (a replay resends a reply's `request`)."""
        async with httpx.AsyncClient(timeout=5, verify=_PLAIN_HTTP) as http:
            response = await http.post(self.url, content=body, headers=dict(headers))
        parsed = response.json() if response.headers.get("content-type", "").startswith("application/json") else None
        reply = Reply(response.status_code, parsed, response.text, (body, dict(headers)))
        if reply.status == 200:
            problems = response_problems(parsed)
            assert not problems, f"Discord would refuse this interaction response: {problems}"
        return reply


@dataclass(frozen=True)
class Reply:
    """The app's HTTP response to one interaction, and the request that got it."""

    status: int
    json: Any
    text: str
    request: tuple[bytes, dict[str, str]] = field(repr=False)

    @property
    def content(self) -> str:
        content: str = self.json["data"]["content"]
        return content

    @property
    def ephemeral(self) -> bool:
        return self.json["type"] == 4 and bool(self.json["data"].get("flags", 0) & 64)


# -- Discord's limits ---------------------------------------------------------------------------------------------


def message_problems(body: Mapping[str, Any]) -> dict[str, str]:
    """What makes Discord answer 400 Invalid Form Body to a message create or edit, by path."""
    problems: dict[str, str] = {}
    _length(problems, "content", body.get("content", ""), 0, 2000)
    total = 0
    for i, embed in enumerate(body.get("embeds", [])):
        texts = {"title": (embed.get("title", ""), 256), "description": (embed.get("description", ""), 4096)}
        texts["footer.text"] = (embed.get("footer", {}).get("text", ""), 2048)
        for j, item in enumerate(embed.get("fields", [])):
            texts |= {f"fields.{j}.name": (item["name"], 256), f"fields.{j}.value": (item["value"], 1024)}
        for key, (text, limit) in texts.items():
            _length(problems, f"embeds.{i}.{key}", text, 1 if key.startswith("fields") else 0, limit)
            total += len(text)
        _length(problems, f"embeds.{i}.fields", embed.get("fields", []), 0, 25)
    if total > 6000:
        problems["embeds"] = "Embed size exceeds maximum size of 6000"
    rows = body.get("components", [])
    _length(problems, "components", rows, 0, 5)
    ids = [c["custom_id"] for row in rows for c in row.get("components", []) if "custom_id" in c]
    if len(ids) != len(set(ids)):
        problems["components"] = "Component custom id cannot be duplicated"
    for i, row in enumerate(rows):
        kinds = [c["type"] for c in row.get("components", [])]
        if row.get("type") != 1 or kinds not in ([2] * len(kinds), [3]) or not 1 <= len(kinds) <= 5:
            problems[f"components.{i}"] = "An action row holds 1-5 buttons or one select"
        for j, child in enumerate(row.get("components", [])):
            where = f"components.{i}.components.{j}"
            if child.get("style") == 5:
                _length(problems, f"{where}.url", child.get("url", ""), 1, 512)
            else:
                _length(problems, f"{where}.custom_id", child.get("custom_id", ""), 1, 100)
            if child["type"] == 2:
                _length(problems, f"{where}.label", child.get("label", ""), 1, 80)
            else:
                problems |= _select_problems(child, where, modal=False)
    return problems


def response_problems(response: Any) -> dict[str, str]:
    """What makes Discord show "This interaction failed" instead of an app's response, by path."""
    if not isinstance(response, dict) or response.get("type") not in (1, 4, 5, 6, 7, 9):
        return {"type": "not an interaction response"}
    data = response.get("data", {})
    if response["type"] == 4:
        return message_problems(data) if data.get("content") or data.get("embeds") else {"data": "empty message"}
    if response["type"] != 9:
        return {}
    problems: dict[str, str] = {}
    _length(problems, "custom_id", data.get("custom_id", ""), 1, 100)
    _length(problems, "title", data.get("title", ""), 1, 45)
    _length(problems, "components", data.get("components", []), 1, 5)
    for i, label in enumerate(data.get("components", [])):
        where, control = f"components.{i}", label.get("component", {})
        if label.get("type") != 18 or control.get("type") not in (3, 4, 21, 22, 23):
            problems[where] = "A Label (18) around a text input, string select, radio group or checkbox"
        _length(problems, f"{where}.label", label.get("label", ""), 1, 45)
        _length(problems, f"{where}.description", label.get("description", ""), 0, 100)
        _length(problems, f"{where}.component.custom_id", control.get("custom_id", ""), 1, 100)
        if control.get("type") == 3:
            problems |= _select_problems(control, f"{where}.component", modal=True)
        if control.get("type") == 4:
            low, high = control.get("min_length", 0), control.get("max_length", 4000)
            if control.get("style") not in (1, 2) or not 0 <= low <= high <= 4000 or high < 1:
                problems[f"{where}.component"] = "style 1 or 2, 0 ≤ min_length ≤ max_length ≤ 4000"
            _length(problems, f"{where}.component.placeholder", control.get("placeholder", ""), 0, 100)
            _length(problems, f"{where}.component.value", control.get("value", ""), 0, 4000)
    return problems


def _select_problems(select: Mapping[str, Any], where: str, *, modal: bool) -> dict[str, str]:
    problems: dict[str, str] = {}
    options = select.get("options", [])
    _length(problems, f"{where}.options", options, 1, 25)
    for k, option in enumerate(options):
        _length(problems, f"{where}.options.{k}.label", option["label"], 1, 100)
        _length(problems, f"{where}.options.{k}.value", option["value"], 1, 100)
    _length(problems, f"{where}.placeholder", select.get("placeholder", ""), 0, 150)
    low, high = select.get("min_values", 1), select.get("max_values", 1)
    if not 0 <= low <= high <= min(25, max(1, len(options))):
        problems[f"{where}.min_values"] = "min_values ≤ max_values ≤ the number of options (≤ 25)"
    if modal and ((select.get("required", True) and low < 1) or "disabled" in select):
        problems[f"{where}.required"] = "a required select needs min_values ≥ 1; modals hold no disabled components"
    return problems


def _length(problems: dict[str, str], where: str, value: Sized, low: int, high: int) -> None:
    if not low <= len(value) <= high:
        problems[where] = f"Must be between {low} and {high} in length."


# -- helpers ------------------------------------------------------------------------------------------------------


def _error(status: int, code: int, message: str, errors: Mapping[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"message": message, "code": code}
    if errors:
        body["errors"] = {
            path: {"_errors": [{"code": "BASE_TYPE_INVALID", "message": text}]} for path, text in errors.items()
        }
    return JSONResponse(body, status_code=status)


def _numbered(component: Mapping[str, Any], numbers: itertools.count[int]) -> dict[str, Any]:
    """Discord gives every component an `id` when the app leaves it out."""
    numbered = {**component, "id": component.get("id") or next(numbers)}
    if "components" in component:
        numbered["components"] = [_numbered(child, numbers) for child in component["components"]]
    return numbered


def _find(message: Mapping[str, Any], match: Callable[[Mapping[str, Any]], bool], what: str) -> dict[str, Any]:
    for row in message.get("components", []):
        for component in row.get("components", []):
            if match(component):
                found: dict[str, Any] = component
                return found
    raise AssertionError(f"The message has no {what}: {message.get('components')}")


def _option(select: Mapping[str, Any], label: str) -> dict[str, Any]:
    for option in select.get("options", []):
        if option["label"] == label:
            found: dict[str, Any] = option
            return found
    raise AssertionError(f"The select has no option {label!r}: {[o['label'] for o in select['options']]}")
