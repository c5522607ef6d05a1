"""The Slack channel: questions as Block Kit messages, answers through the app's interactivity callback.

```python
from elicitkit.channels import SlackChannel, slack

hitl = Elicitation(server, channels=[SlackChannel(bot_token, signing_secret)], public_url="https://desk.example.com")
await hitl.confirm(ctx, "Deploy v2.1?", via=slack("#deploys", approvers={"U024BE7LH"}))
```

Out, through slack-sdk's `AsyncWebClient` (the bot token as `Authorization: Bearer`, JSON bodies):

- `chat.postMessage {channel, text, blocks}` posts the question (see `slack_blocks`); the
  reply's `channel` and `ts` are the reference kept with the question;
- `views.open {trigger_id, view}` opens the modal of a multi-field question, or the decline modal
  (an optional reason), right after the click (a trigger id lives 3 seconds); when Slack will not open
  the decline modal, the click declines without a reason;
- `chat.update {channel, ts, text, blocks}` replaces the controls with the outcome when the question closes;
- what the desk says to one person (refusals, thanks, the secure link) is posted to the interaction's
  `response_url` as `{"response_type": "ephemeral", "replace_original": false, "text": ...}`. Unlike
  `chat.postEphemeral` it needs no scope and no bot membership of the channel, and reaches exactly the
  user who clicked, where they clicked. A modal keeps the `response_url` of the click that opened it in
  its `private_metadata`, so answers given there are acknowledged the same way.

In: `POST /elicit/channels/<name>/interactions` (the app's Interactivity Request URL), a
form-encoded `payload=<json>`:

- `block_actions`: a click on one of the message's controls (`action_id` "elicitkit.*"); the
  clicker is `payload.user.id`. Answered with an empty 200 once the desk has the reply (and the
  modal is open); the private reply follows the response, so Slack's 3-second budget is not spent on it.
- `view_submission` of the modal (`callback_id` "elicitkit") or of the decline modal
  (`"elicitkit.decline"`, its reason in the input block "reason"): answered with
  `{"response_action": "clear"}` when the desk took the answer, `"errors"` (by input block)
  when it refused it as invalid, `"update"` (a notice) when the question closed or the person
  may not answer it.

Security checks, in this order, before the payload is parsed:

1. bodies over 1 MiB (`body_limit`), or slower than `BodyLimits.read_timeout`, are refused (413, 408)
   before they are read further (`elicitkit._web.limits`, for every route elicitkit serves);
2. `X-Slack-Request-Timestamp` must be within `tolerance` seconds of now (else 401);
3. `X-Slack-Signature` must equal `v0=` + hex HMAC-SHA256(signing secret, `v0:{timestamp}:{raw body}`),
   compared in constant time (else 401);
4. a signature already accepted is refused (401) until its timestamp leaves the window, after which
   step 2 refuses it anyway: memory stays bounded by the requests of one window. It is kept per
   process; on several nodes a replay landing elsewhere still cannot answer twice (the desk takes
   each answer once across nodes).

Everything else — who may answer (`approvers`), validation, taking the answer once — is the desk's.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from elicitkit.channels._slack_blocks import (
    ANSWER,
    CALLBACK_ID,
    DECLINE,
    DECLINE_CALLBACK_ID,
    PREFIX,
    REASON,
    SECURE,
    closed_blocks,
    decline_view,
    escape,
    fallback_text,
    message_blocks,
    modal_view,
    notice_view,
)
from elicitkit.channels._slack_replies import click_content, content_of, errors_of, reason_of, token_of
from elicitkit.channels.base import ChannelRefused, Closing, Desk, Prompt, Responder, Verdict

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["SlackChannel"]

logger = logging.getLogger("elicitkit")

_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."


class SlackChannel:
    """Questions posted in Slack channels, answered with buttons and modals.

    Args:
        token: the app's bot token (`xoxb-…`); it needs the `chat:write` scope
            (and `chat:write.public` to post in public channels it was not invited to).
        signing_secret: the app's signing secret, which every callback is verified with.
        api_url: the Web API's base URL (default `https://slack.com/api/`).
        name: the channel's name in `Via` and in its callback path.
        tolerance: how many seconds a callback's timestamp may be off from now.

    Raises:
        ImportError: slack-sdk (or aiohttp) is not installed.
        ValueError: an empty signing secret, or a tolerance that is not positive.
    """

    body_limit = 1 << 20
    """The largest callback body read (a modal's submission carries its whole view); elicitkit refuses more."""

    def __init__(
        self,
        token: str,
        signing_secret: str,
        *,
        api_url: str | None = None,
        name: str = "slack",
        tolerance: float = 300,
    ) -> None:
        try:
            import aiohttp  # noqa: F401  (slack-sdk's async clients need it, and say so only on first use)
            from slack_sdk.web.async_client import AsyncWebClient
        except ImportError:
            raise ImportError("SlackChannel needs slack-sdk and aiohttp: pip install 'elicitkit[slack]'") from None
        if not signing_secret:
            raise ValueError("SlackChannel needs the app's signing secret to verify Slack's callbacks")
        if not tolerance > 0:
            raise ValueError(f"tolerance must be a positive number of seconds, not {tolerance!r}")
        self.name = name
        self.tolerance = tolerance
        self._secret = signing_secret.encode()
        base = (api_url or "https://slack.com/api/").rstrip("/") + "/"
        self._client: AsyncWebClient = AsyncWebClient(token=token, base_url=base)
        self._desk: Desk | None = None
        self._seen: set[str] = set()
        self._forget_at: list[tuple[float, str]] = []

    @property
    def path(self) -> str:
        """The callback path; the app's Interactivity Request URL is `public_url` followed by it."""
        return f"/elicit/channels/{self.name}/interactions"

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        self._desk = desk

    def routes(self) -> Sequence[Route]:
        return [Route(self.path, self._interactions, methods=["POST"])]

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        if not prompt.target:
            raise ChannelRefused("no Slack channel to post in: ask with via=slack('#channel')")
        blocks = message_blocks(prompt)
        response = await self._client.chat_postMessage(channel=prompt.target, text=fallback_text(prompt), blocks=blocks)
        return {"channel": str(response["channel"]), "ts": str(response["ts"])}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        await self._client.chat_update(
            channel=ref["channel"], ts=ref["ts"], text=escape(closing.text), blocks=closed_blocks(prompt, closing)
        )

    # -- the callback ------------------------------------------------------------------------------

    async def _interactions(self, request: Request) -> Response:
        body = await request.body()  # read by elicitkit within `body_limit` and its read timeout
        refusal = self._verify(request.headers, body)
        if refusal is not None:
            return PlainTextResponse(refusal, status_code=401)
        try:
            payload = json.loads(parse_qs(body.decode())["payload"][0])
            user = payload["user"]
            responder = Responder(self.name, str(user["id"]), user.get("name") or user.get("username"))
        except (UnicodeDecodeError, KeyError, IndexError, TypeError, ValueError):
            return PlainTextResponse("Expected a form field payload=<interaction JSON> with a user", status_code=400)
        if payload.get("type") == "block_actions":
            return await self._clicked(payload, responder)
        callback_id = (
            (payload.get("view") or {}).get("callback_id") if payload.get("type") == "view_submission" else None
        )
        if callback_id == CALLBACK_ID:
            return await self._submitted(payload["view"], responder)
        if callback_id == DECLINE_CALLBACK_ID:
            return await self._submitted(payload["view"], responder, declining=True)
        return Response(status_code=200)

    def _verify(self, headers: Mapping[str, str], body: bytes) -> str | None:
        """Why the request is not Slack's (None: it is, and it is new)."""
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        try:
            sent = int(timestamp)
        except ValueError:
            return "Missing or malformed X-Slack-Request-Timestamp"
        now = time.time()
        if abs(now - sent) > self.tolerance:
            return "Stale X-Slack-Request-Timestamp"
        mac = hmac.new(self._secret, b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
        if not hmac.compare_digest(("v0=" + mac.hexdigest()).encode(), signature.encode()):
            return "Invalid X-Slack-Signature"
        while self._forget_at and self._forget_at[0][0] < now:
            self._seen.discard(heapq.heappop(self._forget_at)[1])
        if signature in self._seen:
            return "Replayed request"
        self._seen.add(signature)
        heapq.heappush(self._forget_at, (sent + self.tolerance, signature))
        return None

    async def _clicked(self, payload: Mapping[str, Any], responder: Responder) -> Response:
        actions = payload.get("actions") or []
        action = actions[0] if actions and isinstance(actions[0], dict) else {}
        action_id = str(action.get("action_id", ""))
        token = token_of(payload, action) if action_id.startswith(PREFIX) else None
        if token is None:
            return Response(status_code=200)  # not ours (a link button, another app's control)
        desk, kind = self._bound(), action_id.removeprefix(PREFIX)
        response_url = payload.get("response_url")
        text: str | None
        if kind == ANSWER:
            text = await self._open_modal(token, str(payload.get("trigger_id", "")), response_url)
            what = "notice about the form"
        elif kind == SECURE:
            text = _secure_text(await desk.secure_link(token, responder))
            what = "secure-page link (or why there is none)"
        elif kind == DECLINE:
            text = await self._open_decline(token, str(payload.get("trigger_id", "")), response_url, responder)
            what = "reply to a decline"
        else:
            prompt = await desk.prompt(token)
            content = None if prompt is None else click_content(prompt.schema, kind, action)
            if prompt is not None and content is None:
                return Response(status_code=200)  # a control this question does not have
            text = _CLOSED if content is None else (await desk.reply(token, responder, "accept", content)).message
            what = "reply to an answer"
        return Response(status_code=200, background=self._tell(response_url, text, what))

    async def _open_modal(self, token: str, trigger_id: str, response_url: Any) -> str | None:
        """Open the question's modal; what to tell the clicker instead, if anything."""
        from slack_sdk.errors import SlackApiError

        prompt = await self._bound().prompt(token)
        if prompt is None:
            return _CLOSED
        metadata = json.dumps({"token": token, "response_url": response_url}, separators=(",", ":"))
        try:
            await self._client.views_open(trigger_id=trigger_id, view=modal_view(prompt, metadata))
        except SlackApiError as exc:
            logger.warning("Slack would not open the form of question %s: %s", prompt.id, exc.response.get("error"))
            return "Slack could not open the form in time; click Answer… again."
        return None

    async def _open_decline(self, token: str, trigger_id: str, response_url: Any, responder: Responder) -> str | None:
        """Open the modal that asks why; when Slack will not open it, decline at once (the click said so)."""
        from slack_sdk.errors import SlackApiError

        desk = self._bound()
        prompt = await desk.prompt(token)
        if prompt is None:
            return _CLOSED
        metadata = json.dumps({"token": token, "response_url": response_url}, separators=(",", ":"))
        try:
            await self._client.views_open(trigger_id=trigger_id, view=decline_view(prompt, metadata))
        except SlackApiError as exc:
            logger.warning("Slack would not open the decline of question %s: %s", prompt.id, exc.response.get("error"))
            return (await desk.reply(token, responder, "decline", None)).message
        return None

    async def _submitted(self, view: Mapping[str, Any], responder: Responder, *, declining: bool = False) -> Response:
        """A modal submitted: the question's form, or (`declining`) the decline with its reason."""
        try:
            metadata = json.loads(view.get("private_metadata") or "")
            token, response_url = str(metadata["token"]), metadata.get("response_url")
            values = view["state"]["values"]
        except (KeyError, TypeError, ValueError):
            return PlainTextResponse("A submission of elicitkit's modal without its metadata", status_code=400)
        desk = self._bound()
        prompt = await desk.prompt(token)
        if prompt is None:
            return JSONResponse({"response_action": "update", "view": notice_view(_CLOSED)})
        if declining:
            verdict = await desk.reply(token, responder, "decline", None, reason=reason_of(values))
            if verdict.status == "invalid":
                return JSONResponse({"response_action": "errors", "errors": {REASON: verdict.message}})
        else:
            verdict = await desk.reply(token, responder, "accept", content_of(prompt.schema, values))
            if verdict.status == "invalid":
                return JSONResponse({"response_action": "errors", "errors": errors_of(prompt.schema, verdict)})
        if not verdict.ok:
            return JSONResponse({"response_action": "update", "view": notice_view(verdict.message)})
        reply = self._tell(response_url, verdict.message, "reply to a form answer")
        return JSONResponse({"response_action": "clear"}, background=reply)

    def _tell(self, response_url: Any, text: str | None, what: str) -> BackgroundTask | None:
        """Say `text` to the person who clicked, only to them, once the callback is answered.

        `what` names the kind of message for the log, which never holds its text: it can be a one-time secure link.
        """
        if text is None:
            return None
        if not isinstance(response_url, str) or not response_url.startswith(("https://", "http://")):
            logger.warning("A Slack interaction came without a response_url; its %s was not shown", what)
            return None
        return BackgroundTask(_ephemeral, response_url, text)

    def _bound(self) -> Desk:
        if self._desk is None:
            raise RuntimeError("SlackChannel is not added to an Elicitation: Elicitation(server, channels=[...])")
        return self._desk


async def _ephemeral(response_url: str, text: str) -> None:
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    try:
        sent = await AsyncWebhookClient(response_url).send(text=text, response_type="ephemeral", replace_original=False)
    except Exception:
        logger.warning("Could not reply privately through Slack's response_url", exc_info=True)
        return
    if sent.status_code != 200:
        logger.warning("Slack refused a private reply: %s %s", sent.status_code, sent.body)


def _secure_text(verdict: Verdict) -> str:
    if not verdict.ok:
        return verdict.message
    return f"Only you can see this link. Answer on a one-time secure page: <{verdict.message}|open the form>"
