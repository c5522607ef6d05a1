"""A real terminal for the CLI tests: a tmux session on a private socket, typed into and read like a person.

There is no event to wait on in a terminal, so `wait_for` re-reads the screen
(every 50 ms) until the text appears, bounded by `anyio.fail_after`, as a
browser driver waits for a selector. `STARTUP` bounds the first wait: starting
the client and its server is two Python processes importing the SDK, which a
loaded machine makes slow.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

ELICITKIT = str(Path(sys.executable).with_name("elicitkit"))
PYTHON = sys.executable
SRC = Path(__file__).resolve().parents[1] / "src"


def serving_command(script: Path) -> str:
    """SERVER for `elicitkit call`: a Python script run on this tree's elicitkit. The SDK starts a stdio server
    with a minimal environment, so the PYTHONPATH a test run may set would not reach it otherwise."""
    return shlex.join(["env", f"PYTHONPATH={SRC}", PYTHON, str(script)])


STARTUP = 60.0
MISSING = "tmux is missing: ./dev test installs it (apt-get install tmux)"


class Terminal:
    """One command running in a 120x50 tmux pane."""

    def __init__(
        self, socket: str, command: list[str], env: dict[str, str] | None = None, stdout: Path | None = None
    ) -> None:
        if shutil.which("tmux") is None:
            pytest.fail(MISSING, pytrace=False)
        self.socket = socket
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        # The pane outlives the command, so its last screen (and exit status) can still be read.
        redirect = f" > {shlex.quote(str(stdout))}" if stdout is not None else ""
        script = f"env {exports} {shlex.join(command)}{redirect}; echo EXIT=$?; read done"
        self._tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "50", script)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True)
        return done.stdout

    @property
    def screen(self) -> str:
        """Everything the pane shows, scrollback included."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", "t")

    @property
    def visible(self) -> list[str]:
        """The pane's lines as shown now (no scrollback), trailing blank lines dropped."""
        lines = self._tmux("capture-pane", "-p", "-t", "t").rstrip("\n").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    async def wait_for(self, text: str, within: float = 30) -> str:
        with anyio.fail_after(within):
            while text not in (screen := self.screen):  # noqa: ASYNC110 - a terminal has no event to wait on
                await anyio.sleep(0.05)
        return screen

    async def wait_until(self, check: Callable[[list[str]], bool], within: float = 30) -> list[str]:
        """The visible lines, once `check` holds for them."""
        with anyio.fail_after(within):
            while not check(lines := self.visible):  # noqa: ASYNC110 - a terminal has no event to wait on
                await anyio.sleep(0.05)
        return lines

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)

    def press(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def answer(self, text: str) -> None:
        """Replace whatever the prompt holds (a pre-filled default) with `text`, and press Enter."""
        self.press("C-u")
        self.type(text)
        self.press("Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
