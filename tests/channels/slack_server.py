"""A local Slack: the Web API methods the Slack channel calls, and Slack's side of every interaction.

Web API (`LocalSlack.api_url`): `POST /api/chat.postMessage`, `chat.update` and
`views.open`, with JSON or form bodies as slack-sdk sends them, the bot token
checked as Slack does (`not_authed`, `invalid_auth`), Slack's answers (`{"ok": true, "channel", "ts", "message"}`;
errors as HTTP 200 with `{"ok": false, "error"}`), and Block Kit's limits
enforced (`invalid_blocks`). A `response_url` (`POST /actions/...`) takes up
to five ephemeral replies, recorded with the one user who may see them.

Slack's side: `click` and `submit` build `block_actions` and `view_submission`
payloads shaped like Slack's (user, team, trigger_id, response_url, actions,
message, view.state.values, view.private_metadata), post them form-encoded
(`payload=<json>`) to the app's `request_url` with `X-Slack-Request-Timestamp`
and `X-Slack-Signature` (v0 HMAC-SHA256), and apply a modal's
`response_action` as Slack does. What a Slack client checks before it submits
a modal (required inputs, number bounds, text lengths) is checked too.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from elicitkit.testing import serve_app

T = TypeVar("T")
TEAM = {"id": "T0LOCAL", "domain": "local"}
APP_ID = "A0LOCAL"
_INPUTS = {
    "plain_text_input", "number_input", "email_text_input", "url_text_input", "datepicker", "datetimepicker",
    "timepicker", "checkboxes", "radio_buttons", "static_select", "multi_static_select",
}  # fmt: skip
_ACTION_ELEMENTS = {"button", "static_select", "multi_static_select", "overflow", "datepicker", "checkboxes"}


@dataclass(frozen=True)
class User:
    id: str
    name: str

    def json(self) -> dict[str, str]:
        return {"id": self.id, "username": self.name, "name": self.name, "team_id": TEAM["id"]}


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    updates: int = 0

    def controls(self) -> list[dict[str, Any]]:
        return [
            dict(e, block_id=b.get("block_id")) for b in self.blocks if b["type"] == "actions" for e in b["elements"]
        ]

    def labels(self) -> list[str]:
        return [c["text"]["text"] for c in self.controls() if c["type"] == "button"]

    def context(self) -> str:
        return " ".join(e["text"] for b in self.blocks if b["type"] == "context" for e in b["elements"])


@dataclass
class Ephemeral:
    """A reply only `user` sees (posted to their `response_url`)."""

    user: User
    text: str
    body: dict[str, Any]


@dataclass
class View:
    id: str
    user: User
    view: dict[str, Any]
    open: bool = True
    errors: dict[str, str] = field(default_factory=dict)


class SlackError(Exception):
    def __init__(self, error: str, detail: list[str] | None = None) -> None:
        super().__init__(error)
        self.error, self.detail = error, detail or []


class LocalSlack:
    """Slack on 127.0.0.1, for one app: a bot token, a signing secret, and the app's Request URL."""

    def __init__(self, token: str = "xoxb-local-bot", signing_secret: str = "local-signing-secret") -> None:
        self.token = token
        self.signing_secret = signing_secret
        self.channels = {"deploys": "C0DEPLOYS", "ops": "C0OPS"}
        self.request_url: str | None = None
        """The app's Interactivity Request URL, where interactions are sent."""
        self.base_url = ""
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.messages: list[Message] = []
        self.ephemerals: list[Ephemeral] = []
        self.views: list[View] = []
        self.refuse_views: str | None = None
        """An error `views.open` answers with (`expired_trigger_id`, say), to see the app cope."""
        self.last_request: tuple[bytes, dict[str, str]] | None = None
        self._ids = itertools.count(1)
        self._triggers: dict[str, tuple[User, float]] = {}
        self._response_urls: dict[str, list[Any]] = {}
        self._changed = anyio.Event()

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/"

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[LocalSlack]:
        app = Starlette(
            routes=[
                Route("/api/{method}", self._api, methods=["POST"]),
                Route("/actions/{team}/{n}/{secret}", self._response_url, methods=["POST"]),
            ]
        )
        async with serve_app(app) as base:
            self.base_url = base
            yield self

    # -- waiting on what the app did --------------------------------------------------------------

    async def until(self, found: Callable[[], T | None], within: float = 5) -> T:
        """Wait until `found()` returns something (re-checked whenever the app calls Slack)."""
        with anyio.fail_after(within):
            while (value := found()) is None:
                self._changed = anyio.Event()
                await self._changed.wait()
        return value

    async def message(self, number: int) -> Message:
        """The `number`th message posted (1-based), once it is."""
        return await self.until(lambda: _nth(self.messages, number))

    async def ephemeral_for(self, user: User, count: int = 1) -> Ephemeral:
        """The `count`th ephemeral reply shown to `user`."""
        return await self.until(lambda: _nth([e for e in self.ephemerals if e.user == user], count))

    async def opened_view(self, user: User, count: int = 1) -> View:
        return await self.until(lambda: _nth([v for v in self.views if v.user == user], count))

    def _record(self, method: str, body: dict[str, Any]) -> None:
        self.calls.append((method, body))
        self._changed.set()

    # -- the Web API ------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        raw = await request.body()
        if request.headers.get("content-type", "").startswith("application/json"):
            body = json.loads(raw or b"{}")
        else:
            body = {k: v[-1] for k, v in parse_qs(raw.decode()).items()}
            for key in ("blocks", "view"):
                if isinstance(body.get(key), str):
                    body[key] = json.loads(body[key])
        auth = request.headers.get("authorization", "")
        handlers = {"chat.postMessage": self._post_message, "chat.update": self._update, "views.open": self._views_open}
        try:
            if not auth.startswith("Bearer "):
                raise SlackError("not_authed")
            if auth.removeprefix("Bearer ") != self.token:
                raise SlackError("invalid_auth")
            if method not in handlers:
                raise SlackError("unknown_method")
            answer = handlers[method](body)
        except SlackError as exc:
            self._record(f"{method}:error", body)
            failure: dict[str, Any] = {"ok": False, "error": exc.error}
            return JSONResponse(failure | ({"errors": exc.detail} if exc.detail else {}))
        self._record(method, body)
        return JSONResponse({"ok": True} | answer)

    def _channel(self, given: Any) -> str:
        name = str(given or "")
        if name in self.channels.values():
            return name
        if name.removeprefix("#") in self.channels:
            return self.channels[name.removeprefix("#")]
        raise SlackError("channel_not_found")

    def _post_message(self, body: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(body.get("channel"))
        blocks = body.get("blocks") or []
        if not body.get("text") and not blocks:
            raise SlackError("no_text")
        _check_blocks(blocks, 50)
        ts = f"{time.time():.6f}"
        message = Message(channel, ts, str(body.get("text", "")), blocks)
        self.messages.append(message)
        return {"channel": channel, "ts": ts, "message": self._wire(message)}

    def _update(self, body: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(body.get("channel"))
        found = [m for m in self.messages if m.channel == channel and m.ts == body.get("ts")]
        if not found:
            raise SlackError("message_not_found")
        message = found[0]
        if "blocks" in body:
            _check_blocks(body["blocks"], 50)
            message.blocks = body["blocks"]
        message.text = str(body.get("text", message.text))
        message.updates += 1
        return {"channel": channel, "ts": message.ts, "text": message.text}

    def _views_open(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.refuse_views is not None:
            raise SlackError(self.refuse_views)
        trigger = self._triggers.pop(str(body.get("trigger_id")), None)
        if trigger is None:
            raise SlackError("invalid_trigger_id")
        user, issued = trigger
        if time.monotonic() - issued > 3:
            raise SlackError("expired_trigger_id")
        view = body.get("view") or {}
        _check_view(view)
        opened = View(f"V{next(self._ids):08d}", user, view)
        self.views.append(opened)
        return {"view": self._view_wire(opened)}

    async def _response_url(self, request: Request) -> Response:
        entry = self._response_urls.get(request.url.path)
        if entry is None or entry[1] >= 5:
            return PlainTextResponse("used_url" if entry else "no_service", status_code=404)
        entry[1] += 1
        body = json.loads(await request.body())
        if body.get("response_type") == "ephemeral" and not body.get("replace_original"):
            self.ephemerals.append(Ephemeral(entry[0], str(body.get("text", "")), body))
        self._record("response_url", body)
        return PlainTextResponse("ok")

    def _wire(self, message: Message) -> dict[str, Any]:
        return {"type": "message", "subtype": "bot_message", "text": message.text, "ts": message.ts,
                "bot_id": "B0LOCAL", "app_id": APP_ID, "blocks": message.blocks}  # fmt: skip

    def _view_wire(self, view: View, values: dict[str, Any] | None = None) -> dict[str, Any]:
        fixed = {"id": view.id, "team_id": TEAM["id"], "root_view_id": view.id, "previous_view_id": None,
                 "app_id": APP_ID, "bot_id": "B0LOCAL", "app_installed_team_id": TEAM["id"], "external_id": "",
                 "hash": secrets.token_hex(8), "clear_on_close": False, "notify_on_close": False,
                 "private_metadata": "", "callback_id": ""}  # fmt: skip
        return fixed | view.view | {"state": {"values": values or {}}}

    # -- Slack's side of interactions -------------------------------------------------------------

    def _payload(self, kind: str, user: User) -> dict[str, Any]:
        """What every interaction payload starts with (`token` is Slack's deprecated verification token)."""
        return {"type": kind, "user": user.json(), "team": TEAM, "api_app_id": APP_ID, "token": "deprecated",
                "trigger_id": self._trigger(user), "is_enterprise_install": False, "enterprise": None}  # fmt: skip

    def _trigger(self, user: User) -> str:
        trigger = f"{int(time.time() * 1000)}.{next(self._ids)}.{secrets.token_hex(16)}"
        self._triggers[trigger] = (user, time.monotonic())
        return trigger

    def _new_response_url(self, user: User) -> str:
        path = f"/actions/{TEAM['id']}/{next(self._ids)}/{secrets.token_urlsafe(16)}"
        self._response_urls[path] = [user, 0]
        return self.base_url + path

    async def click(
        self,
        user: User,
        message: Message,
        label: str | None = None,
        *,
        option: str | None = None,
        secret: str | None = None,
        timestamp: int | None = None,
    ) -> httpx.Response:
        """`user` clicks the button labelled `label`, or picks `option` in the message's select menu.

        `secret` and `timestamp` sign the callback otherwise than Slack would (a forgery, a stale request).
        """
        controls = message.controls()
        if option is not None:
            menu = next(c for c in controls if c["type"] == "static_select")
            chosen = next(o for o in menu["options"] if o["text"]["text"] == option)
            action = {k: menu[k] for k in ("type", "action_id", "block_id", "placeholder")}
            action["selected_option"] = chosen
        else:
            button = next((c for c in controls if c["type"] == "button" and c["text"]["text"] == label), None)
            if button is None:
                raise AssertionError(f"No button {label!r} on the message; it has {message.labels()}")
            action = {k: button[k] for k in ("type", "action_id", "block_id", "text", "value", "style") if k in button}
        container = {"type": "message", "message_ts": message.ts, "channel_id": message.channel, "is_ephemeral": False}
        payload = self._payload("block_actions", user) | {
            "container": container,
            "channel": {"id": message.channel, "name": _name_of(self.channels, message.channel)},
            "message": self._wire(message),
            "state": {"values": {}},
            "response_url": self._new_response_url(user),
            "actions": [action | {"action_ts": f"{time.time():.6f}"}],
        }
        return await self.send(payload, secret=secret, timestamp=timestamp)

    async def decline(self, user: User, message: Message, reason: str | None = None) -> httpx.Response:
        """`user` clicks Decline, writes `reason` (or nothing) in the modal that opens and submits it."""
        opened = len([v for v in self.views if v.user == user])
        await self.click(user, message, "Decline")
        view = await self.opened_view(user, opened + 1)
        return await self.submit(user, view, {"reason": reason})

    async def submit(self, user: User, view: View, values: Mapping[str, Any]) -> httpx.Response:
        """`user` fills the modal (by field name: text, True for a ticked box, option texts, dates) and submits it.

        Slack's own checks come first (required inputs, number bounds, text lengths); then the app's
        `response_action` is applied to the view (`errors`, `update`, `clear`).
        """
        assert view.open, "That modal is closed"
        inputs = [b for b in view.view["blocks"] if b["type"] == "input"]
        state = {b["block_id"]: {b["element"]["action_id"]: _state(b, values.get(b["block_id"]))} for b in inputs}
        payload = self._payload("view_submission", user) | {"view": self._view_wire(view, state), "response_urls": []}
        response = await self.send(payload)
        answer = response.json() if response.content else {}
        action = answer.get("response_action")
        if action == "errors":
            view.errors = answer["errors"]
        elif action == "update":
            _check_view(answer["view"])
            view.view, view.errors = answer["view"], {}
        elif response.status_code == 200:
            view.open = False  # no body, or "clear": Slack closes the modal
        return response

    async def send(
        self, payload: Mapping[str, Any], *, secret: str | None = None, timestamp: int | None = None
    ) -> httpx.Response:
        """Post `payload` to the app as Slack does: form-encoded, signed with `secret` (the app's by default)."""
        assert self.request_url is not None, "Set request_url: where the app takes interactions"
        body = urlencode({"payload": json.dumps(payload)}).encode()
        sent = str(int(time.time()) if timestamp is None else timestamp)
        key = (secret or self.signing_secret).encode()
        signature = "v0=" + hmac.new(key, f"v0:{sent}:".encode() + body, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": sent,
            "X-Slack-Signature": signature,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        }
        self.last_request = (body, headers)
        return await self._post(body, headers)

    async def resend(self) -> httpx.Response:
        """The last interaction again, byte for byte (a replay)."""
        assert self.last_request is not None
        return await self._post(*self.last_request)

    async def post_raw(self, body: bytes, headers: Mapping[str, str]) -> httpx.Response:
        """Anything at all, to the app's Request URL (what an attacker can send)."""
        return await self._post(body, {"Content-Type": "application/x-www-form-urlencoded", **headers})

    async def _post(self, body: bytes, headers: Mapping[str, str]) -> httpx.Response:
        assert self.request_url is not None
        async with httpx.AsyncClient() as http:
            return await http.post(self.request_url, content=body, headers=headers, timeout=5)


def _nth(items: list[T], number: int) -> T | None:
    return items[number - 1] if len(items) >= number else None


def _name_of(channels: Mapping[str, str], channel_id: str) -> str:
    return next((name for name, cid in channels.items() if cid == channel_id), channel_id)


def _state(block: Mapping[str, Any], value: Any) -> dict[str, Any]:
    """One input's entry in `view.state.values`, as Slack sends it; Slack's client-side checks first."""
    element, name = block["element"], block["block_id"]
    kind = element["type"]
    if value in (None, "", []) and not block.get("optional"):
        raise AssertionError(f"Slack would not submit: {name!r} is required")
    options = {o["text"]["text"]: o for o in element.get("options", [])}
    if kind == "checkboxes":
        return {"type": kind, "selected_options": element["options"] if value else []}
    if kind == "static_select":
        return {"type": kind, "selected_option": options[value] if value else None}
    if kind == "multi_static_select":
        return {"type": kind, "selected_options": [options[v] for v in value or []]}
    if kind == "datepicker":
        return {"type": kind, "selected_date": value}
    if kind == "datetimepicker":
        return {"type": kind, "selected_date_time": value}
    if kind == "number_input" and value not in (None, ""):
        number = float(value)  # Slack refuses what is not a number
        if not element.get("is_decimal_allowed") and not number.is_integer():
            raise AssertionError(f"Slack would not submit: {name!r} takes whole numbers")
        if not float(element.get("min_value", "-inf")) <= number <= float(element.get("max_value", "inf")):
            raise AssertionError(f"Slack would not submit: {name!r} is out of its bounds")
    length = len(value) if kind == "plain_text_input" and value else None
    if length is not None and not element.get("min_length", 0) <= length <= element.get("max_length", 3000):
        raise AssertionError(f"Slack would not submit: {name!r} has the wrong length")
    return {"type": kind, "value": None if value in (None, "") else str(value)}


def _check_blocks(blocks: list[dict[str, Any]], most: int, *, modal: bool = False) -> None:
    """Block Kit's limits, as Slack enforces them (`invalid_blocks`, with a json-pointer per problem)."""
    problems: list[str] = []

    def check(ok: bool, where: str, what: str) -> None:
        if not ok:
            problems.append(f"{what} [json-pointer:{where}]")

    def text(obj: Any, limit: int, where: str) -> None:
        check(isinstance(obj, dict) and obj.get("type") in ("plain_text", "mrkdwn") and bool(obj.get("text")),
              where, "must be a non-empty text object")  # fmt: skip
        check(len((obj or {}).get("text", "")) <= limit, where, f"must be less than {limit + 1} characters")

    def element(e: dict[str, Any], kinds: set[str], where: str) -> None:
        check(e.get("type") in kinds, where, "unsupported element")
        check(len(e.get("action_id", "")) <= 255 and len(e.get("value", "")) <= 2000, where, "too long")
        if e["type"] == "button":
            text(e.get("text"), 75, f"{where}/text")
        check(len(e.get("options", [])) <= 100, f"{where}/options", "must have at most 100 options")
        for i, option in enumerate(e.get("options", [])):
            text(option.get("text"), 75, f"{where}/options/{i}/text")
            check(len(option.get("value", "")) <= 150, f"{where}/options/{i}/value", "must be at most 150 characters")

    check(len(blocks) <= most, "/blocks", f"no more than {most} items allowed")
    ids = [b["block_id"] for b in blocks if "block_id" in b]
    check(len(ids) == len(set(ids)) and all(len(i) <= 255 for i in ids), "/blocks", "block_id must be unique")
    for n, block in enumerate(blocks):
        where, kind = f"/blocks/{n}", block.get("type")
        if kind == "section":
            text(block.get("text"), 3000, f"{where}/text")
        elif kind == "context":
            for i, item in enumerate(block.get("elements", [])):
                text(item, 3000, f"{where}/elements/{i}")
        elif kind == "actions":
            check(0 < len(block.get("elements", [])) <= 25, f"{where}/elements", "must have 1 to 25 elements")
            for i, item in enumerate(block.get("elements", [])):
                element(item, _ACTION_ELEMENTS, f"{where}/elements/{i}")
        elif kind == "input" and modal:
            text(block.get("label"), 2000, f"{where}/label")
            element(block.get("element", {}), _INPUTS, f"{where}/element")
        else:
            check(False, where, f"unsupported type: {kind}")
    if problems:
        raise SlackError("invalid_blocks", problems)


def _check_view(view: dict[str, Any]) -> None:
    titles = [view.get(key) for key in ("title", "submit", "close") if key in view or key == "title"]
    if view.get("type") != "modal" or not all(isinstance(t, dict) and 0 < len(t.get("text", "")) <= 24 for t in titles):
        raise SlackError("invalid_arguments", ["view.type must be modal; title, submit, close: 1 to 24 characters"])
    if len(view.get("private_metadata", "")) > 3000 or len(view.get("callback_id", "")) > 255:
        raise SlackError("invalid_arguments", ["private_metadata or callback_id too long"])
    _check_blocks(view.get("blocks", []), 100, modal=True)
