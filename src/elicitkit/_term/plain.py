"""The plain asker: numbered options and one typed line per answer, nothing redrawn (`--plain`, `TERM=dumb`).

For screen readers and terminals that cannot move the cursor: every line is
printed once, in order. Enter keeps the value shown in brackets, `<` goes
back a field, a number picks an option and the pick is said back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio
from rich.console import Console

from elicitkit._term.fields import hint, parse_field
from elicitkit._term.form import BACK, OMIT, Expired, Field, Outcome, shown
from elicitkit._term.status import Status
from elicitkit._term.text import safe

__all__ = ["Plain"]


class Plain:
    """An `Asker` that prints and reads lines."""

    def __init__(self, console: Console, status: Status) -> None:
        self.console = console
        self.status = status
        self._typed = b""  # read from the terminal, not yet taken as a line

    async def _line(self, prompt: str) -> str:
        """One typed line; `Expired` when the question's deadline passes first.

        Standard input is read when it is readable, never from a blocked thread: a question that closes (its
        deadline, the server's cancellation) leaves no reader behind to swallow the next answer.
        """
        self.console.print(prompt, end="", soft_wrap=True)
        self.console.file.flush()
        left = self.status.remaining()
        with anyio.move_on_after(float("inf") if left is None else max(0.0, left)):
            while b"\n" not in self._typed:
                await anyio.wait_readable(sys.stdin.fileno())
                chunk = os.read(sys.stdin.fileno(), 4096)
                if not chunk:
                    raise EOFError
                self._typed += chunk
            line, _, self._typed = self._typed.partition(b"\n")
            return line.decode(errors="replace").rstrip("\r")
        self.console.print()
        raise Expired

    async def field(self, field: Field, current: Any) -> Any:
        value = field.default if current is OMIT else current
        marker = " [red]*[/red]" if field.required else ""
        self.console.print(f"[bold]{safe(field.label)}[/bold]{marker} [dim]({safe(hint(field.prop))})[/dim]")
        if field.prop.get("description"):
            self.console.print(f"  [dim]{safe(field.prop['description'])}[/dim]")
        chosen = value if isinstance(value, list) else [value]
        for number, (option, title) in enumerate(field.options, start=1):
            mark = " [dim](chosen)[/dim]" if value is not OMIT and option in chosen else ""
            self.console.print(f"  {number}) {safe(title)}{mark}")
        keeps = "" if value is OMIT else f" [dim]\\[Enter keeps: {safe(shown(field, value))}][/dim]"
        while True:
            text = await self._line(f"> {keeps} " if keeps else "> ")
            if text.strip() == "<":
                return BACK
            if not text.strip() and value is not OMIT:
                got: Any = value
            else:
                try:
                    given, got = parse_field(field.prop, text, field.required)
                except ValueError as exc:
                    self.console.print(f"  [red]✗ {safe(exc)}[/red]")
                    continue
                got = got if given else OMIT
            if field.options:
                self.console.print(f"  → {safe(shown(field, got))}")
            return got

    async def review(self, fields: Sequence[Field], values: Mapping[str, Any]) -> int | Literal["send"] | Outcome:
        self.console.print("[bold]Review your answer[/bold]")
        for number, field in enumerate(fields, start=1):
            self.console.print(f"  {number}) {safe(field.label)}: {safe(shown(field, values[field.name]))}")
        while True:
            text = (await self._line("Enter sends; a number changes that field; d declines, c cancels > ")).strip()
            if not text:
                return "send"
            if text == "<":
                return "back"
            if text.lower() in ("d", "decline", "c", "cancel"):
                return "decline" if text.lower().startswith("d") else "cancel"
            if text.isdigit() and 1 <= int(text) <= len(fields):
                return int(text) - 1
            self.console.print(f"  [red]✗ type 1-{len(fields)}, d, c, or press Enter to send[/red]")

    async def choose(self, question: str, options: Sequence[tuple[str, str]], keys: Mapping[str, str]) -> str:
        choices = ", ".join(f"{safe(dict(options)[v])} ({k})" for k, v in keys.items())
        while True:
            text = (await self._line(f"{safe(question)} {choices} \\[{next(iter(keys))}] ")).strip().lower()
            if not text:
                return options[0][0]
            if text in keys:
                return keys[text]
            by_title = {title.lower(): value for value, title in options}
            if text in by_title:
                return by_title[text]
            self.console.print(f"  [red]✗ type one of: {', '.join(keys)}[/red]")
