"""The one live line: a spinner, what the server last said, time elapsed, the question's deadline."""

from __future__ import annotations

import io
import time

from rich.console import Console

from elicitkit._term.status import Status, StatusLine, bar, clock_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_says_what_is_happening_progress_elapsed_and_time_left() -> None:
    clock = Clock()
    status = Status(clock)
    status.set("Waiting for the tool")
    status.progressed(2, 3, "testing")
    clock.now += 4
    assert status.line(spinner=False) == "Waiting for the tool · [█████████████·······] 2/3 testing · 4s"
    status.ask_until(time.time() + 125)
    assert status.line(spinner=False).endswith(" · answer within 2:05")
    clock.now += 200
    assert status.line(spinner=False).endswith("the server's deadline has passed")
    assert status.line()[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def test_a_keepalive_without_a_total_shows_its_message_not_a_count() -> None:
    status = Status(Clock())
    status.progressed(7, None, "Waiting for a person to answer")
    assert status.progress == "Waiting for a person to answer"
    status.progressed(7, None, None)
    assert status.progress == "… 7"


def test_bars_and_clocks() -> None:
    assert bar(3, 3) == f"[{'█' * 20}] 3/3"
    assert bar(1, float("nan")) == "… 1"
    assert [clock_of(s) for s in (0, 4.2, 65, 3725)] == ["0s", "5s", "1:05", "1:02:05"]


def test_without_a_live_terminal_progress_prints_once_per_change_and_waits_while_a_question_is_asked() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=False)
    status = Status(Clock())
    line = StatusLine(console, status, live=False)
    with line:
        status.progressed(1, 2, "compiling")
        line.changed()
        line.changed()
        with line.asking():
            status.progressed(2, 2, "linking")
            line.changed()
            assert "linking" not in out.getvalue()  # nothing is printed where the person types
        line.note("after")
    printed = out.getvalue().splitlines()
    assert printed == [f"[{'█' * 10}{'·' * 10}] 1/2 compiling", f"[{'█' * 20}] 2/2 linking", "after"]
