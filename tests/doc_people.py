"""A person who answers any documented example's questions, without a script written for it.

The docs test cannot know each example's questions in advance, so this person reads them: a form is
filled from its `requestedSchema` (a default where there is one, else the first choice, the least a
bound allows, a well-formed value for a format), and a link to the server's own pages is opened and
the form there filled the same way (a third party's sign-in approves, as a provider would after its
own consent screen). `Person(agree=False)` declines everything instead, for the other branch of
every `match`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx
from anyio.abc import TaskGroup
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

# A link the model is told to give the person, in a question put through the model.
_LINK = re.compile(r"https?://\S+")

FORMATTED = {
    "email": "person@example.com",
    "uri": "https://example.com/",
    "date": "2026-11-27",
    "date-time": "2026-11-27T09:00:00Z",
}


def fill(schema: Mapping[str, Any], word: str = "answer") -> dict[str, Any]:
    """A valid answer to a restricted form schema: every property given a value it accepts (free text: `word`)."""
    return {name: _value(prop, word) for name, prop in schema.get("properties", {}).items()}


def _value(prop: Mapping[str, Any], word: str) -> Any:
    if "default" in prop:
        return prop["default"]
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        low = prop.get("minimum", 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "array":
        items = prop.get("items", {})
        options = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
        return options[: max(1, prop.get("minItems", 1))]
    if "enum" in prop:
        return prop["enum"][0]
    if "oneOf" in prop:
        return prop["oneOf"][0]["const"]
    if prop.get("format") in FORMATTED:
        return FORMATTED[prop["format"]]
    return _text(prop.get("minLength", 0), prop.get("maxLength"), word)


def _text(min_length: int, max_length: int | None, word: str = "answer") -> str:
    text = word.ljust(min_length, "x")
    return text[:max_length] if max_length is not None else text


class Person:
    """An elicitation callback that accepts (or, with `agree=False`, declines) whatever it is asked.

    Links to elicitkit's pages under `pages` (the server's own address) are opened and answered in `browser`
    from tasks started in `tasks`, other pages the server hosts itself are visited, and links elsewhere are
    only agreed to, as a URL-mode accept means.
    """

    def __init__(self, tasks: TaskGroup, pages: str, *, agree: bool = True) -> None:
        self.tasks = tasks
        self.pages = pages
        self.agree = agree
        self.asked: list[str] = []
        self.browser = httpx.AsyncClient(timeout=10)

    async def __call__(self, context: ClientRequestContext | None, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        if not self.agree:
            return ElicitResult(action="decline")
        if isinstance(params, ElicitRequestFormParams):
            link = _LINK.search(params.message)
            if link is not None and self._ours(link[0]):
                await self.open(link[0])  # through the model: the person opens it, then the model says accept
            elif link is not None and link[0].startswith(self.pages):
                await self.visit(link[0])
            return ElicitResult(action="accept", content=fill(params.requested_schema))
        if self._ours(params.url):
            self.tasks.start_soon(self.open, params.url)
        elif params.url.startswith(self.pages):
            self.tasks.start_soon(self.visit, params.url)  # a page the example's server hosts itself
        return ElicitResult(action="accept")

    def _ours(self, link: str) -> bool:
        """Whether `link` is one of the server's own pages, which the person opens; it must be reachable."""
        if not urlsplit(link).path.startswith("/elicit/"):
            return False  # someone else's page: agreeing to open it is the whole answer
        assert link.startswith(self.pages), f"the person is sent to {link}, but the pages are served at {self.pages}"
        return True

    async def open(self, link: str) -> None:
        """Open one of the server's links as a browser would, and answer what it shows."""
        page = await self.browser.get(link)
        if page.is_redirect:  # a third-party flow: /elicit/go/ sends the browser to the provider
            await self._provider_approves(page.headers["location"])
            return
        assert page.status_code == 200, page.text
        form = _Form(page.text)
        answer = await self.browser.post(link, data={"ek:csrf": form.csrf, "ek:action": "accept", **form.filled()})
        assert answer.status_code == 200, answer.text

    async def visit(self, link: str) -> None:
        """Open a page the server hosts itself (not elicitkit's): what it does when visited is its own business."""
        page = await self.browser.get(link)
        assert page.status_code == 200, page.text

    async def _provider_approves(self, authorize: str) -> None:
        query = parse_qs(urlsplit(authorize).query)
        back = query["redirect_uri"][0]
        state = query["state"][0]
        done = await self.browser.get(f"{back}?{urlencode({'code': 'doc-test-code', 'state': state})}")
        assert done.status_code == 200, done.text

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.browser.aclose()


class _Form(HTMLParser):
    """The controls of one of elicitkit's form pages, and a valid way to fill them in."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.controls: list[tuple[str, dict[str, str]]] = []
        self._select: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "select":
            self._select = found.get("name")
        elif tag == "option" and self._select is not None:
            found["name"] = self._select
        if tag in ("input", "option"):
            self.controls.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None

    @property
    def csrf(self) -> str:
        return next(a["value"] for t, a in self.controls if a.get("name") == "ek:csrf")

    def filled(self) -> dict[str, str]:
        chosen: dict[str, str] = {}
        for tag, a in self.controls:
            name, kind = a.get("name", ""), a.get("type", "text")
            if not name or name.startswith("ek:") or kind == "hidden" or name in chosen:
                continue
            if tag == "option":
                if a.get("value"):
                    chosen[name] = a["value"]
            elif kind == "checkbox":
                chosen[name] = a.get("value", "true")
            elif kind == "number":
                chosen[name] = a.get("min") or "1"
            else:
                limit = a.get("maxlength")
                chosen[name] = _TYPED.get(kind) or _text(int(a.get("minlength") or 0), int(limit) if limit else None)
        return chosen


# What a person types into the inputs elicitkit renders for a string's `format`.
_TYPED = {
    "email": FORMATTED["email"],
    "url": FORMATTED["uri"],
    "date": FORMATTED["date"],
    "datetime-local": "2026-11-27T09:00",
}
