"""`elicitkit call` in a real terminal (tmux), as a person uses it: both eras, over stdio and HTTP."""
# ruff: noqa: RUF001 - the arrow the widgets draw at the current option is what a person sees

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
from tests.terminal import ELICITKIT, STARTUP, Terminal, serving_command

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

TOUR = serving_command(EXAMPLES / "terminal_tour.py")
FORMS = serving_command(Path(__file__).parent / "term" / "form_server.py")
BARE = serving_command(Path(__file__).with_name("bare_server.py"))
ACTION = "Answer it, decline or cancel?"
SPINNER = set("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")


@pytest.fixture(autouse=True)
def server_logs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stdio server's log that is kept (shown after a failure) lands in the test's own folder."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))


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


def field_line(lines: list[str]) -> str:
    """The line the person types on: the one with the prompt's arrow and no list under it."""
    return next(line for line in reversed(lines) if line.startswith("❯ "))


async def test_a_form_is_walked_with_arrow_keys_and_checkboxes_and_reviewed_before_it_is_sent(
    way: str, protocol: str, terminals: list[Terminal]
) -> None:
    async with tour(way) as server:
        term = run(terminals, server, "profile", "--protocol", protocol)
        await term.wait_for(ACTION, within=STARTUP)
        term.press("Enter")  # "Answer it" is pre-selected
        await term.wait_for("? Name *")
        term.type("A")
        lines = await term.wait_until(lambda lines: "  ✗ must be at least 2 characters" in lines)
        # The reason sits right under the field, before Enter, not in a toolbar at the bottom of the screen.
        assert lines[lines.index("  ✗ must be at least 2 characters") - 1] == "❯ A"
        term.type("da")
        term.press("Enter")
        await term.wait_for("? Age  a whole number ≥ 18 ≤ 99")
        assert field_line(term.visible) == "❯ 30"  # the default, pre-filled
        term.press("Up")  # no history: an earlier answer is not recalled into this field
        term.press("BSpace", "BSpace")
        term.type("42")
        term.press("Enter")
        await term.wait_for("? Team *")
        lines = term.visible
        assert lines[-3:-1] == ["❯ Operations", "  Development"]
        term.press("Down", "Enter")
        lines = await term.wait_until(lambda lines: any("? Checks" in line for line in lines))
        assert "at least 1 · Space checks · Enter sends" in " ".join(lines)
        assert "❯ ◉ lint  (default)" in lines  # the default, checked and marked
        term.press("Down", "Down", "Space", "Enter")
        lines = await term.wait_until(lambda lines: "? Review your answer" in " ".join(lines))
        shown = "\n".join(lines)
        for said in ("✔ Name: Ada", "✔ Age: 42", "✔ Team: Development", "✔ Checks: lint, e2e"):
            assert said in shown
        assert "  Team    Development" in lines
        term.press("Down", "Down", "Down", "Enter")  # change the team from the review
        await term.wait_until(lambda lines: lines[-3:-1] == ["  Operations", "❯ Development"])
        term.press("Up", "Enter")
        await term.wait_until(lambda lines: "  Team    Operations" in lines)
        term.press("Enter")  # "Send it"
        screen = await term.wait_for("EXIT=")
    assert "profile: Ada, 42, ops, lint+e2e" in screen
    assert "EXIT=0" in screen
    assert f"MCP {protocol}" in screen


async def test_a_long_list_filters_as_the_person_types_and_a_multi_select_keeps_to_its_limits(
    protocol: str, terminals: list[Terminal]
) -> None:
    term = run(terminals, FORMS, "release", "--protocol", protocol)
    await term.wait_for(ACTION, within=STARTUP)
    term.press("Enter")
    await term.wait_for("type to filter")
    assert "  ↓ 2 more" in term.visible  # twelve regions, ten at a time
    term.type("eu")
    lines = await term.wait_until(lambda lines: any(line.startswith("  filter: eu") for line in lines))
    assert [line for line in lines if line.endswith(("West", "North", "South", "East"))] == [
        "❯ Eu West",
        "  Eu North",
        "  Eu South",
    ]
    term.press("Down", "Enter")
    await term.wait_for("choose 1-2 · Space checks")
    term.press("Down", "Space", "Down", "Space")  # lint (the default) and unit checked: e2e is one too many
    lines = await term.wait_until(lambda lines: "  ✗ at most 2 may be checked: uncheck one first" in lines)
    assert "❯ ○ e2e" in lines
    term.press("Up", "Up", "Space", "Up", "Space")  # uncheck lint, wrap to perf and check it
    term.press("Enter")
    lines = await term.wait_until(lambda lines: any("? Notify" in line for line in lines))
    assert "Y/n" in " ".join(lines)
    assert "❯ Yes  (default)" in lines
    term.press("Enter")
    await term.wait_for("? Review your answer")
    term.press("Escape")  # back to the last field
    await term.wait_until(lambda lines: any("? Notify" in line for line in lines))
    term.type("n")
    await term.wait_for("? Review your answer")
    term.press("Enter")
    screen = await term.wait_for("EXIT=")
    assert "release: eu-north, unit+perf, quiet" in screen
    assert "✔ Checks: unit, perf" in screen


