"""The person at the terminal, as an elicitation callback: forms field by field, links with consent.

Every question first asks what to do with it (answer, decline, cancel), so
declining never requires filling in a form. Then each field in turn (arrow
keys, checkboxes, text checked as it is typed, or plain numbered prompts with
`--plain`), and for a form of several fields a review where any answer can be
changed. Ctrl-C cancels the question, not the program; a question whose
deadline passes is closed. A link is shown in full, with its host, and opened
only after the person agrees. Without a terminal, questions are answered from
`--answers` or refused with a clear error.
"""

from __future__ import annotations

import json
import math
import os
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from mcp_types import (
    INVALID_REQUEST,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
)
from rich.console import Console
from rich.panel import Panel

from elicitkit._core.kinds import EXPIRES_AT_META
from elicitkit._term.form import Expired, content_of, fields_of, fill
from elicitkit._term.plain import Plain
from elicitkit._term.status import StatusLine, clock_of
from elicitkit._term.text import safe
from elicitkit._term.widgets import Widgets

__all__ = ["BROWSER_LOG", "TerminalPerson", "link_refusal"]

BROWSER_LOG = "ELICITKIT_BROWSER_LOG"
"""When set, links the person agrees to open are appended to this file instead of opening a browser (tests)."""

_ACTIONS = [("accept", "Answer it"), ("decline", "Decline"), ("cancel", "Cancel")]
_ACTION_KEYS = {"a": "accept", "d": "decline", "c": "cancel"}


class TerminalPerson:
    """An `elicitation_callback` for `mcp.Client` that asks the person at this terminal."""

    def __init__(
        self,
        console: Console,
        line: StatusLine,
        *,
        answers: Sequence[ElicitResult] | None = None,
        plain: bool = False,
    ) -> None:
        self.console = console
        self.line = line
        self.answers = list(answers) if answers is not None else None
        # Prompts go where the console writes (standard error under --json, so stdout carries only the result).
        self.interactive = os.isatty(0) and console.file.isatty()
        plain = plain or os.environ.get("TERM") == "dumb"
        self.asker: Widgets | Plain = Plain(console, line.status) if plain else Widgets(console, line.status)

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        status = self.line.status
        with self.line.asking():
            self._show(params)
            if self.answers is not None:
                return self._scripted(params)
            if not self.interactive:
                self.console.print("[red]No one to ask: this is not a terminal (pass --answers FILE).[/red]")
                return ErrorData(code=INVALID_REQUEST, message="No person to ask: the client has no terminal")
            status.set("Waiting for your answer")
            status.ask_until(_expires_at(params))
            left = status.remaining()
            if isinstance(self.asker, Plain) and left is not None:  # no live line to count down on: said once
                self.console.print(f"(The server waits {clock_of(left)} for the answer.)")
            try:
                if isinstance(params, ElicitRequestURLParams):
                    return await self._link(params)
                return await self._form(params)
            except (KeyboardInterrupt, EOFError):
                self.console.print("[yellow]Cancelled.[/yellow]")
                return ElicitResult(action="cancel")
            except Expired:
                self.console.print(
                    "[yellow]The server's deadline for this answer passed: the question is closed.[/yellow]"
                )
                return ElicitResult(action="cancel")
            except anyio.get_cancelled_exc_class():
                self.console.print("[yellow]The server stopped waiting for this answer.[/yellow]")
                raise
            finally:
                status.ask_until(None)
                status.set("Waiting for the tool")

    # -- showing -----------------------------------------------------------------------------------

    def _show(self, params: ElicitRequestParams) -> None:
        title = "A link to open" if isinstance(params, ElicitRequestURLParams) else "A question"
        self.console.print(Panel(safe(params.message), title=title, title_align="left", border_style="cyan"))

    # -- asking ------------------------------------------------------------------------------------

    async def _form(self, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        fields = fields_of(params.requested_schema)
        while True:
            action = await self.asker.choose("Answer it, decline or cancel?", _ACTIONS, _ACTION_KEYS)
            if action != "accept":
                return ElicitResult(action=action)  # type: ignore[arg-type]
            got = await fill(self.asker, fields)
            if got == "back":
                continue  # Esc on the first field: the choice again
            if isinstance(got, str):
                return ElicitResult(action=got)
            return ElicitResult(action="accept", content=content_of(got))

    async def _link(self, params: ElicitRequestURLParams) -> ElicitResult:
        self.console.print(f"Link: {safe(params.url)}", soft_wrap=True)
        refusal = link_refusal(params.url)
        if refusal is not None:
            self.console.print(f"[red]This link is not opened: {refusal}.[/red]")
            return ElicitResult(action="decline")
        parts = urlsplit(params.url)
        self.console.print(f"Host: [bold]{safe(_ascii_host(parts.hostname or ''))}[/bold]")
        if parts.username is not None or parts.password is not None:
            self.console.print("[yellow]The link carries a user name before its host: check the host above.[/yellow]")
        agreed = await self.asker.choose(
            "Open it in your browser?", [("no", "No"), ("yes", "Yes")], {"n": "no", "y": "yes"}
        )
        if agreed != "yes":
            self.console.print("Not opened.")
            return ElicitResult(action="decline")
        if _open(params.url):
            self.console.print("Opened. Waiting for the server to hear back from the page…")
        else:
            self.console.print(
                "[yellow]No browser could be started here: open the link above yourself.[/yellow] "
                "Waiting for the server to hear back from the page…",
                soft_wrap=True,
            )
        return ElicitResult(action="accept")

    def _scripted(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        assert self.answers is not None
        if not self.answers:
            self.console.print("[red]--answers has no answer left for this question.[/red]")
            return ErrorData(code=INVALID_REQUEST, message="No scripted answer left for this question")
        reply = self.answers.pop(0)
        # Scripted: nobody is there to look at a page, so a link is answered but never opened.
        answered = json.dumps(reply.model_dump(mode="json", exclude_none=True))
        self.console.print(f"[dim]answered from --answers: {safe(answered)}[/dim]")
        return reply


def _expires_at(params: ElicitRequestParams) -> float | None:
    """When the server stops waiting (seconds since the epoch), if it says."""
    value = (params.meta or {}).get(EXPIRES_AT_META)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value / 1000


def link_refusal(url: str) -> str | None:
    """Why a link must not be opened (None when it may be): only plain http(s) links, shown as they will go."""
    if any(c.isspace() or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\\" for c in url):
        return "it contains spaces, control characters or backslashes, which browsers read differently"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "only http and https links to a host are opened"
    return None


def _ascii_host(host: str) -> str:
    """The host as the browser will resolve it: look-alike letters show as their xn-- form."""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _open(url: str) -> bool:
    """Open `url` in the person's browser; False when no browser could be started."""
    log = os.environ.get(BROWSER_LOG)
    if log:
        with Path(log).open("a", encoding="utf-8") as recorded:
            recorded.write(url + "\n")
        return True
    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
