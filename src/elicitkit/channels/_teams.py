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
   ignored. Bodies over 256 KiB (`body_limit`) are refused (413) before anything is parsed.

Cards send `Action.Execute` (Universal Actions) with an `Action.Submit`
fallback, except the secure-page button (see `teams_cards`).

Who pressed is what Teams itself says, not what the activity says. The
Connector's token vouches for the Bot Connector service (for this bot and this
`serviceUrl`), never for a user or a conversation, and one token rides on many
activities for about an hour; so an activity's `from` is only a claim. A press
answers only when:

- it comes from the conversation the question was asked in (a channel thread's
  `;messageid=` suffix aside);
- it names its sender's Teams user id (`from.id`) and AAD (Microsoft Entra)
  object id (`from.aadObjectId`);
- Teams, asked by the bot with its own token at the configured `service_url`
  (`GET /v3/conversations/{the question's conversation}/members/{from.id}`),
  knows that member there, under that very id and that AAD object id.

The responder is then Teams' record: its AAD object id (approvers are AAD
object ids) and its name. Any other press answers nothing, and the presser is
told why (in the invoke response, or in a reply for the Action.Submit
fallback). What remains possible is said in docs/channels.md: someone holding a
captured token and a member's Teams user id can still press as that member
until the token expires.
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

from elicitkit.channels._teams_auth import ConnectorAuth, KeysUnavailable, SeenActivities, Unauthorized, require
from elicitkit.channels._teams_cards import CARD_TYPE, closed_card, content_of, question_card, reason_of
from elicitkit.channels._teams_connector import BotToken, Connector, TeamsError
from elicitkit.channels.base import ChannelRefused, Closing, Desk, Prompt, Responder

__all__ = ["TeamsChannel", "TeamsError"]

logger = logging.getLogger("elicitkit")

MESSAGE_TYPE = "application/vnd.microsoft.activity.message"
_NO_SENDER = "Teams did not say which Microsoft Entra (AAD) user pressed this button, so it cannot answer the question."
_NOT_OURS = "This button does not belong to an elicitkit question."
_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."
_ELSEWHERE = "This button belongs to a question asked in another conversation, so it cannot answer it here."
_NOT_A_MEMBER = "Teams does not list you in the conversation this question was asked in, so you cannot answer it."
_NOT_VERIFIED = "Teams does not know the sender of this press as the user it names, so it cannot answer the question."
_UNCHECKED = "Teams could not be asked who pressed this button just now, so nothing was answered: press it again."
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

    body_limit = 256 * 1024
    """The largest activity read: a button press is a few KB, and elicitkit refuses more."""

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
        body = await request.body()  # read by elicitkit within `body_limit` and its read timeout
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
        kind, value = activity.get("type"), activity.get("value")
        if kind == "invoke" and activity.get("name") == "adaptiveCard/action":
            text = await self._press(activity, _get(activity, "value", "action", "data"), private=True)
            return JSONResponse({"statusCode": 200, "type": MESSAGE_TYPE, "value": text})
        if kind == "invoke":
            return Response(status_code=501)  # what Bot Framework bots answer to invokes they do not handle
        if kind == "message" and isinstance(value, dict) and "ek" in value:
            await self._reply(activity, await self._press(activity, value, private=False))
        return Response(status_code=200)

    async def _press(self, activity: Mapping[str, Any], data: Any, *, private: bool) -> str:
        """What the desk says to a button press (its data: the card's `ek`, `action` and inputs)."""
        desk = self._desk
        if desk is None:
            raise RuntimeError("TeamsChannel.bind was not called: add the channel with Elicitation(channels=[...])")
        token, action = (data.get("ek"), data.get("action")) if isinstance(data, Mapping) else (None, None)
        if not isinstance(token, str) or action not in ("answer", "decline", "secure"):
            return _NOT_OURS
        if action == "secure" and not private:
            return _NO_PRIVATE_LINK
        prompt = await desk.prompt(token)
        if prompt is None:
            return _CLOSED
        presser = await self._presser(activity, prompt)
        if not isinstance(presser, Responder):
            return presser
        if action == "decline":
            return (await desk.reply(token, presser, "decline", None, reason=reason_of(data))).message
        if action == "secure":
            verdict = await desk.secure_link(token, presser)
            return f"Your one-time link (only you can see it): {verdict.message}" if verdict.ok else verdict.message
        return (await desk.reply(token, presser, "accept", content_of(prompt.schema, data))).message

    async def _presser(self, activity: Mapping[str, Any], prompt: Prompt) -> Responder | str:
        """Who pressed, as Teams knows them in the question's conversation; or why the press answers nothing
        (see the module docstring)."""
        user_id, aad = _get(activity, "from", "id"), _get(activity, "from", "aadObjectId")
        if not isinstance(user_id, str) or not user_id or not isinstance(aad, str) or not aad:
            return _NO_SENDER  # never `from.id` alone: it is not the AAD id
        asked_in = _thread_root(prompt.target)
        if asked_in is None or _thread_root(_get(activity, "conversation", "id")) != asked_in:
            logger.info("Refused a Teams press on a question asked in another conversation")
            return _ELSEWHERE
        try:
            member = await self._connector.member(asked_in, user_id)
        except TeamsError as exc:
            logger.warning("Could not check with Teams who pressed a button, so the press answered nothing: %s", exc)
            return _UNCHECKED
        if member is None:
            return _NOT_A_MEMBER
        known_aad, name = member.get("aadObjectId"), member.get("name")
        if member.get("id") != user_id or not isinstance(known_aad, str) or known_aad.lower() != aad.lower():
            # Teams itself never sends this: the activity's `from` was written by someone else.
            logger.warning("Refused a Teams press whose sender is not the member Teams knows under its user id")
            return _NOT_VERIFIED
        return Responder(self.name, known_aad, name if isinstance(name, str) and name else None)

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


def _thread_root(conversation: Any) -> str | None:
    """A conversation id without a channel thread's `;messageid=` suffix (None: not an id)."""
    if not isinstance(conversation, str) or not conversation:
        return None
    return conversation.partition(";messageid=")[0]


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
