"""The person at the terminal, as an elicitation callback: forms field by field, links with consent.

Every question first asks what to do with it (answer, decline, cancel), so
declining never requires filling in a form. Fields are validated as the
person types; defaults are pre-filled; Ctrl-C cancels the question, not the
program. A link is shown in full, with its host, and opened only after the
person agrees. Without a terminal, questions are answered from `--answers`
or refused with a clear error.
"""

from __future__ import annotations

import json
import os
import webbrowser
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO, cast
from urllib.parse import urlsplit

from mcp_types import (
    INVALID_REQUEST,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
)
from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from prompt_toolkit.output import create_output
from prompt_toolkit.validation import ValidationError, Validator
from rich.console import Console
from rich.panel import Panel

from elicitkit._schema.choices import options_of
from elicitkit._term.fields import hint, initial_text, parse_field
from elicitkit._term.text import safe

__all__ = ["BROWSER_LOG", "TerminalPerson", "link_refusal"]

BROWSER_LOG = "ELICITKIT_BROWSER_LOG"
"""When set, links the person agrees to open are appended to this file instead of opening a browser (tests)."""

_ACTIONS = {"a": "accept", "answer": "accept", "d": "decline", "decline": "decline", "c": "cancel", "cancel": "cancel"}


class _FieldValidator(Validator):
    def __init__(self, prop: Mapping[str, Any], required: bool) -> None:
        self.prop = prop
        self.required = required

    def validate(self, document: Document) -> None:
        try:
            parse_field(self.prop, document.text, self.required)
        except ValueError as exc:
            raise ValidationError(message=str(exc), cursor_position=len(document.text)) from None


class _ChoiceValidator(Validator):
    def __init__(self, allowed: Mapping[str, str]) -> None:
        self.allowed = allowed

    def validate(self, document: Document) -> None:
        if document.text.strip().lower() not in self.allowed:
            raise ValidationError(message=f"type one of: {', '.join(sorted(self.allowed))}")


class TerminalPerson:
    """An `elicitation_callback` for `mcp.Client` that asks the person at this terminal."""

    def __init__(self, console: Console, *, answers: Sequence[ElicitResult] | None = None) -> None:
        self.console = console
        self.answers = list(answers) if answers is not None else None
        # Prompts go where the console writes (standard error under --json, so stdout carries only the result).
        self.interactive = os.isatty(0) and console.file.isatty()
        self._session: PromptSession[str] | None = None

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self._show(params)
        if self.answers is not None:
            return self._scripted(params)
        if not self.interactive:
            self.console.print("[red]No one to ask: this is not a terminal (pass --answers FILE).[/red]")
            return ErrorData(code=INVALID_REQUEST, message="No person to ask: the client has no terminal")
        try:
            if isinstance(params, ElicitRequestURLParams):
                return await self._link(params)
            return await self._form(params)
        except (KeyboardInterrupt, EOFError):
            self.console.print("[yellow]Cancelled.[/yellow]")
            return ElicitResult(action="cancel")

    # -- showing -----------------------------------------------------------------------------------

    def _show(self, params: ElicitRequestParams) -> None:
        title = "A link to open" if isinstance(params, ElicitRequestURLParams) else "A question"
        self.console.print(Panel(safe(params.message), title=title, title_align="left", border_style="cyan"))

    # -- asking ------------------------------------------------------------------------------------

    async def _prompt(self, message: str, **options: Any) -> str:
        if self._session is None:
            self._session = PromptSession(output=create_output(stdout=cast(TextIO, self.console.file)))
        return await self._session.prompt_async(message, **options)

    async def _action(self) -> str:
        text = await self._prompt(
            "Answer it (a), decline (d) or cancel (c)? ",
            default="a",
            validator=_ChoiceValidator(_ACTIONS),
            validate_while_typing=False,
        )
        return _ACTIONS[text.strip().lower()]

    async def _form(self, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        action = await self._action()
        if action != "accept":
            return ElicitResult(action=action)  # type: ignore[arg-type]
        schema = params.requested_schema
        required = set(schema.get("required", []))
        content: dict[str, Any] = {}
        for name, prop in schema.get("properties", {}).items():
            given, value = await self._field(name, prop, name in required)
            if given:
                content[name] = value
        return ElicitResult(action="accept", content=content)

    async def _field(self, name: str, prop: Mapping[str, Any], required: bool) -> tuple[bool, Any]:
        label = prop.get("title") or name
        marker = " [red]*[/red]" if required else ""
        self.console.print(f"[bold]{safe(label)}[/bold]{marker} [dim]({safe(hint(prop))})[/dim]")
        if prop.get("description"):
            self.console.print(f"  [dim]{safe(prop['description'])}[/dim]")
        options = options_of(prop.get("items", {}) if prop.get("type") == "array" else prop)
        for number, (_, title) in enumerate(options or [], start=1):
            self.console.print(f"  {number}) {safe(title)}")
        text = await self._prompt(
            "> ", default=initial_text(prop), validator=_FieldValidator(prop, required), validate_while_typing=True
        )
        return parse_field(prop, text, required)

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
        text = await self._prompt(
            "Open it in your browser? (y/N) ",
            validator=_ChoiceValidator({"y": "y", "yes": "y", "n": "n", "no": "n", "": "n"}),
            validate_while_typing=False,
        )
        if text.strip().lower() not in ("y", "yes"):
            self.console.print("Not opened.")
            return ElicitResult(action="decline")
        _open(params.url)
        self.console.print("Opened. Waiting for the server to hear back from the page…")
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


def _open(url: str) -> None:
    log = os.environ.get(BROWSER_LOG)
    if log:
        with Path(log).open("a", encoding="utf-8") as recorded:
            recorded.write(url + "\n")
        return
    webbrowser.open(url)
