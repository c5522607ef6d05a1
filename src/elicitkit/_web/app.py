"""elicitkit's pages: the secure form a link opens, and the callback third-party flows return to.

    GET  /elicit/f/{token}    the question as a form (no JavaScript)
    POST /elicit/f/{token}    submit, decline or cancel
    GET  /elicit/go/{token}   binds this browser to a third-party flow, then redirects to it
    GET  /elicit/cb?state=…   where the third party (OAuth, payments) redirects back
    GET  /elicit/static/style.css

A link is bound to the first browser that opens it: that GET records the
binding in the store, once for every node (`Questions.bind_link`), and gives the
browser a sealed, per-link cookie (`SameSite=Lax`, `HttpOnly`). Every later
request of the link (the form, its POST, the `/elicit/go/` hop, the callback)
must carry that cookie, or gets "This link was opened in another browser": who
only saw a link or an authorize URL cannot answer once the person opened it. A
form POST also carries a hidden value derived from the cookie (CSRF). With
`page_identity`, the person opening the page must also be the principal asked.

Every response carries a strict Content-Security-Policy and is never cached.
Links are sealed, expiring and usable once; a forged, expired, reused or
foreign link gets a clear page and resumes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from elicitkit._core.kinds import Answer, decline_reason
from elicitkit._engine.page_questions import PageQuestion, PageReply
from elicitkit._schema import authored
from elicitkit._web.forms import CONTROLS, page_controls, parse_form
from elicitkit._web.messages import WHOLE, explain
from elicitkit._web.pages import CSP, error_page, form_page, message_page, stylesheet
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from elicitkit.channels.base import Responder

__all__ = ["PageIdentity", "PageSettings", "Pages"]

PageIdentity = Callable[[Request], Awaitable[str | None]]
"""`async (request) -> principal`: who is opening the page (your session or SSO), compared with who was asked."""

_CLOSE = "You can close this page and return to the conversation."
_GONE = "This question was already answered, or it has expired."
_ELSEWHERE = (
    "This link was opened in another browser, and only that browser can use it. "
    "Open the link from the conversation again in that browser."
)
_REPEATED = "This form was not sent as the page shows it (a control came twice). Reload the link and try again."
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class PageSettings(Protocol):
    @property
    def public_url(self) -> str | None: ...

    @property
    def page_identity(self) -> PageIdentity | None: ...


class Questions(Protocol):
    """How the pages reach questions: the engine's answers, seen through the things pages do."""

    async def page_question(self, question_id: str, principal: str | None) -> PageQuestion | None: ...

    async def bind_link(self, question_id: str, expires_at: float, by: Responder | None = None) -> bool:
        """Record that a browser opened the question's link (`by`'s own link, for an approver): True only the
        first time, across every node."""
        ...

    async def page_answer(
        self, question_id: str, principal: str | None, answer: Answer, by: Responder | None = None
    ) -> PageReply: ...