async def test_a_multi_select_refuses_fewer_than_its_minimum(terminals: list[Terminal]) -> None:
    term = run(terminals, FORMS, "release")
    await term.wait_for(ACTION, within=STARTUP)
    term.press("Enter")
    await term.wait_for("type to filter")
    term.press("Enter")
    await term.wait_for("choose 1-2")
    term.press("Space", "Enter")  # lint unchecked: nothing checked
    await term.wait_until(lambda lines: "  ✗ check at least 1 (Space checks)" in lines)
    term.press("C-c")
    assert "release: cancel" in await term.wait_for("EXIT=")


async def test_esc_goes_back_a_field_and_then_to_the_choice_before_the_form(
    protocol: str, terminals: list[Terminal]
) -> None:
    term = run(terminals, TOUR, "profile", "--protocol", protocol)
    await term.wait_for(ACTION, within=STARTUP)
    term.press("Enter")
    await term.wait_for("? Name *")
    term.type("Ada")
    term.press("Enter")
    await term.wait_for("? Age")
    term.press("Escape")
    await term.wait_until(lambda lines: any("? Name *" in line for line in lines) and field_line(lines) == "❯ Ada")
    term.press("Escape")
    await term.wait_until(lambda lines: any(f"? {ACTION}" in line for line in lines))
    term.type("d")  # a single key picks: nothing to erase first
    screen = await term.wait_for("EXIT=")
    assert "profile: decline" in screen


async def test_the_status_line_shows_progress_and_never_writes_into_the_field(
    protocol: str, terminals: list[Terminal]
) -> None:
    term = run(terminals, FORMS, "name", "--protocol", protocol)
    await term.wait_for(ACTION, within=STARTUP)
    term.press("Enter")
    await term.wait_for("? Your answer *")  # a helper's lone field is not labelled "value"
    term.type("Grace")
    # 2025-11-25 sends a keepalive every 0.2 s while the form is open; both eras show the tool's own progress.
    said = "Waiting for a person to answer" if protocol == "2025-11-25" else "[██████████··········] 1/2 warming up"
    first = await term.wait_until(lambda lines: said in lines[-1])
    elapsed = first[-1].rsplit(" · ", 1)[-1]
    # The line keeps moving (the clock, and keepalives on 2025-11-25) while the person types.
    lines = await term.wait_until(lambda lines: said in lines[-1] and not lines[-1].endswith(f" · {elapsed}"))
    assert lines[-1][0] in SPINNER
    assert field_line(lines) == "❯ Grace"
    assert sum(said in line for line in lines) == 1  # only on the status line
    term.press("Enter")
    screen = await term.wait_for("EXIT=")
    assert "name: Grace" in screen
    assert "Waiting for a person to answer" not in screen  # the live line goes with the question


async def test_the_deadline_counts_down_and_the_question_closes_when_it_passes(
    protocol: str, terminals: list[Terminal]
) -> None:
    term = run(terminals, FORMS, "hurry", "--arg", "seconds=4", "--protocol", protocol)
    await term.wait_for(ACTION, within=STARTUP)
    first = await term.wait_until(lambda lines: "answer within" in lines[-1])
    later = await term.wait_until(lambda lines: "answer within" in lines[-1] and lines[-1] != first[-1])
    left = [int(re.search(r"answer within (\d+)s", lines[-1])[1]) for lines in (first, later)]  # type: ignore[index]
    assert 0 < left[1] <= left[0] <= 4
    screen = await term.wait_for("EXIT=")
    # Closed on the deadline: by the client (the deadline in the request's _meta) or by the server's cancellation.
    assert "deadline for this answer passed" in screen or "The server stopped waiting for this answer" in screen
    assert "hurry: nobody answered in time" in screen or "hurry: cancel" in screen


async def test_in_plain_mode_the_deadline_is_said_and_closes_the_question_too(terminals: list[Terminal]) -> None:
    term = run(terminals, FORMS, "hurry", "--arg", "seconds=4", "--plain")
    await term.wait_for("(The server waits 4s for the answer.)", within=STARTUP)
    screen = await term.wait_for("EXIT=")
    assert "The server's deadline for this answer passed: the question is closed." in screen
    assert "hurry: nobody answered in time" in screen or "hurry: cancel" in screen


@pytest.mark.parametrize(
    ("how", "protocol"), [("--plain", "2025-11-25"), ("--plain", "2026-07-28"), ("TERM=dumb", "2026-07-28")]
)
async def test_plain_mode_numbers_the_options_says_back_each_pick_and_redraws_nothing(
    protocol: str, how: str, terminals: list[Terminal]
) -> None:
    args, env = (["--plain"], None) if how == "--plain" else ([], {"TERM": "dumb"})
    term = run(terminals, TOUR, "profile", "--protocol", protocol, *args, env=env)
    await term.wait_for(f"{ACTION} Answer it (a), Decline (d), Cancel (c) [a]", within=STARTUP)
    term.answer("")
    await term.wait_for("Name * (text, at least 2 characters")
    term.answer("A")
    await term.wait_for("✗ must be at least 2 characters")
    term.answer("Ada")
    await term.wait_for("[Enter keeps: 30]")
    term.answer("")
    await term.wait_for("2) Development")
    term.answer("2")
    await term.wait_for("→ Development")
    await term.wait_for("3) e2e")
    term.answer("1 3")  # two picks
    await term.wait_for("→ lint, e2e")
    await term.wait_for("Review your answer")
    term.answer("2")
    await term.wait_for("[Enter keeps: 30]")
    term.answer("41")
    await term.wait_for("  2) Age: 41")
    term.answer("")
    screen = await term.wait_for("EXIT=")
    assert "profile: Ada, 41, dev, lint+e2e" in screen
    assert not SPINNER & set(screen)


