"""URL mode: links the person opens, on both eras, with elicitkit's own pages behind them (`Links`).

- `elicit_url(ctx, message, url)` sends the person to any https URL; `accept`
  means they agreed to open it, as the spec says; with `wait="completed"` it
  returns once the page behind the URL says it is done (`complete`).
- `secure_form(ctx, message, Model)` asks on elicitkit's own page, so secrets
  never pass through the MCP client or the model.
- `url_flow(ctx, message, start)` runs a third-party flow (OAuth, payments)
  whose redirect comes back to elicitkit with the answer.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams
from starlette.routing import Route

from elicitkit import _mcp
from elicitkit._asking import Asking
from elicitkit._core.kinds import Answer, is_id, new_id
from elicitkit._engine.deadlines import now
from elicitkit._engine.engine import Engine
from elicitkit._engine.question import Asked, Question
from elicitkit._errors import ElicitationError
from elicitkit._mcp import ToolContext
from elicitkit._results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit._schema.compile import FormSchema, compile_schema
from elicitkit._schema.validate import to_data
from elicitkit._timeouts import LINK_LIFETIME_MAX, SERVER_DEFAULT, Timeout, check_message
from elicitkit._web.app import PageIdentity, Pages
from elicitkit._web.limits import CALLBACK_LIMIT, DEFAULT_BODY_LIMITS, BodyLimits, bounded
from elicitkit._web.tokens import Link, LinkTokens
from elicitkit.channels.base import Via

__all__ = ["Links", "Wait", "check_elicitation_id", "check_url"]

T = TypeVar("T")
Wait = Literal["accepted", "completed"]
"""When `elicit_url` returns: once the person agreed to open the link, or once the page behind it said it is done."""
REDACTED = "**********"


_NO_FIELDS = FormSchema(wire={"type": "object", "properties": {}}, source=None, adapter=None)


def check_elicitation_id(elicitation_id: str) -> str:
    """Refuse an `elicitationId` that could not travel as a key or in a URL."""
    if not is_id(elicitation_id):
        raise ValueError("An elicitation id must be 1 to 128 letters, digits, '-' and '_'")
    return elicitation_id


def check_url(url: str) -> str:
    """Refuse anything but https (plain http for loopback only), URLs that carry credentials, and stray characters."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F or c == "\\" for c in url):
        raise ValueError("An elicitation URL must not contain whitespace, control characters or backslashes")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ValueError("An elicitation URL must not carry credentials (user:password@)")
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and _loopback(host):
        return url
    raise ValueError(f"An elicitation URL must be https (plain http only for loopback), not {parts.scheme or url!r}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Links:
    """URL-mode questions and the pages behind them: the link tokens, where the pages are reachable, who may
    open them. `Elicitation`'s URL methods are this object's."""

    def __init__(
        self,
        engine: Engine,
        asking: Asking,
        tokens: LinkTokens,
        *,
        public_url: str | None,
        page_identity: PageIdentity | None,
        body_limits: BodyLimits = DEFAULT_BODY_LIMITS,
    ) -> None:
        self.engine = engine
        self.body_limits = body_limits
        self.asking = asking
        self.tokens = tokens
        self.page_identity = page_identity
        """`async (request) -> principal`: who opens a page, checked against who was asked (None: not checked)."""
        self._public_url: str | None = None
        self.public_url = public_url

    @property
    def public_url(self) -> str | None:
        """Where elicitkit's pages are reachable from the person's browser, e.g. `https://mcp.example.com`."""
        return self._public_url

    @public_url.setter
    def public_url(self, value: str | None) -> None:
        self._public_url = check_url(value).rstrip("/") if value is not None else None

    def routes(self) -> list[Route]:
        """elicitkit's page routes and every added channel's callbacks, each reading its body within limits."""
        engine, limits = self.engine, self.body_limits
        routes = [
            bounded(route, limits.page, limits.read_timeout)
            for route in Pages(engine.pages, self.tokens, self).routes()
        ]
        for name, channel in engine.desk.channels.items():
            # A channel's callbacks take what its service sends; the web inbox's pages take what a page does.
            limit = limits.page if engine.desk.own_pages(name) else getattr(channel, "body_limit", CALLBACK_LIMIT)
            routes += [bounded(route, limit, limits.read_timeout) for route in channel.routes()]
        return routes

    def base(self) -> str:
        if self._public_url is None:
            raise ElicitationError(
                "elicitkit's pages need a public address: Elicitation(server, public_url='https://your.host')"
            )
        return self._public_url

    async def elicit_url(
        self,
        ctx: ToolContext,
        message: str,
        url: str,
        *,
        timeout: Timeout = SERVER_DEFAULT,
        required_error: bool = False,
        elicitation_id: str | None = None,
        wait: Wait = "accepted",
    ) -> ElicitationResult[None]:
        """`Elicitation.elicit_url`."""
        check_message(message)
        check_url(url)
        if wait not in ("accepted", "completed"):
            raise ValueError(f'wait must be "accepted" or "completed", not {wait!r}')
        question_id = (
            self.asking.question_id(ctx, message, "url")
            if elicitation_id is None
            else check_elicitation_id(elicitation_id)
        )
        if required_error and not _mcp.is_mrtr(_mcp.request_context(ctx).protocol_version):
            params = ElicitRequestURLParams(mode="url", message=message, url=url, elicitation_id=question_id)
            raise UrlElicitationRequiredError([params])
        limit = self.asking.limit(timeout)
        # Waiting for completion, the page behind `url` answers (`complete`), as elicitkit's own pages do: the
        # client's consent only acknowledges the question.
        observable = wait == "completed"
        question = self._url_question(message, url, _NO_FIELDS, limit, observable=observable, question_id=question_id)
        return await self.asking(
            ctx, question, limit, lambda _, answer: _outcome(answer.action, None, {}, answer.meta, answer.reason)
        )

    async def complete(self, elicitation_id: str, *, principal: str | None = None) -> bool:
        """`Elicitation.complete`."""
        check_elicitation_id(elicitation_id)
        live = self.engine.registry.answerable.get(elicitation_id)
        if live is not None and live.is_open:
            principal = live.caller[0]  # asked here: whoever was asked, whatever the caller of `complete` says
        reply = await self.engine.pages.page_answer(elicitation_id, principal, Answer("accept", {}))
        return reply.status == "answered"

    async def secure_form(
        self,
        ctx: ToolContext,
        message: str,
        schema: type[T],
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[T]:
        """`Elicitation.secure_form`."""
        form = compile_schema(schema, secrets=True)
        check_message(message)
        limit = self.asking.limit(timeout)

        def convert(_: Question, answer: Answer) -> ElicitationResult[Any]:
            if answer.action != "accept":
                return _outcome(answer.action, None, {}, answer.meta, answer.reason)
            # Secrets stay inside SecretStr in `data`; `content` never carries them in the clear.
            content = {k: (REDACTED if k in form.secret_fields else v) for k, v in (answer.content or {}).items()}
            return Accepted(data=to_data(form, answer.content), content=content, meta=answer.meta)

        chosen = self.asking.destination(via)
        if chosen is not None:
            asked = Asked(
                self.asking.question_id(ctx, message, "form"),
                message,
                form,
                secret_fields=form.secret_fields,
                via=chosen,
            )
            question = Question(asked, now() + limit)
            return await self.asking(ctx, question, limit, convert)
        question_id = self.asking.question_id(ctx, message, "url")
        token = self.tokens.mint(
            Link(question_id, _mcp.principal(_mcp.request_context(ctx)), "form", _link_expiry(limit))
        )
        url = f"{self.base()}/elicit/f/{token}"
        question = self._url_question(message, url, form, limit, observable=True, question_id=question_id)
        return await self.asking(ctx, question, limit, convert)

    async def url_flow(
        self,
        ctx: ToolContext,
        message: str,
        start: Callable[[str, str], str],
        *,
        timeout: Timeout = SERVER_DEFAULT,
    ) -> ElicitationResult[dict[str, str]]:
        """`Elicitation.url_flow`."""
        check_message(message)
        limit = self.asking.limit(timeout)
        question_id = self.asking.question_id(ctx, message, "url")
        principal = _mcp.principal(_mcp.request_context(ctx))
        state = self.tokens.mint(Link(question_id, principal, "callback", _link_expiry(limit)))
        target = check_url(start(f"{self.base()}/elicit/cb", state))
        # The person goes through elicitkit first, which binds their browser: the callback must come back to it.
        go = self.tokens.mint(Link(question_id, principal, "go", _link_expiry(limit), target=target))
        url = f"{self.base()}/elicit/go/{go}"
        question = self._url_question(
            message, url, _NO_FIELDS, limit, observable=True, question_id=question_id, content_private=True
        )

        def convert(_: Question, answer: Answer) -> ElicitationResult[Any]:
            content = answer.content if isinstance(answer.content, Mapping) else {}
            data = {str(k): str(v) for k, v in content.items()}
            return _outcome(answer.action, data, dict(content), answer.meta, answer.reason)

        return await self.asking(ctx, question, limit, convert)

    def _url_question(
        self,
        message: str,
        url: str,
        schema: FormSchema,
        limit: float,
        *,
        observable: bool,
        question_id: str | None = None,
        content_private: bool = False,
    ) -> Question:
        asked = Asked(
            id=question_id or new_id(),
            message=message,
            schema=schema,
            mode="url",
            url=url,
            observable=observable,
            secret_fields=schema.secret_fields,
            content_private=content_private,
        )
        return Question(asked, now() + limit)


def _link_expiry(limit: float) -> float:
    return time.time() + min(limit, LINK_LIFETIME_MAX)


def _outcome(
    action: str, data: Any, content: dict[str, Any], meta: Any = None, reason: str | None = None
) -> ElicitationResult[Any]:
    if action == "accept":
        return Accepted(data=data, content=content, meta=meta)
    if action == "decline":
        return Declined(reason, meta=meta)
    return Cancelled(meta=meta)
