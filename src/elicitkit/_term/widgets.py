"""The arrow-key asker: each question drawn in place with prompt-toolkit, then replaced by one line saying what
was picked.

A list is a `Picker` (arrows move, Enter picks, Space checks, typing
filters); text is a one-line editor checked as the person types, the reason
shown right under it. Every widget ends with the live status line (spinner,
progress, elapsed, the question's deadline), drawn by the widget itself so
nothing else writes into it. Esc goes back a field; Ctrl-C cancels the
question. When the question's deadline passes, the widget closes (`Expired`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TextIO, cast

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.defaults import load_key_bindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.output import create_output
from prompt_toolkit.styles import Style
from rich.console import Console

from elicitkit._term.fields import as_typed, hint, parse_field
from elicitkit._term.form import BACK, OMIT, Expired, Field, Outcome, shown
from elicitkit._term.picker import Picker
from elicitkit._term.status import Status
from elicitkit._term.text import safe

__all__ = ["Widgets"]

_STYLE = Style.from_dict(
    {
        "label": "bold",
        "required": "fg:ansired",
        "hint": "fg:ansibrightblack",
        "pointer": "fg:ansicyan bold",
        "current": "fg:ansicyan",
        "checked": "fg:ansigreen",
        "default": "fg:ansibrightblack italic",
        "error": "fg:ansired",
        "status": "fg:ansicyan",
    }
)
_POINTER = "\u276f "  # the arrow at the current option
_LEAVE_OUT = "\0leave-out"  # the extra option of an optional choice without a default: no value is sent


class Widgets:
    """An `Asker` drawing each field with prompt-toolkit on the console's terminal."""

    def __init__(self, console: Console, status: Status) -> None:
        self.console = console
        self.status = status

    # -- the form's fields ---------------------------------------------------------------------------

    async def field(self, field: Field, current: Any) -> Any:
        value = field.default if current is OMIT else current
        label: StyleAndTextTuples = [("class:label", field.label)]
        if field.required:
            label.append(("class:required", " *"))
        about = str(field.prop.get("description") or "")
        if field.kind == "text":
            got = await self._text(label, about, field, "" if value is OMIT else as_typed(value))
        elif field.kind == "checks":
            picker = Picker(
                field.options,
                multi=True,
                chosen=[] if value is OMIT else value,
                default=[] if field.default is OMIT else field.default,
                min_items=field.prop.get("minItems"),
                max_items=field.prop.get("maxItems"),
            )
            tips = f"{picker.limits()} · Space checks · Enter sends · Esc back"
            got = await self._pick(label, about, tips, picker)
        else:
            got = await self._one(label, about, field, value)
        if got is not BACK:
            self._echo(f"{field.label}:", shown(field, got))
        return got

    async def _one(self, label: StyleAndTextTuples, about: str, field: Field, value: Any) -> Any:
        if field.kind == "boolean":
            options, keys = [("yes", "Yes"), ("no", "No")], {"y": "yes", "n": "no"}
            chosen = [] if value is OMIT else ["yes" if value else "no"]
            default = [] if field.default is OMIT else ["yes" if field.default else "no"]
            tips = {"yes": "Y/n", "no": "y/N"}.get(default[0] if default else "", "y/n") + " · Enter picks · Esc back"
        else:
            options, keys = field.options, {}
            chosen = [] if value is OMIT else [value]
            default = [] if field.default is OMIT else [field.default]
            tips = "↑↓ move · Enter picks" + (" · type to filter" if len(options) > 5 else "") + " · Esc back"
        if not field.required and not default:
            options = [*options, (_LEAVE_OUT, "(leave it out)")]
        picker = Picker(options, chosen=chosen, default=default, keys=keys)
        got = await self._pick(label, about, tips, picker)
        if got is BACK or got == _LEAVE_OUT:
            return BACK if got is BACK else OMIT
        return got == "yes" if field.kind == "boolean" else got

    async def review(self, fields: Sequence[Field], values: Mapping[str, Any]) -> int | Literal["send"] | Outcome:
        width = max(len(f.label) for f in fields)
        options = [("send", "Send it")]
        options += [(str(i), f"{f.label.ljust(width)}  {shown(f, values[f.name])}") for i, f in enumerate(fields)]
        options += [("decline", "Decline"), ("cancel", "Cancel")]
        label: StyleAndTextTuples = [("class:label", "Review your answer")]
        tips = "Enter on a field changes it · Esc back"
        got = await self._pick(label, "", tips, Picker(options, chosen=["send"]))
        if got is BACK:
            return "back"
        if got == "send":
            self._echo("Sent.", "")
        if got in ("send", "decline", "cancel"):
            return cast(Literal["send", "decline", "cancel"], got)
        return int(got)

    # -- questions around the form -------------------------------------------------------------------

    async def choose(self, question: str, options: Sequence[tuple[str, str]], keys: Mapping[str, str]) -> str:
        """One of `options` (the first is the default); Esc is taken as the default too."""
        tips = " · ".join(f"{k} {dict(options)[v].lower()}" for k, v in keys.items()) + " · ↑↓ Enter"
        got = await self._pick([("class:label", question)], "", tips, Picker(options, keys=keys))
        value = options[0][0] if got is BACK else str(got)
        self._echo(question, dict(options)[value])
        return value

    # -- drawing -------------------------------------------------------------------------------------

    def _echo(self, label: str, value: str) -> None:
        self.console.print(f"[green]✔[/green] [bold]{safe(label)}[/bold] {safe(value)}", soft_wrap=True)

    def _frame(self, head: StyleAndTextTuples, about: str, tips: str) -> list[Window]:
        line = [("class:pointer", "? "), *head, ("class:hint", f"  {tips}")]
        top = [Window(FormattedTextControl(line), height=1, dont_extend_height=True)]
        if about:
            top.append(Window(FormattedTextControl([("class:hint", f"  {about}")]), dont_extend_height=True))
        return top

    def _status_window(self) -> Window:
        return Window(FormattedTextControl(lambda: [("class:status", self.status.line())]), height=1)

    async def _pick(self, head: StyleAndTextTuples, about: str, tips: str, picker: Picker) -> Any:
        def body() -> StyleAndTextTuples:
            shown_options = picker.visible()
            start, end = picker.window()
            lines: StyleAndTextTuples = []
            if picker.filter:
                lines += [("class:hint", "  filter: "), ("", picker.filter), ("class:hint", "  (Backspace widens)\n")]
            if start:
                lines.append(("class:hint", f"  ↑ {start} more\n"))
            for index in range(start, end):
                value, title = shown_options[index]
                here = index == picker.cursor
                lines.append(("class:pointer", _POINTER if here else "  "))
                if picker.multi:
                    checked = value in picker.checked
                    lines.append(("class:checked" if checked else "", "◉ " if checked else "○ "))
                lines.append(("class:current" if here else "", title))
                if value in picker.default:
                    lines.append(("class:default", "  (default)"))
                lines.append(("", "\n"))
            if end < len(shown_options):
                lines.append(("class:hint", f"  ↓ {len(shown_options) - end} more\n"))
            if picker.error:
                lines.append(("class:error", f"  ✗ {picker.error}\n"))
            return lines[:-1] if lines and lines[-1] == ("", "\n") else lines

        keys = KeyBindings()

        @keys.add("up")
        @keys.add("c-p")
        def _up(event: KeyPressEvent) -> None:
            picker.move(-1)

        @keys.add("down")
        @keys.add("c-n")
        @keys.add("tab")
        def _down(event: KeyPressEvent) -> None:
            picker.move(1)

        @keys.add("space")
        def _space(event: KeyPressEvent) -> None:
            if picker.multi:
                picker.toggle()
            else:
                self._typed(event, picker, " ")

        @keys.add("backspace")
        def _backspace(event: KeyPressEvent) -> None:
            picker.backspace()

        @keys.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            got = picker.picked()
            if got is not None:
                event.app.exit(result=got)

        @keys.add(Keys.Any)
        def _any(event: KeyPressEvent) -> None:
            if event.data.isprintable():
                self._typed(event, picker, event.data)

        top = self._frame(head, about, tips)
        return await self._run([*top, Window(FormattedTextControl(body), dont_extend_height=True)], keys, None)

    @staticmethod
    def _typed(event: KeyPressEvent, picker: Picker, char: str) -> None:
        picked = picker.type(char)
        if picked is not None:
            event.app.exit(result=picked)

    async def _text(self, head: StyleAndTextTuples, about: str, field: Field, start: str) -> Any:
        problem = [""]

        def check(text: str) -> tuple[bool, Any] | None:
            try:
                got = parse_field(field.prop, text, field.required)
            except ValueError as exc:
                problem[0] = str(exc)
                return None
            problem[0] = ""
            return got

        buffer = Buffer(document=Document(start, len(start)), multiline=False)

        def changed(_: Buffer) -> None:
            check(buffer.text)

        buffer.on_text_changed += changed
        keys = KeyBindings()

        @keys.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            got = check(buffer.text)
            if got is not None:
                given, value = got
                event.app.exit(result=value if given else OMIT)

        editor = VSplit(
            [
                Window(FormattedTextControl([("class:pointer", _POINTER)]), width=2),
                Window(BufferControl(buffer), height=1),
            ]
        )
        said = ConditionalContainer(
            Window(FormattedTextControl(lambda: [("class:error", f"  ✗ {problem[0]}")]), height=1),
            filter=Condition(lambda: bool(problem[0])),
        )
        tips = f"{hint(field.prop)} · Esc back"
        return await self._run([*self._frame(head, about, tips), editor, said], keys, buffer)

    async def _run(self, windows: list[Any], keys: KeyBindings, buffer: Buffer | None) -> Any:
        common = KeyBindings()

        @common.add("escape", eager=True)
        def _back(event: KeyPressEvent) -> None:
            event.app.exit(result=BACK)

        @common.add("c-c")
        def _cancel(event: KeyPressEvent) -> None:
            event.app.exit(exception=KeyboardInterrupt())

        bindings = (
            # A text field edits as everywhere (the default bindings); a list takes only its own keys.
            merge_key_bindings([load_key_bindings(), keys, common] if buffer else [keys, common])
        )
        app: Application[Any] = Application(
            layout=Layout(HSplit([*windows, self._status_window()])),
            key_bindings=bindings,
            style=_STYLE,
            output=create_output(stdout=cast(TextIO, self.console.file)),
            refresh_interval=0.2,
            erase_when_done=True,
        )
        left = self.status.remaining()
        if left is None:
            return await app.run_async()

        def expire() -> None:
            if app.is_running and not app.is_done:
                app.exit(exception=Expired())

        # prompt-toolkit runs on asyncio: its own timer, so Expired comes out of run_async as it is.
        timer = asyncio.get_running_loop().call_later(max(0.0, left), expire)
        try:
            return await app.run_async()
        finally:
            timer.cancel()
