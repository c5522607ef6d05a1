"""Microsoft Teams: questions as Adaptive Cards posted by a bot, answers through the bot's messaging endpoint.

```python
hitl = Elicitation(server, channels=[TeamsChannel(APP_ID, APP_PASSWORD, service_url=SERVICE_URL)],
                   public_url="https://desk.example.com")
answer = await hitl.confirm(ctx, "Deploy v2.1?", via=teams(conversation_id, approvers={aad_object_id}))
```

Register `{public_url}/elicit/channels/teams/messages` as the bot's messaging
endpoint (Azure Bot resource → Configuration). The bot must be installed in the
team or chat whose conversation id questions go to.

Out (the bot → Teams, Bot Connector REST API, bearer token from `BotToken`):

- a question: `POST {service_url}/v3/conversations/{conversation}/activities`
  with a `message` activity carrying the card (see `teams_cards`); the
  returned `id` is kept in the question's ref;
- its close: `PUT {service_url}/v3/conversations/{conversation}/activities/{id}`
  with the card replaced by the question and its outcome, without buttons;
- a reply to an `Action.Submit` press: `POST .../activities/{press id}` with
  `replyToId` set (a message in the conversation: Teams has no private replies
  for bots outside invoke responses).

Everything goes to the configured `service_url`, never to a URL an activity
names, so the bot's token only ever travels to where it was configured to.

In (Teams → `POST /elicit/channels/{name}/messages`):

1. the activity must come from Teams (`channelId` `msteams`) through the
   configured `service_url`, and the bearer JWT is checked against Microsoft's
   published keys (endorsed for `msteams`), issuer, the bot's app id, expiry and
   the activity's `serviceUrl` (`ConnectorAuth`, 401 on any failure; 503 when
   the keys cannot be fetched right now);
2. an activity id seen before is refused (409), see `SeenActivities`;
3. an `invoke` named `adaptiveCard/action` (Action.Execute) is answered in its
   HTTP response with `{"statusCode": 200, "type":
   "application/vnd.microsoft.activity.message", "value": <what the desk
   said>}`, which only the person who pressed sees; a `message` activity whose
   `value` carries the card's data (the Action.Submit fallback) gets a reply
   in the conversation; other invokes get 501 (as Bot Framework bots answer
   invokes they do not handle), any other activity is acknowledged (200) and
   ignored. Bodies over 256 KiB are refused (413) before anything is parsed.

Cards send `Action.Execute` (Universal Actions) with an `Action.Submit`
fallback, except the secure-page button (see `teams_cards`).

The responder is the user's AAD (Microsoft Entra) object id, `from.aadObjectId`,
and `from.name`: approvers are AAD object ids. `from.id` is never used instead:
it is not the AAD id, and on other channels the client chooses it. A press
without `from.aadObjectId` answers nothing; the presser is told why (in the
invoke response, or in a reply for the Action.Submit fallback).
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from elicitkit.channels._http import bounded_body
from elicitkit.channels._teams_auth import ConnectorAuth, KeysUnavailable, SeenActivities, Unauthorized, require
from elicitkit.channels._teams_cards import CARD_TYPE, closed_card, content_of, question_card
from elicitkit.channels._teams_connector import BotToken, Connector, TeamsError
from elicitkit.channels.base import ChannelRefused, Closing, Desk, Prompt, Responder

__all__ = ["TeamsChannel", "TeamsError"]

logger = logging.getLogger("elicitkit")

MESSAGE_TYPE = "application/vnd.microsoft.activity.message"
_MAX_BODY = 256 * 1024
_NO_SENDER = "Teams did not say which Microsoft Entra (AAD) user pressed this button, so it cannot answer the question."
_NOT_OURS = "This button does not belong to an elicitkit question."
_NO_PRIVATE_LINK = (
    "The secure page link can only be sent privately: press the button again in a Teams client that supports "
    "Universal Actions (current Teams desktop, web and mobile)."
)


class TeamsChannel:
    """Questions in Microsoft Teams, asked by a bot (see the module docstring for the wire format).

    Args:
        app_id: the bot's Microsoft App ID (the audience of the tokens Teams sends).
        app_password: the bot's client secret, for its own Connector tokens.
        service_url: where the Connector API is (the `serviceUrl` Teams activities
            carry, e.g. `https://smba.trafficmanager.net/teams/`); activities naming
            another service are refused.
        name: the channel's name in `via=` and in its callback path.
        openid_config_url: the Bot Connector's OpenID configuration (its signing keys).
        token_url: where the bot gets its own tokens (client credentials).
        issuer: the `iss` of the Connector's tokens.
        leeway: seconds of clock skew allowed on token expiry, and how long
            after a token's expiry its activity ids are still remembered.

    Raises:
        ValueError: a URL that is not https (http only on loopback, for local testing).
        ImportError: PyJWT is missing (`pip install 'elicitkit[teams]'`).
    """

    def __init__(
        self,
        app_id: str,
        app_password: str,
        *,
        service_url: str,
        name: str = "teams",
        openid_config_url: str = "https://login.botframework.com/v1/.well-known/openidconfiguration",
        token_url: str = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token",
        issuer: str = "https://api.botframework.com",
        leeway: float = 300,
    ) -> None:
        require()
        if not app_id or not app_password:
            raise ValueError("TeamsChannel needs the bot's app id and password (client secret)")
        for what, url in (
            ("service_url", service_url),
            ("openid_config_url", openid_config_url),
            ("token_url", token_url),
        ):
            _check_url(what, url)
        self.name = name
        self.app_id = app_id
        self.service_url = service_url.rstrip("/")
        self.leeway = leeway
        self._auth = ConnectorAuth(app_id, openid_config_url, issuer, leeway, self.service_url)
        self._connector = Connector(self.service_url, BotToken(app_id, app_password, token_url))
        self._seen = SeenActivities()
        self._desk: Desk | None = None

    def __repr__(self) -> str:
        return f"TeamsChannel({self.app_id!r}, service_url={self.service_url!r}, name={self.name!r})"

    # -- Channel ---------------------------------------------------------------------

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        self._desk = desk

    def routes(self) -> Sequence[Route]:
        return [Route(f"/elicit/channels/{self.name}/messages", self._messages, methods=["POST"])]

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        """Post the question's card to its conversation; the ref is `{"conversation", "activity"}`.

        Raises:
            ChannelRefused: no conversation id, or a field Teams has no input for.
            TeamsError: the Connector refused the bot or could not be reached.
        """
        if not prompt.target:
            raise ChannelRefused("a Teams question needs a conversation id: via=teams(conversation_id)")
        activity = _message(question_card(prompt), summary=prompt.message)
        sent = await self._connector.send("POST", _activities(prompt.target), activity, "post the question")
        activity_id = sent.get("id")
        if not isinstance(activity_id, str) or not activity_id:
            raise TeamsError("Teams accepted the question but returned no activity id to update it with later")
        return {"conversation": prompt.target, "activity": activity_id}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        """Replace the card with the question and its outcome (no buttons left to press)."""
        activity = _message(closed_card(prompt, closing), summary=closing.text) | {"id": ref["activity"]}
        path = _activities(ref["conversation"], ref["activity"])
        await self._connector.send("PUT", path, activity, "update the question")

    # -- the messaging endpoint ------------------------------------------------------

    async def _messages(self, request: Request) -> Response:
        body = await bounded_body(request, _MAX_BODY)
        if body is None:
            return PlainTextResponse("Activity too large", status_code=413)
        try:
            activity = json.loads(body)
        except ValueError:
            activity = None
        if not isinstance(activity, dict):
            return PlainTextResponse("Expected an activity (a JSON object)", status_code=400)
        try:
            claims = await self._auth.verify(request.headers.get("authorization"), activity)
        except Unauthorized as exc:
            logger.info("Refused a Teams activity: %s", exc.reason)
            return PlainTextResponse("Unauthorized", status_code=401)
        except KeysUnavailable as exc:
            # A failed fetch is logged once where it happens: this is said for every request meanwhile.
            logger.debug("Cannot check a Teams activity now: %s", exc)
            return PlainTextResponse("Cannot check the token right now", status_code=503)
        activity_id, conversation = activity.get("id"), _get(activity, "conversation", "id")
        if not isinstance(activity_id, str) or not activity_id or not isinstance(conversation, str):
            return PlainTextResponse("An activity needs an id and a conversation", status_code=400)
        if not self._seen.first_time((conversation, activity_id), float(claims["exp"]) + self.leeway):
            logger.info("Refused a replayed Teams activity %s", activity_id)
            return PlainTextResponse("This activity was already received", status_code=409)
        responder = _responder(self.name, activity)
        kind, value = activity.get("type"), activity.get("value")
        if kind == "invoke" and activity.get("name") == "adaptiveCard/action":
            data = _get(activity, "value", "action", "data")
            text = await self._press(data, responder, private=True) if responder else _NO_SENDER
            return JSONResponse({"statusCode": 200, "type": MESSAGE_TYPE, "value": text})
        if kind == "invoke":
            return Response(status_code=501)  # what Bot Framework bots answer to invokes they do not handle
        if kind == "message" and isinstance(value, dict) and "ek" in value:
            text = await self._press(value, responder, private=False) if responder else _NO_SENDER
            await self._reply(activity, text)
        return Response(status_code=200)

    async def _press(self, data: Any, responder: Responder, *, private: bool) -> str:
        """What the desk says to a button press (its data: the card's `ek`, `action` and inputs)."""
        desk = self._desk
        if desk is None:
            raise RuntimeError("TeamsChannel.bind was not called: add the channel with Elicitation(channels=[...])")
        token = data.get("ek") if isinstance(data, Mapping) else None
        if not isinstance(token, str):
            return _NOT_OURS
        action = data.get("action")
        if action == "decline":
            return (await desk.reply(token, responder, "decline", None)).message
        if action == "secure":
            if not private:
                return _NO_PRIVATE_LINK
            verdict = await desk.secure_link(token, responder)
            return f"Your one-time link (only you can see it): {verdict.message}" if verdict.ok else verdict.message
        if action == "answer":
            prompt = await desk.prompt(token)
            content = content_of(prompt.schema, data) if prompt is not None else {}
            return (await desk.reply(token, responder, "accept", content)).message
        return _NOT_OURS

    async def _reply(self, activity: Mapping[str, Any], text: str) -> None:
        conversation, activity_id = activity["conversation"]["id"], activity["id"]
        reply = {
            "type": "message",
            "text": text,
            "replyToId": activity_id,
            "conversation": {"id": conversation},
            "from": activity.get("recipient") or {"id": f"28:{self.app_id}"},
            "recipient": activity.get("from"),
        }
        try:
            await self._connector.send("POST", _activities(conversation, activity_id), reply, "reply to a press")
        except TeamsError as exc:
            logger.warning("Could not tell a Teams user what became of their answer: %s", exc)


def _message(card: dict[str, Any], *, summary: str) -> dict[str, Any]:
    return {
        "type": "message",
        "summary": summary[:200],
        "attachments": [{"contentType": CARD_TYPE, "content": card}],
    }


def _activities(conversation: str, activity_id: str | None = None) -> str:
    path = f"/v3/conversations/{quote(conversation, safe='')}/activities"
    return path if activity_id is None else f"{path}/{quote(activity_id, safe='')}"


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _responder(channel: str, activity: Mapping[str, Any]) -> Responder | None:
    sender = activity.get("from")
    if not isinstance(sender, Mapping):
        return None
    user = sender.get("aadObjectId")  # never `from.id`: see the module docstring
    name = sender.get("name")
    if not isinstance(user, str) or not user:
        return None
    return Responder(channel, user, name if isinstance(name, str) and name else None)


def _check_url(what: str, url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if parts.scheme == "http" and loopback:
        return
    raise ValueError(f"TeamsChannel {what} must be an https URL (http only on loopback), not {url!r}")