class Pages:
    """The routes, bound to an engine, its link tokens and the page settings."""

    def __init__(self, questions: Questions, tokens: LinkTokens, settings: PageSettings) -> None:
        self.questions = questions
        self.tokens = tokens
        self.settings = settings

    def routes(self) -> list[Route]:
        return [
            Route("/elicit/f/{token}", self.form, methods=["GET", "POST"]),
            Route("/elicit/go/{token}", self.go, methods=["GET"]),
            Route("/elicit/cb", self.callback, methods=["GET"]),
            Route("/elicit/static/style.css", self.style, methods=["GET"]),
        ]

    async def style(self, request: Request) -> Response:
        return Response(stylesheet(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})

    # -- helpers -------------------------------------------------------------

    @staticmethod
    def _root(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    def _html(self, request: Request, body: Callable[[str], str], status: int = 200) -> HTMLResponse:
        return HTMLResponse(
            body(f"{self._root(request)}/elicit/static/style.css"), status_code=status, headers=_HEADERS
        )

    def _error(self, request: Request, text: str, status: int) -> HTMLResponse:
        return self._html(request, lambda css: error_page(text, css=css), status)

    def _done(self, request: Request, title: str, text: str, symbol: str = "✓") -> HTMLResponse:
        return self._html(request, lambda css: message_page(title, text, symbol=symbol, css=css))

    @staticmethod
    def _cookie_name(link: Link) -> str:
        holder = "" if link.by is None else f"\0{link.by[0]}\0{link.by[1]}"  # an approver's link is their own
        return "ek_" + hashlib.sha256(f"{link.question_id}{holder}".encode()).hexdigest()[:16]

    def _bound(self, request: Request, link: Link) -> str | None:
        """This browser's binding to the link, if it holds a valid one."""
        value = request.cookies.get(self._cookie_name(link))
        if not value:
            return None
        try:
            bound = self.tokens.read(value, "browser")
        except InvalidLink:
            return None
        same = (bound.question_id, bound.principal, bound.by) == (link.question_id, link.principal, link.by)
        return value if same else None

    async def _admit(self, request: Request, link: Link) -> str | None:
        """This browser's binding to the link: the one it holds (a second tab keeps working), or a new one when it
        is the first browser to open the link; None when another browser opened it first."""
        held = self._bound(request, link)
        if held is not None:
            return held
        by = None if link.by is None else Responder(*link.by)
        if not await self.questions.bind_link(link.question_id, link.expires_at, by):
            return None
        return self.tokens.mint(Link(link.question_id, link.principal, "browser", link.expires_at, by=link.by))

    def _bind(self, request: Request, response: Response, link: Link, value: str) -> None:
        """Give this browser its binding to the link (again: the cookie's life follows the link's)."""
        public = self.settings.public_url or ""
        response.set_cookie(
            self._cookie_name(link),
            value,
            httponly=True,
            samesite="lax",  # sent on the top-level redirect back from a third party; never on cross-site POSTs
            secure=public.startswith("https://") or request.url.scheme == "https",
            path=f"{self._root(request)}/elicit/",
            max_age=max(1, int(link.expires_at - time.time())),
        )

    def _unbind(self, request: Request, response: Response, link: Link) -> Response:
        """The question is done: drop its cookie, so a busy browser does not pile them up."""
        response.delete_cookie(
            self._cookie_name(link), path=f"{self._root(request)}/elicit/", httponly=True, samesite="lax"
        )
        return response

    async def _same_person(self, request: Request, link: Link) -> bool:
        identity = self.settings.page_identity
        if identity is None or link.by is not None:
            # A link a channel handed privately to an approver it checked: the approver is a Slack (Discord,
            # Teams) user, whom the page's identity cannot name; the link binds the first browser that opens it.
            return True
        return await identity(request) == link.principal

    async def _question(self, link: Link) -> PageQuestion | None:
        return await self.questions.page_question(link.question_id, link.principal)

    # -- routes ------------------------------------------------------------------

    async def form(self, request: Request) -> Response:
        try:
            link = self.tokens.read(request.path_params["token"], "form")
        except InvalidLink as exc:
            return self._error(request, exc.reason, 400)
        if not await self._same_person(request, link):
            return self._error(request, "This link was sent to someone else.", 403)
        found = await self._question(link)
        if found is None:
            return self._error(request, _GONE, 410)
        binding = await self._admit(request, link) if request.method == "GET" else self._bound(request, link)
        if binding is None:
            return self._error(request, _ELSEWHERE, 403)
        if request.method == "GET":
            return self._render(request, link, found, binding, status=200)
        form = await request.form()
        controls = page_controls(form.multi_items())
        if controls is None:
            return self._error(request, _REPEATED, 400)
        field = controls.get(CONTROLS.csrf)
        if not (field is not None and hmac.compare_digest(field.encode(), _csrf_of(binding).encode())):
            return self._error(request, "This form was not sent from this page. Reload the link and try again.", 403)
        action = controls.get(CONTROLS.action)
        if action not in ("accept", "decline", "cancel"):
            return self._error(request, "Choose Submit, Decline or Cancel.", 400)
        content: dict[str, Any] | None = None
        if action == "accept":
            lists = {key: [v for v in form.getlist(key) if isinstance(v, str)] for key in form}
            content = parse_form(found.schema.wire, lists)
        try:
            reason = decline_reason(controls.get(CONTROLS.reason)) if action == "decline" else None
        except ValueError as exc:  # past the textarea's own maxlength: not sent from this page as rendered
            return self._error(request, str(exc), 400)
        by = None if link.by is None else Responder(*link.by)
        answer = Answer(str(action), content, reason=reason)
        reply = await self.questions.page_answer(link.question_id, link.principal, answer, by)
        if reply.status == "refused":
            assert reply.problems is not None
            # The page says what to do in its own words, from the schema; never the validator's text.
            problems = reply.problems.problems
            said = {p.field: words for p in problems if (words := authored(p.message)) is not None}
            errors = explain(found.schema.wire, content, [p.dotted for p in problems], said) or {"": WHOLE}
            return self._render(request, link, found, binding, status=422, values=content, errors=errors)
        if reply.status == "closed":
            return self._error(request, _GONE, 410)
        if action == "accept":
            return self._unbind(request, self._done(request, "Thank you", f"Your answer was sent. {_CLOSE}"), link)
        return self._unbind(request, self._done(request, "Done", _CLOSE, symbol="-"), link)

    def _render(
        self,
        request: Request,
        link: Link,
        found: PageQuestion,
        binding: str,
        *,
        status: int,
        values: dict[str, Any] | None = None,
        errors: dict[str, str] | None = None,
    ) -> Response:
        response = self._html(
            request,
            lambda css: form_page(
                message=found.message,
                schema=found.schema.wire,
                action=str(request.url.path),
                csrf=_csrf_of(binding),
                values=values,
                errors=errors,
                secret=found.schema.secret_fields,
                css=css,
            ),
            status,
        )
        self._bind(request, response, link, binding)
        return response

    async def go(self, request: Request) -> Response:
        """The first stop of a third-party flow: bind this browser, then send it on."""
        try:
            link = self.tokens.read(request.path_params["token"], "go")
        except InvalidLink as exc:
            return self._error(request, exc.reason, 400)
        if not await self._same_person(request, link):
            return self._error(request, "This link was sent to someone else.", 403)
        if link.target is None or await self._question(link) is None:
            return self._error(request, _GONE, 410)
        binding = await self._admit(request, link)
        if binding is None:
            return self._error(request, _ELSEWHERE, 403)
        response = RedirectResponse(link.target, status_code=303, headers=_HEADERS)
        self._bind(request, response, link, binding)
        return response

    async def callback(self, request: Request) -> Response:
        state = request.query_params.get("state", "")
        try:
            link = self.tokens.read(state, "callback")
        except InvalidLink as exc:
            return self._error(request, exc.reason, 400)
        if await self._question(link) is None:
            return self._error(request, "This link was already used, or it has expired.", 410)
        if self._bound(request, link) is None:
            # Whoever saw the authorize URL could otherwise hand the tool a code of their own.
            return self._error(request, _ELSEWHERE, 403)
        if not await self._same_person(request, link):
            return self._error(request, "This link was sent to someone else.", 403)
        params = {key: value for key, value in request.query_params.items() if key != "state"}
        reply = await self.questions.page_answer(link.question_id, link.principal, Answer("accept", params))
        if reply.status != "answered":
            return self._error(request, "This link was already used, or it has expired.", 410)
        return self._unbind(request, self._done(request, "All set", _CLOSE), link)


def _csrf_of(binding: str) -> str:
    """The form's hidden CSRF value: derived from the browser's binding, so the page never shows the cookie."""
    return hashlib.sha256(b"elicitkit/v1/csrf\0" + binding.encode()).hexdigest()
