"""The web inbox's pages: a person's open questions, live, answered in place.

    GET  /elicit/inbox              the page; `?part=list` is the list alone (what inbox.js fetches)
    GET  /elicit/inbox/events       Server-Sent Events for this person's inbox
    POST /elicit/inbox/answer       submit or decline one question
    GET  /elicit/static/inbox.js    the page's only script

Who opens the page is `page_identity(request)` (the server's session or SSO):
nobody signed in gets a 401 page, and a server without `page_identity` gets a
404 page saying how to turn the inbox on. A person sees only their own inbox,
and the desk refuses an answer from anyone who is not an approver.

The event stream (`text/event-stream`) sends `event: ready` once it listens,
`event: changed` each time a question arrives in or leaves this inbox, and a
`: keepalive` comment every 15 seconds. inbox.js then fetches the list and
merges it into the page, keeping the forms someone is typing in; without
JavaScript, a reload shows the current list.

Answers are form posts with double-submit CSRF protection: the page sets a
sealed cookie bound to the principal (`HttpOnly; SameSite=Lax; Path=/elicit/`)
and puts the same value in every form; a post must carry both, equal, for the
person signed in. The desk then checks approvers, validates and takes the
answer once; the page shows its verdict (invalid answers come back with the
problems next to the fields). Pages are autoescaped templates with the same
security headers as elicitkit's other pages; only the inbox's CSP also allows
same-origin scripts and connections (inbox.js and its fetches).
"""

from __future__ import annotations

import dataclasses
import hmac
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files
from typing import Any, Protocol, runtime_checkable

import anyio
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from elicitkit._errors import ElicitationError
from elicitkit._schema import authored
from elicitkit._schema.choices import options_of
from elicitkit._web.app import PageIdentity
from elicitkit._web.forms import CONTROLS, page_controls, parse_form
from elicitkit._web.messages import WHOLE, explain
from elicitkit._web.pages import CSP, _templates, fields_html, message_page, problems_of, render_summary
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from elicitkit.channels.base import Desk, Prompt, Responder, Verdict

__all__ = ["InboxDesk", "Index", "InboxPages", "QuestionView", "question_view", "unrenderable"]


