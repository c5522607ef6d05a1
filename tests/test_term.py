"""`elicitkit call` in a real terminal (tmux), as a person uses it: both eras, over stdio and HTTP."""

from __future__ import annotations

import html
import json
import re
import secrets
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from tests.examples import EXAMPLES, load_example
from tests.scenes import serving
from tests.terminal import ELICITKIT, PYTHON, Terminal

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

TOUR = f"{PYTHON} {EXAMPLES / 'terminal_tour.py'}"
BARE = f"{PYTHON} {Path(__file__).with_name('bare_server.py')}"


@pytest.fixture(params=["2025-11-25", "2026-07-28"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["stdio", "http"])
def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def tour(way: str) -> AsyncIterator[str]:
    """The terminal-tour example as SERVER: its command line (stdio), or its URL served here over HTTP."""
    if way == "stdio":
        yield TOUR
        return
    example = load_example("terminal_tour", f"terminal_tour_{secrets.token_hex(4)}")
    async with serving(example.hitl) as url:  # elicitkit's own pages (for `login`) are served there too
        yield url


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def run(
    terminals: list[Terminal], *args: str, env: dict[str, str] | None = None, stdout: Path | None = None
) -> Terminal:
    terminal = Terminal(f"ek-{secrets.token_hex(6)}", [ELICITKIT, "call", *args], env, stdout)
    terminals.append(terminal)
    return terminal


async def test_a_form_with_every_kind_of_field_is_filled_in_and_checked_as_the_person_types(
    way: str, protocol: str, terminals: list[Terminal]
) -> None:
    async with tour(way) as server:
        term = run(terminals, server, "profile", "--protocol", protocol)
        await term.wait_for("Answer it (a), decline (d) or cancel (c)?")
        term.press("Enter")
        await term.wait_for("name *")
        term.type("A")
        await term.wait_for("must be at least 2 characters")  # shown while typing, before Enter
        term.type("da")
        term.press("Enter")
        await term.wait_for("age (a whole number ≥ 18 ≤ 99)")
        assert "> 30" in term.screen  # the default, pre-filled
        term.answer("42")
        await term.wait_for("2) Development")
        term.answer("2")
        await term.wait_for("3) e2e")
        term.answer("1,3")
        screen = await term.wait_for("EXIT=")
    assert "profile: Ada, 42, dev, lint+e2e" in screen
    assert "EXIT=0" in screen
    assert f"MCP {protocol}" in screen


async def test_a_link_is_shown_with_its_host_and_opened_only_with_consent(
    way: str, protocol: str, terminals: list[Terminal], tmp_path: Path
) -> None:
    opened = tmp_path / "browser.log"
    env = {"ELICITKIT_BROWSER_LOG": str(opened)}
    async with tour(way) as server:
        refused = run(terminals, server, "docs", "--protocol", protocol, env=env)
        screen = await refused.wait_for("Open it in your browser? (y/N)")
        assert "https://docs.example.com/releases/2.1" in screen
        assert "Host: docs.example.com" in screen
        refused.answer("n")
        assert "docs: decline" in await refused.wait_for("EXIT=")
        assert not opened.exists()

        agreed = run(terminals, server, "docs", "--protocol", protocol, env=env)
        await agreed.wait_for("Open it in your browser? (y/N)")
        agreed.answer("y")
        assert "docs: accept" in await agreed.wait_for("EXIT=")
    assert opened.read_text().splitlines() == ["https://docs.example.com/releases/2.1"]


async def test_decline_and_ctrl_c_end_the_question_not_the_program(
    way: str, protocol: str, terminals: list[Terminal]
) -> None:
    async with tour(way) as server:
        declined = run(terminals, server, "ship", "--arg", "version=2.1", "--protocol", protocol)
        await declined.wait_for("Answer it (a)")
        declined.answer("d")
        assert "ship 2.1: decline" in await declined.wait_for("EXIT=")

        cancelled = run(terminals, server, "ship", "--arg", "version=2.1", "--protocol", protocol)
        await cancelled.wait_for("Answer it (a)")
        cancelled.press("Enter")
        await cancelled.wait_for("value")
        cancelled.press("C-c")  # in the middle of the form
        screen = await cancelled.wait_for("EXIT=")
    assert "Cancelled." in screen
    assert "ship 2.1: cancel" in screen
    assert "EXIT=0" in screen


async def test_progress_shows_as_a_bar_while_the_tool_works(way: str, protocol: str, terminals: list[Terminal]) -> None:
    async with tour(way) as server:
        term = run(terminals, server, "build", "--protocol", protocol)
        await term.wait_for("Answer it (a)")
        term.answer("a")
        await term.wait_for("value")
        term.answer("y")
        screen = await term.wait_for("EXIT=")
    assert f"[{'█' * 13}{'·' * 7}] 2/3 testing" in screen
    assert f"[{'█' * 20}] 3/3 packaging" in screen
    assert "build: published" in screen


@pytest.mark.parametrize(
    ("tool", "protocol", "says"), [("greet", "2025-11-25", "Hello, Grace"), ("welcome", "2026-07-28", "Welcome, Grace")]
)
async def test_a_server_written_with_the_bare_sdk_is_called_the_same_way(
    terminals: list[Terminal], tool: str, protocol: str, says: str
) -> None:
    term = run(terminals, BARE, tool, "--protocol", protocol)
    await term.wait_for("Answer it (a)")
    term.press("Enter")
    await term.wait_for("Name * (text, at least 1 character)")
    term.answer("Grace")
    screen = await term.wait_for("EXIT=")
    assert says in screen


def test_tools_lists_every_tool_with_its_input() -> None:
    done = subprocess.run([ELICITKIT, "tools", TOUR, "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert {"profile", "docs", "ship"} <= set(tools)
    assert tools["ship"]["inputSchema"]["properties"]["version"]["type"] == "string"


def test_scripts_answer_from_a_file_and_read_the_raw_result(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"action": "accept", "content": {"value": False}}]))
    command = [ELICITKIT, "call", TOUR, "ship", "--arg", "version=3.0", "--answers", str(answers), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"][0]["text"] == "ship 3.0: no"


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_without_a_terminal_a_question_fails_clearly_instead_of_hanging(protocol: str) -> None:
    command = [ELICITKIT, "call", TOUR, "ship", "--arg", "version=3.0", "--protocol", protocol]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    # 2025-11-25: the server hears the client's error and the tool fails (1); 2026-07-28 has no way to send
    # an error as an answer, so the call itself fails (3). Either way the script learns nobody could answer.
    assert done.returncode == (1 if protocol == "2025-11-25" else 3)
    assert "No one to ask: this is not a terminal (pass --answers FILE)." in done.stdout


@pytest.mark.parametrize(
    ("args", "says", "status"),
    [
        (["nosuch"], "the server has no tool 'nosuch' (it has: build, docs, login, profile, ship)", 2),
        (["ship", "--arg", "oops"], "--arg takes key=value, not 'oops'", 2),
        (["ship", "--args", "[1]"], "--args takes a JSON object", 2),
    ],
)
def test_a_bad_command_line_is_refused_in_one_clear_line(args: list[str], says: str, status: int) -> None:
    done = subprocess.run([ELICITKIT, "call", TOUR, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == status
    assert says in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_server_that_fails_to_start_shows_the_end_of_its_own_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('config file missing: /etc/tour.toml')\n")
    done = subprocess.run([ELICITKIT, "call", f"{PYTHON} {broken}", "x"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert "config file missing: /etc/tour.toml" in done.stdout


async def test_with_json_the_person_is_still_asked_and_stdout_carries_only_the_result(
    terminals: list[Terminal], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    term = run(terminals, TOUR, "ship", "--arg", "version=4.0", "--json", stdout=out)
    await term.wait_for("Answer it (a)")  # the prompts are on the terminal (standard error)
    term.press("Enter")
    await term.wait_for("value")
    term.answer("n")
    assert "EXIT=0" in await term.wait_for("EXIT=")
    assert json.loads(out.read_text())["content"][0]["text"] == "ship 4.0: no"


async def test_a_secret_asked_on_elicitkits_page_is_waited_for_until_the_page_is_done(
    protocol: str, terminals: list[Terminal], tmp_path: Path
) -> None:
    opened = tmp_path / "browser.log"
    async with tour("http") as server:
        term = run(terminals, server, "login", "--protocol", protocol, env={"ELICITKIT_BROWSER_LOG": str(opened)})
        await term.wait_for("Open it in your browser? (y/N)")
        term.answer("y")
        await term.wait_for("Waiting for the server to hear back from the page")
        [link] = opened.read_text().splitlines()
        async with httpx.AsyncClient() as browser:  # the person, in the browser the link opened
            page = await browser.get(link)
            csrf = re.search(r'name="ek:csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            done = await browser.post(
                link, data={"ek:csrf": html.unescape(csrf[1]), "ek:action": "accept", "token": "s3cr3t-t0ken"}
            )
            assert done.status_code == 200, done.text
        screen = await term.wait_for("EXIT=")
    assert "login: token of 12 characters received" in screen
    assert "s3cr3t-t0ken" not in screen  # the secret never reached the client
    if protocol == "2025-11-25":
        assert "The server says the link's flow is complete." in screen
