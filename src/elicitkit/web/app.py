"""elicitkit's pages: the secure form a link opens, and the callback third-party flows return to.

    GET  /elicit/f/{token}    the question as a form (no JavaScript)
    POST /elicit/f/{token}    submit, decline or cancel (CSRF-protected, validated again here)
    GET  /elicit/cb?state=…   where a third party (OAuth, payments) redirects back
    GET  /elicit/static/style.css

Every response carries a strict Content-Security-Policy and is never cached.
Links are sealed, expiring and usable once; a forged, expired, reused or
foreign link gets a clear page and resumes nothing.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from elicitkit.engine.run import Answer
from elicitkit.errors import InvalidElicitationContent
from elicitkit.schema import FormSchema, compile_schema
from elicitkit.validation import check_content, to_data
from elicitkit.web.forms import parse_form
from elicitkit.web.pages import CSP, STYLESHEET, error_page, form_page, message_page
from elicitkit.web.tokens import InvalidLink, Link, LinkTokens

if TYPE_CHECKING:
    from elicitkit.engine.engine import Engine

__all__ = ["Pages"]

logger = logging.getLogger("elicitkit")

_CSRF_COOKIE = "ek_csrf"
_CLOSE = "You can close this page and return to the conversation."
_STALE_FORM = "This form expired or was not sent from this page. Reload the link and try again."
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=_HEADERS)


class _Form:
    """What a page needs to know about the question behind a link."""

    def __init__(self, message: str, schema: FormSchema, local: bool) -> None:
        self.message = message
        self.schema = schema
        self.local = local


class Pages:
    """The routes, bound to an engine and its link tokens."""

    def __init__(self, engine: Engine, tokens: LinkTokens) -> None:
        self.engine = engine
        self.tokens = tokens

    def routes(self) -> list[Route]:
        return [
            Route("/elicit/f/{token}", self.form, methods=["GET", "POST"]),
            Route("/elicit/cb", self.callback, methods=["GET"]),
            Route("/elicit/static/style.css", self.style, methods=["GET"]),
        ]

    async def style(self, request: Request) -> Response:
        return Response(STYLESHEET, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})

    async def _question(self, link: Link) -> _Form | None:
        question = self.engine.url_questions.get(link.question_id)
        if question is not None:
            if question.answer is not None or question.caller[0] != link.principal:
                return None
            return _Form(question.message, question.schema, local=True)
        record = await self.engine.durability.load_question(link.question_id, link.principal)
        if record is None or record.mode != "url":
            return None
        return _Form(record.message, compile_schema(record.schema), local=False)

    async def form(self, request: Request) -> Response:
        try:
            link = self.tokens.read(request.path_params["token"], "form")
        except InvalidLink as exc:
            return _html(error_page(exc.reason), 400)
        found = await self._question(link)
        if found is None:
            return _html(error_page("This question was already answered, or it has expired."), 410)
        if request.method == "GET":
            return self._render(request, found, status=200)
        form = await request.form()
        field = form.get("_csrf")
        cookie = request.cookies.get(_CSRF_COOKIE)
        if not (isinstance(field, str) and cookie and hmac.compare_digest(field, cookie)):
            return _html(
                error_page("This form expired or was not sent from this page. Reload the link and try again."), 403
            )
        action = form.get("_action")
        if action not in ("accept", "decline", "cancel"):
            return _html(error_page("Choose Submit, Decline or Cancel."), 400)
        content: dict[str, Any] | None = None
        if action == "accept":
            lists = {key: [v for v in form.getlist(key) if isinstance(v, str)] for key in form}
            content = parse_form(found.schema.wire, lists)
            problems = self._problems(found, content)
            if problems:
                return self._render(request, found, status=422, values=content, errors=problems)
        if not await self.engine.store.use_once(f"link:{link.question_id}", link.expires_at):
            return _html(error_page("This link was already used."), 410)
        if not await self.engine.complete(link.question_id, link.principal, Answer(str(action), content)):
            return _html(error_page("This question was already answered, or it has expired."), 410)
        if action == "accept":
            return _html(message_page("Thank you", f"Your answer was sent. {_CLOSE}"))
        return _html(message_page("Done", _CLOSE, symbol="-"))

    @staticmethod
    def _problems(found: _Form, content: dict[str, Any]) -> dict[str, list[str]]:
        if found.local:
            try:
                to_data(found.schema, content)
            except InvalidElicitationContent as exc:
                return _by_field(exc)
            return {}
        problems: dict[str, list[str]] = {}
        for problem in check_content(found.schema, content):
            problems.setdefault(problem.path, []).append(problem.message)
        return problems

    def _render(
        self,
        request: Request,
        found: _Form,
        *,
        status: int,
        values: dict[str, Any] | None = None,
        errors: dict[str, list[str]] | None = None,
    ) -> Response:
        csrf = secrets.token_urlsafe(24)
        body = form_page(
            message=found.message,
            schema=found.schema.wire,
            action=str(request.url.path),
            csrf=csrf,
            values=values,
            errors=errors,
            secret=found.schema.secret_fields,
        )
        response = _html(body, status)
        response.set_cookie(
            _CSRF_COOKIE,
            csrf,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/elicit/",
            max_age=3600,
        )
        return response

    async def callback(self, request: Request) -> Response:
        state = request.query_params.get("state", "")
        try:
            link = self.tokens.read(state, "callback")
        except InvalidLink as exc:
            return _html(error_page(exc.reason), 400)
        if not await self.engine.store.use_once(f"link:{link.question_id}", link.expires_at):
            return _html(error_page("This link was already used."), 410)
        params = {key: value for key, value in request.query_params.items() if key != "state"}
        if not await self.engine.complete(link.question_id, link.principal, Answer("accept", params)):
            return _html(error_page("This request was already completed, or it has expired."), 410)
        return _html(message_page("All set", "You can close this page and return to the conversation."))


def _by_field(exc: InvalidElicitationContent) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for problem in exc.problems:
        problems.setdefault(problem.path.split(".")[0], []).append(problem.message)
    return problems
