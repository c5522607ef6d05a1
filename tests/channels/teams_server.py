"""A local Bot Framework that speaks Teams' wire format, for the Teams channel's tests.

It plays three Microsoft services on one Starlette app (serve it with `serve()`):

- the Bot Connector's login metadata: `GET /v1/.well-known/openidconfiguration`
  naming `jwks_uri` = `GET /v1/.well-known/keys`, a JWK set holding a freshly
  generated RSA key with its `endorsements` (the channels it signs for; tests
  may publish other endorsements, or none, with `endorsements`). Tests can make
  the key set fail (`keys_down`: 503) or hold its answer (`keys_gate`);
- Azure AD's token endpoint for bots, `POST /botframework.com/oauth2/v2.0/token`
  (client-credentials form; checks the client id, secret and scope; issues an
  RS256 JWT signed by a second key, audience `https://api.botframework.com`);
- the Connector API: `POST /v3/conversations/{id}/activities` (send),
  `POST /v3/conversations/{id}/activities/{activityId}` (reply) and
  `PUT /v3/conversations/{id}/activities/{activityId}` (update), which check
  the bot's bearer token, answer 404 for conversations the bot is not installed
  in, and record every activity (`questions`, `replies`, `updates`); and
  `GET /v3/conversations/{id}/members/{userId}`, a member of the conversation's
  roster by Teams user id or AAD object id, as Teams has it (404 for anybody
  else; each lookup is recorded in `lookups`).

And it plays Teams itself: `press` turns a button of a posted card into the
activity Teams sends the bot (an `invoke` named `adaptiveCard/action` for
Action.Execute, a `message` with `value` for the Action.Submit fallback), with
the card's inputs merged in as a Teams client does, and POSTs it to the bot's
messaging endpoint with `Authorization: Bearer <JWT>` signed by the published
key (`iss`, `aud`, `exp`, `nbf`, `serviceurl`) — or by a forgery (`FORGERIES`).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from elicitkit.channels import TeamsChannel
from elicitkit.testing import serve_app

APP_ID = "6f1c2b7e-0d4a-4c59-9a53-3f0c1b2e8d11"
APP_PASSWORD = "bot-client-secret~not-a-real-one"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ISSUER = "https://api.botframework.com"
BOT_AUDIENCE = "https://api.botframework.com"
SCOPE = "https://api.botframework.com/.default"
OPENID_PATH = "/v1/.well-known/openidconfiguration"
TOKEN_PATH = "/botframework.com/oauth2/v2.0/token"

Forgery = Literal[
    "no-token",
    "wrong-key",
    "unknown-key",
    "wrong-audience",
    "wrong-issuer",
    "service-url",
    "unendorsed-channel",
    "expired",
    "not-yet-valid",
]
FORGERIES: tuple[Forgery, ...] = (
    "no-token",
    "wrong-key",
    "unknown-key",
    "wrong-audience",
    "wrong-issuer",
    "service-url",
    "unendorsed-channel",
)
"""Tokens that are not the connector's; "expired" and "not-yet-valid" are the connector's, out of their time."""


@dataclass(frozen=True)
class TeamsUser:
    aad: str
    name: str

    @property
    def id(self) -> str:
        return f"29:1{self.aad.replace('-', '')[:20]}"


@dataclass(frozen=True)
class Sent:
    """One activity the bot sent to the Connector API."""

    method: str
    conversation: str
    activity_id: str
    """The id Teams gave it (a send), or the one in the path (a reply: what it replies to; an update: what it updates)."""
    activity: dict[str, Any]

    @property
    def card(self) -> dict[str, Any]:
        (attachment,) = self.activity["attachments"]
        assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
        card: dict[str, Any] = attachment["content"]
        return card


def card_inputs(card: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {block["id"]: block for block in card.get("body", []) if str(block.get("type", "")).startswith("Input.")}


def card_texts(card: Mapping[str, Any]) -> list[str]:
    return [block["text"] for block in card.get("body", []) if block.get("type") == "TextBlock"]


@functools.cache
def rsa_key(role: str) -> rsa.RSAPrivateKey:
    """A fresh 2048-bit key per role and test process (generating one takes a tenth of a second)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class LocalBotFramework:
    def __init__(
        self,
        conversations: Mapping[str, Iterable[TeamsUser]],
        app_id: str = APP_ID,
        app_password: str = APP_PASSWORD,
    ) -> None:
        self.conversations = {conversation: set(members) for conversation, members in conversations.items()}
        """The conversations the bot is installed in, each with its members (the roster Teams answers lookups from)."""
        self.app_id = app_id
        self.app_password = app_password
        self.key, self.kid = rsa_key("connector"), f"key-{secrets.token_hex(4)}"
        self.published = [(self.key, self.kid)]
        self.endorsements: list[str] | None = ["msteams", "skype", "webchat"]
        """What the published keys are endorsed for (None: keys without `endorsements`)."""
        self.keys_down = False
        """The key set answers 503, as during an outage."""
        self.keys_gate: anyio.Event | None = None
        """When set, the key set answers only once this event is."""
        self.key_fetches = 0
        self.members_down = False
        """Member lookups answer 503, as during an outage of the Connector."""
        self.aad_key = rsa_key("aad")
        self.base = ""
        self.sent: list[Sent] = []
        self.delivered: list[tuple[dict[str, Any], str | None]] = []
        self.token_requests = 0
        self.lookups: list[tuple[str, str]] = []
        """Each member lookup the bot made: (conversation, user id)."""
        self._ids = itertools.count(1_700_000_000_000)
        self._changed = anyio.Event()
        self.app = Starlette(
            routes=[
                Route(OPENID_PATH, self._openid, methods=["GET"]),
                Route("/v1/.well-known/keys", self._keys, methods=["GET"]),
                Route(TOKEN_PATH, self._token, methods=["POST"]),
                Route("/v3/conversations/{conversation}/activities", self._send, methods=["POST"]),
                Route("/v3/conversations/{conversation}/activities/{activity}", self._send, methods=["POST", "PUT"]),
                Route("/v3/conversations/{conversation}/members/{member}", self._member, methods=["GET"]),
            ]
        )

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[LocalBotFramework]:
        async with serve_app(self.app) as base:
            self.base = base
            yield self

    def rotate(self) -> None:
        """Roll the signing key over, as Microsoft does: publish a new one next to the old, and sign with it."""
        self.key, self.kid = rsa_key("rolled-over"), f"key-{secrets.token_hex(4)}"
        self.published.append((self.key, self.kid))

    @property
    def service_url(self) -> str:
        return f"{self.base}/"  # Teams' service URLs end with a slash

    def channel(self, **options: Any) -> TeamsChannel:
        """A TeamsChannel pointed at this Bot Framework."""
        return TeamsChannel(
            self.app_id,
            self.app_password,
            service_url=self.service_url,
            openid_config_url=self.base + OPENID_PATH,
            token_url=self.base + TOKEN_PATH,
            **options,
        )

    # -- what the bot sent ---------------------------------------------------------------------

    @property
    def questions(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "POST" and "replyToId" not in s.activity]

    @property
    def replies(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "POST" and "replyToId" in s.activity]

    @property
    def updates(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "PUT"]

    async def until(self, condition: Callable[[], bool], within: float = 5) -> None:
        with anyio.fail_after(within):
            while not condition():
                self._changed = anyio.Event()
                await self._changed.wait()

    async def question(self, count: int) -> Sent:
        """Wait until the bot has posted `count` questions; the last one."""
        await self.until(lambda: len(self.questions) >= count)
        return self.questions[count - 1]

    async def update_of(self, question: Sent) -> Sent:
        """Wait until the bot has updated `question`'s message; the update."""
        await self.until(lambda: any(u.activity_id == question.activity_id for u in self.updates))
        return next(u for u in self.updates if u.activity_id == question.activity_id)

    # -- Teams: a person presses a button ------------------------------------------------------

    async def press(
        self,
        endpoint: str,
        question: Sent,
        title: str,
        user: TeamsUser,
        inputs: Mapping[str, str] | None = None,
        *,
        submit: bool = False,
        forgery: Forgery | None = None,
    ) -> httpx.Response:
        """Press the button titled `title` with `inputs` (by input id) filled in, as Teams sends it to the bot."""
        card = question.card
        (button,) = [a for a in card["actions"] if a["title"] == title]
        fields = card_inputs(card)
        if button["type"] == "Action.ShowCard":
            # The press is the button of the card it shows, which sends that card's inputs and its parent's.
            shown = button["card"]
            (button,) = shown["actions"]
            fields |= card_inputs(shown)
        unknown = set(inputs or {}) - set(fields)
        assert not unknown, f"the card has no inputs {unknown}"
        action = button["fallback"] if submit else button
        assert action["type"] == ("Action.Submit" if submit else "Action.Execute")
        data = dict(action["data"])
        if action.get("associatedInputs", "auto") != "none":
            # A Teams client sends every input of the card, with what the person left in it.
            for input_id, block in fields.items():
                data[input_id] = str(block.get("value", block.get("valueOff", "")))
            data |= dict(inputs or {})
        common = self._activity(question, user, "directline" if forgery == "unendorsed-channel" else "msteams")
        if submit:
            activity = common | {"type": "message", "text": "", "value": data}
        else:
            execute = {"type": "Action.Execute", "title": title, "verb": action["verb"], "data": data}
            activity = common | {"type": "invoke", "name": "adaptiveCard/action", "value": {"action": execute}}
        return await self.deliver(endpoint, activity, forgery)

    async def deliver(self, endpoint: str, activity: dict[str, Any], forgery: Forgery | None = None) -> httpx.Response:
        """POST `activity` to the bot's endpoint as the Bot Connector does."""
        token = None if forgery == "no-token" else self.connector_token(activity["serviceUrl"], forgery)
        self.delivered.append((activity, token))
        return await self._post(endpoint, activity, token)

    async def replay(self, endpoint: str, index: int = -1) -> httpx.Response:
        """Send a delivered activity again, token and all (what an eavesdropper could do)."""
        activity, token = self.delivered[index]
        return await self._post(endpoint, activity, token)

    async def post_with(self, endpoint: str, activity: dict[str, Any], token: str) -> httpx.Response:
        """POST an activity of someone else's making with `token` (a captured one: what an eavesdropper could do)."""
        self.delivered.append((activity, token))
        return await self._post(endpoint, activity, token)

    def connector_token(self, service_url: str, forgery: Forgery | None = None) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "serviceurl": service_url,
            "nbf": now - 5,
            "exp": now + 3600,
            "iss": ISSUER,
            "aud": self.app_id,
        }
        key, kid = self.key, self.kid
        if forgery == "wrong-key":
            key = rsa_key("forger")
        elif forgery == "unknown-key":
            key, kid = rsa_key("forger"), "key-nobody-published"
        elif forgery == "wrong-audience":
            claims["aud"] = "00000000-0000-0000-0000-000000000000"
        elif forgery == "wrong-issuer":
            claims["iss"] = "https://sts.windows.net/attacker/"
        elif forgery == "service-url":
            claims["serviceurl"] = "https://smba.evil.example/amer/"
        elif forgery == "expired":
            claims |= {"nbf": now - 7200, "exp": now - 3600}
        elif forgery == "not-yet-valid":
            claims |= {"nbf": now + 3600, "exp": now + 7200}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})

    def _activity(self, question: Sent, user: TeamsUser, channel_id: str) -> dict[str, Any]:
        now = dt.datetime.now(dt.UTC)
        # In a team's channel a post starts a thread, and Teams names the thread: the channel plus the post's id.
        thread = f"{question.conversation};messageid={question.activity_id}"
        return {
            "id": f"f:{secrets.token_hex(8)}",
            "timestamp": now.isoformat().replace("+00:00", "Z"),
            "localTimestamp": now.isoformat(),
            "serviceUrl": self.service_url,
            "channelId": channel_id,
            "from": {"id": user.id, "name": user.name, "aadObjectId": user.aad},
            "conversation": {"id": thread, "conversationType": "channel", "tenantId": TENANT},
            "recipient": {"id": f"28:{self.app_id}", "name": "elicitkit"},
            "replyToId": question.activity_id,
            "channelData": {"tenant": {"id": TENANT}},
            "locale": "en-US",
        }

    async def _post(self, endpoint: str, activity: dict[str, Any], token: str | None) -> httpx.Response:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=5) as client:
            return await client.post(endpoint, json=activity, headers=headers)

    # -- the services --------------------------------------------------------------------------

    async def _openid(self, request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "issuer": ISSUER,
                "authorization_endpoint": "https://invalid.botframework.com",
                "jwks_uri": f"{base}/v1/.well-known/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            }
        )

    async def _keys(self, request: Request) -> Response:
        self.key_fetches += 1
        self._changed.set()
        if self.keys_gate is not None:
            await self.keys_gate.wait()
        if self.keys_down:
            return JSONResponse({"error": "ServiceUnavailable"}, status_code=503)
        keys = []
        for key, kid in self.published:
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            endorsed = {} if self.endorsements is None else {"endorsements": list(self.endorsements)}
            keys.append(jwk | {"kid": kid, "use": "sig"} | endorsed)
        return JSONResponse({"keys": keys})

    async def _token(self, request: Request) -> Response:
        self.token_requests += 1
        form = await request.form()
        if form.get("grant_type") != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type")
        if form.get("client_id") != self.app_id or form.get("client_secret") != self.app_password:
            return _oauth_error(401, "invalid_client")
        if form.get("scope") != SCOPE:
            return _oauth_error(400, "invalid_scope")
        now = int(time.time())
        claims = {
            "aud": BOT_AUDIENCE,
            "iss": f"https://sts.windows.net/{TENANT}/",
            "appid": self.app_id,
            "iat": now,
            "nbf": now,
            "exp": now + 3599,
        }
        token = jwt.encode(claims, self.aad_key, algorithm="RS256")
        return JSONResponse({"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token})

    async def _send(self, request: Request) -> Response:
        if not self._bot_token_ok(request.headers.get("authorization", "")):
            return JSONResponse({"message": "Authorization has been denied for this request."}, status_code=401)
        conversation, target = request.path_params["conversation"], request.path_params.get("activity")
        known = {s.activity_id for s in self.questions} | {a["id"] for a, _ in self.delivered}
        # A reply in a channel's thread goes to the thread; its channel is where the bot must be installed.
        installed = conversation.partition(";messageid=")[0] in self.conversations
        if not installed or (target is not None and target not in known):
            return _connector_error(404, "ConversationNotFound", "Conversation not found.")
        activity = await request.json()
        if activity.get("type") != "message":
            return _connector_error(400, "BadArgument", "Unknown activity type")
        if target is not None and request.method == "POST" and activity.get("replyToId") != target:
            return _connector_error(400, "BadArgument", "replyToId does not match the activity replied to")
        activity_id = target if request.method == "PUT" else str(next(self._ids))
        self.sent.append(Sent(request.method, conversation, str(target or activity_id), activity))
        self._changed.set()
        return JSONResponse({"id": activity_id}, status_code=200 if request.method == "PUT" else 201)

    async def _member(self, request: Request) -> Response:
        if not self._bot_token_ok(request.headers.get("authorization", "")):
            return JSONResponse({"message": "Authorization has been denied for this request."}, status_code=401)
        conversation, wanted = request.path_params["conversation"], request.path_params["member"]
        self.lookups.append((conversation, wanted))
        self._changed.set()
        if self.members_down:
            return _connector_error(503, "ServiceUnavailable", "The service is unavailable.")
        if conversation not in self.conversations:  # a thread's id too: Teams answers ThreadNotFound for those
            return _connector_error(404, "ConversationNotFound", "Conversation not found.")
        # Teams finds a member by their Teams user id or their AAD object id.
        found = [user for user in self.conversations[conversation] if wanted in (user.id, user.aad)]
        if not found:
            return _connector_error(
                404, "MemberNotFoundInConversation", "The member was not found in the conversation."
            )
        (user,) = found
        given, _, surname = user.name.partition(" ")
        return JSONResponse(
            {
                "id": user.id,
                "name": user.name,
                "aadObjectId": user.aad,
                "givenName": given,
                "surname": surname or None,
                "email": f"{given.lower()}@contoso.example",
                "userPrincipalName": f"{given.lower()}@contoso.example",
                "tenantId": TENANT,
                "userRole": "user",
            }
        )

    def _bot_token_ok(self, authorization: str) -> bool:
        scheme, _, token = authorization.partition(" ")
        if scheme != "Bearer":
            return False
        try:
            claims = jwt.decode(token, self.aad_key.public_key(), algorithms=["RS256"], audience=BOT_AUDIENCE)
        except jwt.PyJWTError:
            return False
        return bool(claims.get("appid") == self.app_id)


def _oauth_error(status: int, error: str) -> Response:
    return JSONResponse({"error": error, "error_description": f"AADSTS: {error}"}, status_code=status)


def _connector_error(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)