@runtime_checkable
class InboxDesk(Desk, Protocol):
    """What the web inbox reaches of elicitkit's desk, besides what every channel does: each person's index of
    open questions (sealed in the store), its change feed across nodes, the tokens its CSRF values are minted
    with, and who opens a page."""

    tokens: LinkTokens
    page_identity: PageIdentity | None

    async def file_in_inbox(self, principal: str, entry_id: str, value: dict[str, Any], expires_at: float) -> None:
        """Show an entry in `principal`'s inbox until `expires_at`."""
        ...

    async def inbox(self, principal: str) -> dict[str, dict[str, Any] | None]:
        """`principal`'s entries by id (None for one that cannot be opened: another secret, or altered)."""
        ...

    async def unfile(self, principal: str, entry_id: str) -> None: ...

    def inbox_changes(self, principal: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """A message each time `principal`'s inbox changes, on any node, for as long as the context is open."""
        ...

    async def inbox_changed(self, principal: str) -> None:
        """Tell every node's pages open on `principal`'s inbox that it changed."""
        ...


_HEADERS = {
    # elicitkit's CSP, plus inbox.js and the requests it makes (the list fragment, the event stream).
    "Content-Security-Policy": f"{CSP}; script-src 'self'; connect-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_COOKIE = "ek_inbox"
_CSRF_ID = "~inbox"
"""The CSRF token is a `browser` link for this pseudo question id; real ids never contain `~`."""
_CSRF_TTL = 12 * 3600.0
_ENABLE = (
    "The web inbox is not enabled on this server: it needs to know who opens it. "
    "Pass Elicitation(server, page_identity=...) (your session or SSO)."
)
_SIGN_IN = "Sign in to see the questions waiting for you, then open this page again."
_FORGED = "This form was not sent from your inbox. Reload the inbox and answer again."
_REPEATED = "This form was not sent as your inbox shows it (a control came twice). Reload the inbox and answer again."
_NOT_SENT = "Your answer was not sent"
_KINDS = ("string", "number", "integer", "boolean", "array")


class Index(Protocol):
    """The open questions of each principal, and the changes to them (the WebInbox channel)."""

    name: str

    async def questions(self, principal: str) -> list[Prompt]: ...

    def changes(self, principal: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]: ...


@dataclass(frozen=True, slots=True)
class QuestionView:
    """What the list template needs to show one question and its form."""

    id: str
    token: str
    message: str
    tool: str | None
    expires_iso: str
    expires_text: str
    fields: Markup
    """The form's fields, rendered (`pages.fields_html`)."""
    problems: list[tuple[str | None, str]] = dataclasses.field(default_factory=list)
    """A refused answer's error summary lines (`pages.problems_of`); empty otherwise."""
    error: str | None = None
    """A refused answer's problem with the answer as a whole."""


def unrenderable(schema: Mapping[str, Any]) -> str | None:
    """Why the inbox cannot show a question (naming the field), or None when every field has a control."""
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "string")
        if kind not in _KINDS:
            return f"field {name!r} has type {kind!r}, which has no form control"
        if kind == "array" and not options_of(prop.get("items", {})):
            return f"field {name!r} is a list without choices; only multi-selects of fixed options have a control"
    return None


def question_view(
    prompt: Prompt,
    values: Mapping[str, Any] | None = None,
    problems: Mapping[str, str] | None = None,
    now: float | None = None,
) -> QuestionView:
    """`prompt` as the list shows it; `values` and `problems` (by field refused, why) re-show a refused answer."""
    scope = f"q-{prompt.id}"
    errors: dict[str, str] = {}
    if problems is not None:
        # The page's own words, from the schema; never the validator's text.
        said = {name: words for name, why in problems.items() if (words := authored(why)) is not None}
        errors = explain(prompt.schema, values, problems.keys(), said) or {"": WHOLE}
    fields, views = fields_html(prompt.schema, values, errors, prompt.secret_fields, scope)
    expires = datetime.fromtimestamp(prompt.expires_at, UTC)
    return QuestionView(
        id=scope,
        token=prompt.token,
        message=prompt.message,
        tool=prompt.tool,
        expires_iso=expires.isoformat().replace("+00:00", "Z"),
        expires_text=_remaining(prompt.expires_at - (time.time() if now is None else now), expires),
        fields=fields,
        problems=problems_of(views, errors),
        error=errors.get(""),
    )


def _remaining(seconds: float, at: datetime) -> str:
    clock = at.strftime("%H:%M UTC")
    if seconds < 90:
        return f"expires at {clock} (in about a minute)"
    if seconds < 5400:
        return f"expires at {clock} (in {round(seconds / 60)} minutes)"
    return f"expires at {at.strftime('%Y-%m-%d %H:%M UTC')}"


@cache
def script() -> str:
    return files("elicitkit._web").joinpath("static", "inbox.js").read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class _Notice:
    text: str
    ok: bool


class InboxPages:
    """The inbox's routes, over the channel's index and elicitkit's desk."""

    def __init__(self, index: Index, desk: InboxDesk, base_url: Callable[[], str], *, keepalive: float = 15.0) -> None:
        self.index = index
        self.desk = desk
        self.base_url = base_url
        self.keepalive = keepalive

    def routes(self) -> list[Route]:
        return [
            Route("/elicit/inbox", self.page, methods=["GET"]),
            Route("/elicit/inbox/events", self.events, methods=["GET"]),
            Route("/elicit/inbox/answer", self.answer, methods=["POST"]),
            Route("/elicit/static/inbox.js", self.script, methods=["GET"]),
        ]

    # -- routes ------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        principal = await self._principal(request)
        if isinstance(principal, Response):
            return principal
        return await self._inbox(request, principal, part=request.query_params.get("part") == "list")

    async def events(self, request: Request) -> Response:
        principal = await self._principal(request)
        if isinstance(principal, Response):
            return principal
        if request.method == "HEAD":  # no stream to hold open for a request that takes no body
            return Response(media_type="text/event-stream", headers=_HEADERS)
        return StreamingResponse(
            self._stream(principal),
            media_type="text/event-stream",
            headers=_HEADERS | {"X-Accel-Buffering": "no"},  # proxies such as nginx must not hold events back
        )

    async def answer(self, request: Request) -> Response:
        principal = await self._principal(request)
        if isinstance(principal, Response):
            return principal
        form = await request.form()
        controls = page_controls(form.multi_items())
        if controls is None:
            return self._error(request, _REPEATED, 400, title=_NOT_SENT)
        sent, bound = controls.get(CONTROLS.csrf), self._csrf(request, principal)
        if not (sent is not None and bound is not None and hmac.compare_digest(sent.encode(), bound.encode())):
            return self._error(request, _FORGED, 403, title=_NOT_SENT)
        token, action = controls.get(CONTROLS.token), controls.get(CONTROLS.action)
        if token is None or action not in ("accept", "decline"):
            return self._error(request, "Choose Submit or Decline on one of your questions.", 400, title=_NOT_SENT)
        prompt = await self.desk.prompt(token)
        if prompt is None:
            closed = "This question is closed: it was already answered, withdrawn, or it expired."
            return await self._inbox(request, principal, notice=_Notice(closed, ok=False), status=410)
        content: dict[str, Any] | None = None
        if action == "accept":
            lists = {key: [v for v in form.getlist(key) if isinstance(v, str)] for key in form}
            content = parse_form(prompt.schema, lists)
        reason = controls.get(CONTROLS.reason) if action == "decline" else None
        who = Responder(self.index.name, principal, principal)
        verdict = await self.desk.reply(token, who, str(action), content, reason=reason)
        return await self._verdict(request, principal, prompt, verdict, content)

    async def script(self, request: Request) -> Response:
        return Response(
            script(),
            media_type="text/javascript",
            headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
        )

    # -- the pieces ------------------------------------------------------------------

    async def _verdict(
        self, request: Request, principal: str, prompt: Prompt, verdict: Verdict, content: dict[str, Any] | None
    ) -> Response:
        if verdict.status == "answered":
            # The run may not have closed the question yet: leave it out of this page regardless.
            notice = _Notice(verdict.message, ok=True)
            return await self._inbox(request, principal, notice=notice, hide=prompt.id)
        if verdict.status == "invalid":
            refused = question_view(prompt, content, verdict.problems)
            notice = _Notice(f"Your answer to \u201c{prompt.message}\u201d was not sent.", ok=False)
            return await self._inbox(request, principal, notice=notice, refused=refused, status=422)
        status = 403 if verdict.status == "not_approver" else 410
        return await self._inbox(request, principal, notice=_Notice(verdict.message, ok=False), status=status)

    async def _inbox(
        self,
        request: Request,
        principal: str,
        *,
        part: bool = False,
        notice: _Notice | None = None,
        hide: str | None = None,
        refused: QuestionView | None = None,
        status: int = 200,
    ) -> Response:
        now = time.time()
        views = [question_view(p, now=now) for p in await self.index.questions(principal) if p.id != hide]
        if refused is not None:
            views = [refused if v.id == refused.id else v for v in views]
        csrf = self._csrf(request, principal, fresh_for=_CSRF_TTL / 2) or self.desk.tokens.mint(
            Link(_CSRF_ID, principal, "browser", now + _CSRF_TTL)
        )
        root = self._root(request)
        context: dict[str, Any] = {
            "questions": views,
            "csrf": csrf,
            "action": f"{root}/elicit/inbox/answer",
        }
        if part:
            body = _templates().get_template("inbox_list.html").render(**context)
        else:
            context |= {
                "title": ("Error: " if notice is not None and not notice.ok else "")
                + (f"Your questions ({len(views)})" if views else "Your questions"),
                "summary": None
                if notice is None or notice.ok
                else render_summary([] if refused is None else refused.problems, notice.text),
                "css": f"{root}/elicit/static/style.css",
                "script": f"{root}/elicit/static/inbox.js",
                "list_url": f"{root}/elicit/inbox?part=list",
                "events_url": f"{root}/elicit/inbox/events",
                "principal": principal,
                "notice": notice,
            }
            body = _templates().get_template("inbox.html").render(**context)
        response = HTMLResponse(body, status_code=status, headers=_HEADERS)
        self._set_csrf(request, response, csrf)
        return response

    async def _stream(self, principal: str) -> AsyncIterator[str]:
        async with self.index.changes(principal) as changes:
            # Only now are changes heard: the page fetches the list once more, so nothing in between is missed.
            yield "retry: 3000\nevent: ready\ndata: ready\n\n"
            while True:
                event = ": keepalive\n\n"
                with anyio.move_on_after(self.keepalive):
                    try:
                        await changes.__anext__()
                    except StopAsyncIteration:  # the broker closed: the browser reconnects
                        return
                    event = "event: changed\ndata: changed\n\n"
                yield event  # outside the cancel scope: an async generator must not yield inside one

    async def _principal(self, request: Request) -> str | Response:
        identity: PageIdentity | None = self.desk.page_identity
        if identity is None:
            return self._error(request, _ENABLE, 404, title="The web inbox is off")
        principal = await identity(request)
        if principal is None:
            return self._error(request, _SIGN_IN, 401, title="Sign in first")
        return principal

    def _csrf(self, request: Request, principal: str, *, fresh_for: float = 0.0) -> str | None:
        """The CSRF value this browser holds for `principal`, if valid (for `fresh_for` seconds more).

        Pages renew it only when half its life is gone: every open tab's forms carry the cookie's value.
        """
        value = request.cookies.get(_COOKIE)
        if not value:
            return None
        try:
            link = self.desk.tokens.read(value, "browser")
        except InvalidLink:
            return None
        if link.question_id != _CSRF_ID or link.principal != principal or link.expires_at - time.time() < fresh_for:
            return None
        return value

    def _set_csrf(self, request: Request, response: Response, value: str) -> None:
        response.set_cookie(
            _COOKIE,
            value,
            max_age=int(_CSRF_TTL),
            path=f"{self._root(request)}/elicit/",
            secure=request.url.scheme == "https" or self._public().startswith("https://"),
            httponly=True,
            samesite="lax",  # never sent on a cross-site POST
        )

    def _public(self) -> str:
        try:
            return self.base_url()
        except ElicitationError:  # no public_url configured: the request's own scheme decides
            return ""

    @staticmethod
    def _root(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    def _error(self, request: Request, text: str, status: int, *, title: str) -> HTMLResponse:
        css = f"{self._root(request)}/elicit/static/style.css"
        return HTMLResponse(message_page(title, text, symbol="⚠", css=css), status_code=status, headers=_HEADERS)