async def test_a_link_is_shown_with_its_host_and_opened_only_with_consent(
    protocol: str, terminals: list[Terminal], tmp_path: Path
) -> None:
    opened = tmp_path / "browser.log"
    env = {"ELICITKIT_BROWSER_LOG": str(opened)}
    async with tour("stdio") as server:  # over HTTP: the secret on elicitkit's page, below
        refused = run(terminals, server, "docs", "--protocol", protocol, env=env)
        screen = await refused.wait_for("? Open it in your browser?", within=STARTUP)
        assert "https://docs.example.com/releases/2.1" in screen
        assert "Host: docs.example.com" in screen
        assert "❯ No" in refused.visible  # not opening is the default
        refused.press("Enter")
        assert "docs: decline" in await refused.wait_for("EXIT=")
        assert not opened.exists()

        agreed = run(terminals, server, "docs", "--protocol", protocol, env=env)
        await agreed.wait_for("? Open it in your browser?", within=STARTUP)
        agreed.type("y")
        assert "docs: accept" in await agreed.wait_for("EXIT=")
    assert opened.read_text().splitlines() == ["https://docs.example.com/releases/2.1"]


async def test_without_a_browser_the_person_is_told_to_open_the_link_themselves(
    protocol: str, terminals: list[Terminal], tmp_path: Path
) -> None:
    # BROWSER names the only browser to try; one that fails is what a server without a desktop has.
    term = run(terminals, TOUR, "docs", "--protocol", protocol, env={"BROWSER": "false", "DISPLAY": ""})
    await term.wait_for("? Open it in your browser?", within=STARTUP)
    term.type("y")
    screen = await term.wait_for("EXIT=")
    assert "No browser could be started here: open the link above yourself." in screen
    assert "Opened." not in screen


async def test_decline_and_ctrl_c_end_the_question_not_the_program(protocol: str, terminals: list[Terminal]) -> None:
    declined = run(terminals, TOUR, "ship", "--arg", "version=2.1", "--protocol", protocol)
    await declined.wait_for(ACTION, within=STARTUP)
    declined.type("d")
    assert "ship 2.1: decline" in await declined.wait_for("EXIT=")

    cancelled = run(terminals, TOUR, "ship", "--arg", "version=2.1", "--protocol", protocol)
    await cancelled.wait_for(ACTION, within=STARTUP)
    cancelled.press("Enter")
    await cancelled.wait_for("? Your answer")
    cancelled.press("C-c")  # in the middle of the form
    screen = await cancelled.wait_for("EXIT=")
    assert "Cancelled." in screen
    assert "ship 2.1: cancel" in screen
    assert "EXIT=0" in screen


@pytest.mark.parametrize(
    ("tool", "protocol", "says"), [("greet", "2025-11-25", "Hello, Grace"), ("welcome", "2026-07-28", "Welcome, Grace")]
)
async def test_a_server_written_with_the_bare_sdk_is_called_the_same_way(
    terminals: list[Terminal], tool: str, protocol: str, says: str
) -> None:
    term = run(terminals, BARE, tool, "--protocol", protocol)
    await term.wait_for(ACTION, within=STARTUP)
    term.press("Enter")
    await term.wait_for("? Name *  text, at least 1 character")
    term.type("Grace")
    term.press("Enter")
    screen = await term.wait_for("EXIT=")
    assert says in screen


async def test_with_json_the_person_is_still_asked_and_stdout_carries_only_the_result(
    terminals: list[Terminal], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    term = run(terminals, TOUR, "ship", "--arg", "version=4.0", "--json", stdout=out)
    await term.wait_for(ACTION, within=STARTUP)  # the prompts are on the terminal (standard error)
    term.press("Enter")
    await term.wait_for("? Your answer")
    term.type("n")
    assert "EXIT=0" in await term.wait_for("EXIT=")
    assert json.loads(out.read_text())["content"][0]["text"] == "ship 4.0: no"


async def test_a_secret_asked_on_elicitkits_page_is_waited_for_until_the_page_is_done(
    protocol: str, terminals: list[Terminal], tmp_path: Path
) -> None:
    opened = tmp_path / "browser.log"
    async with tour("http") as server:
        term = run(terminals, server, "login", "--protocol", protocol, env={"ELICITKIT_BROWSER_LOG": str(opened)})
        await term.wait_for("? Open it in your browser?", within=STARTUP)
        term.type("y")
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
    assert "Traceback" not in done.stdout + done.stderr
