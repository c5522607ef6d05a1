"""The one live line under everything `elicitkit call` shows: a spinner, what the server last said, time elapsed,
and the open question's deadline.

`Status` holds what the line says and renders it as plain text (sans-IO: a
clock is passed in). `StatusLine` puts it on the terminal: redrawn in place
under what is printed while nothing is being asked, drawn by the open form
itself while a question is on screen (so it never writes into a field), and
printed as whole lines, held while a prompt waits, when the terminal cannot
redraw (`--plain`, a pipe).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.live import Live
from rich.text import Text

from elicitkit._term.text import safe

__all__ = ["Status", "StatusLine", "bar", "clock_of"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def bar(done: float, total: float | None) -> str:
    """`[█████████████·······] 2/3`, or `… 2` when the total is unknown."""
    if not (total and math.isfinite(total) and math.isfinite(done)):
        return f"… {done:g}"
    filled = max(0, min(20, round(20 * done / total)))
    return f"[{'█' * filled}{'·' * (20 - filled)}] {done:g}/{total:g}"


def clock_of(seconds: float) -> str:
    """`4s`, `2:05`, `1:02:05`: a duration as a person reads it."""
    whole = max(0, math.ceil(seconds))
    if whole < 60:
        return f"{whole}s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


class Status:
    """What the live line says. Every text in it comes from the server: it is kept as given and made safe by
    whoever draws it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.started = clock()
        self.doing = "Connecting"
        self.progress: str | None = None
        self.deadline: float | None = None
        """When the open question expires, on this status's clock (None: no question, or no deadline given)."""
        self.version = 0
        """Bumped on every change, so a printer knows when there is something new to print."""

    def now(self) -> float:
        return self._clock()

    def set(self, doing: str) -> None:
        self.doing = doing
        self.version += 1

    def progressed(self, done: float, total: float | None, message: str | None) -> None:
        counted = bool(total and math.isfinite(total))
        # Without a total the count says nothing a person needs (a keepalive's ticks): the message is enough.
        self.progress = " ".join(part for part in (bar(done, total) if counted or not message else "", message) if part)
        self.version += 1

    def ask_until(self, expires_at: float | None) -> None:
        """An open question's deadline in seconds since the epoch; None when it has none (or is answered)."""
        self.deadline = None if expires_at is None else self._clock() + (expires_at - time.time())
        self.version += 1

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - self._clock()

    def line(self, *, spinner: bool = True) -> str:
        """The line as plain text: `⠹ Waiting for the tool · [███·····] 1/3 compiling · 4s · answer within 4:32`."""
        now = self._clock()
        parts = [self.doing]
        if self.progress:
            parts.append(self.progress)
        parts.append(clock_of(now - self.started))
        left = self.remaining()
        if left is not None:
            parts.append(f"answer within {clock_of(left)}" if left > 0 else "the server's deadline has passed")
        text = " · ".join(parts)
        if not spinner:
            return text
        return f"{_SPINNER[int((now - self.started) * 10) % len(_SPINNER)]} {text}"


class StatusLine:
    """The status on the terminal: redrawn in place (`live`), or printed line by line when it changes."""

    def __init__(self, console: Console, status: Status, *, live: bool) -> None:
        self.console = console
        self.status = status
        self._live = (
            Live(
                get_renderable=lambda: Text(status.line(), style="cyan"),
                console=console,
                transient=True,
                refresh_per_second=10,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            if live
            else None
        )
        self._asking = 0
        self._held: list[str] = []
        self._printed = -1

    def __enter__(self) -> StatusLine:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
        self._flush()

    def changed(self) -> None:
        """The status changed: a live line redraws by itself; a printed one prints the progress, once per change."""
        if self._live is not None or self.status.progress is None or self._printed == self.status.version:
            return
        self._printed = self.status.version
        self.note(f"[cyan]{safe(self.status.progress)}[/cyan]")

    def note(self, markup: str) -> None:
        """Print a line above the status (rich markup, already made safe); while a question is asked, after it."""
        if self._asking:
            self._held.append(markup)
        else:
            self.console.print(markup, soft_wrap=True)

    @contextmanager
    def asking(self) -> Iterator[None]:
        """While a question is on screen: nothing is drawn or printed where the person types; held notes follow."""
        self._asking += 1
        live = self._live is not None and self._live.is_started
        if live:
            assert self._live is not None
            self._live.stop()
        try:
            yield
        finally:
            self._asking -= 1
            if live:
                assert self._live is not None
                self._live.start()
            self._flush()

    def _flush(self) -> None:
        if self._asking:
            return
        held, self._held = self._held, []
        for markup in held:
            self.console.print(markup, soft_wrap=True)
