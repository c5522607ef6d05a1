"""`elicitkit call` and `elicitkit tools` refuse what cannot work in one clear line: the exit status says whose
mistake it was (2: the command line, 3: the server), and nothing prints a traceback."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import anyio
import pytest

from elicitkit._fallback import DEFAULT_TOOL
from tests.examples import EXAMPLES, load_example
from tests.redis_server import free_port
from tests.scenes import serving
from tests.terminal import ELICITKIT, PYTHON, serving_command

pytestmark = pytest.mark.timeout(90)

TOUR = serving_command(EXAMPLES / "terminal_tour.py")
BARE = serving_command(Path(__file__).parents[1] / "bare_server.py")
FORMS = serving_command(Path(__file__).with_name("form_server.py"))


@pytest.fixture(autouse=True)
def server_logs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stdio server's log that is kept (shown after a failure) lands in the test's own folder."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def elicitkit(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [ELICITKIT, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False
    )
    assert "Traceback" not in done.stdout + done.stderr
    return done


async def elicitkit_async(*args: str) -> subprocess.CompletedProcess[str]:
    """The same, while this test's event loop serves HTTP."""
    done = await anyio.run_process([ELICITKIT, *args], check=False, stdin=subprocess.DEVNULL)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in out + err
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


@pytest.mark.parametrize(
    ("command", "server", "says"),
    [
        (
            "call",
            "127.0.0.1:8000/mcp",
            "'127.0.0.1:8000/mcp' is an address without its scheme: did you mean http://127.0.0.1:8000/mcp",
        ),
        ("tools", "no-such-server --flag", "there is no command 'no-such-server' to start the server"),
    ],
)
def test_an_address_that_cannot_be_one_is_refused_with_what_was_meant(command: str, server: str, says: str) -> None:
    # Every kind of address mistake is in tests/term/test_arguments.py; here, that both commands say it (exit 2).
    done = elicitkit(command, server, *(["ship"] if command == "call" else []))
    assert done.returncode == 2
    assert says in done.stdout


@pytest.mark.anyio
async def test_a_url_without_the_mcp_path_says_where_the_endpoint_usually_is() -> None:
    example = load_example("terminal_tour", f"terminal_tour_{secrets.token_hex(4)}")
    async with serving(example.hitl) as url:
        root = url.removesuffix("/mcp")  # what uvicorn prints
        done = await elicitkit_async("call", root, "ship")
    assert done.returncode == 3
    assert f"no MCP endpoint at {root} (404 Not Found): streamable-HTTP servers usually serve {url}" in done.stdout


def test_a_url_where_nothing_listens_says_so() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    done = elicitkit("call", url, "ship")
    assert done.returncode == 3
    assert f"nothing answers at {url.removesuffix('/mcp')} (connection refused): is the server running?" in done.stdout


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_a_server_that_exits_without_serving_is_said_to_and_asked_whether_it_runs(
    protocol: str, tmp_path: Path
) -> None:
    silent = tmp_path / "readme.py"  # the README's example without `server.run()`: exits 0 at once
    silent.write_text("from mcp.server.mcpserver import MCPServer\n\nserver = MCPServer('deploy-desk')\n")
    done = elicitkit("call", f"{PYTHON} {silent}", "deploy", "--protocol", protocol)
    assert done.returncode == 3
    assert "the server exited before it answered" in done.stdout
    assert "does it start serving (`server.run()`)?" in done.stdout


def test_a_server_that_fails_to_start_shows_the_end_of_its_own_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nprint('config file missing: /etc/tour.toml', file=sys.stderr)\nsys.exit(3)\n")
    done = elicitkit("call", f"{PYTHON} {broken}", "x")
    assert done.returncode == 3
    assert "the server exited before it answered" in done.stdout
    assert "config file missing: /etc/tour.toml" in done.stdout


def test_a_server_printing_on_its_stdout_is_told_apart_from_mcp_in_one_line(tmp_path: Path) -> None:
    chatty = tmp_path / "chatty.py"
    chatty.write_text(
        "print('starting up')\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "server = MCPServer('chatty')\n"
        "@server.tool()\n"
        "def hello() -> str:\n"
        "    return 'hello'\n"
        "server.run()\n"
    )
    done = elicitkit("call", f"{PYTHON} {chatty}", "hello")
    assert done.returncode == 0
    assert "The server wrote a line that is not MCP on its standard output" in done.stdout
    assert "starting up" in done.stdout
    assert "hello" in done.stdout
    assert "pydantic" not in done.stdout + done.stderr


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_why_a_tool_failed_is_shown_from_the_servers_own_output(protocol: str) -> None:
    done = elicitkit("call", TOUR, "login", "--protocol", protocol)  # over stdio: no address for its pages
    assert done.returncode == 1
    assert "Error executing tool login" in done.stdout
    assert "The server's own output" in done.stdout
    assert "elicitkit's pages" in done.stdout
    assert "need a public address" in done.stdout


def test_a_server_asking_the_2025_way_on_2026_hints_at_the_protocol_flag() -> None:
    done = elicitkit("call", BARE, "greet")  # the bare SDK's ctx.elicit; the client speaks 2026-07-28 by default
    assert done.returncode == 3
    assert "try again with --protocol 2025-11-25" in done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["ship"], "ship needs 'version': pass --arg version=…"),
        (["ship", "--arg", "version=1", "--arg", "verison=2"], "ship takes no argument 'verison' (it takes: version)"),
        (["nosuch"], "the server has no tool 'nosuch' (it has: build, docs, login, profile, ship)"),
        (["ship", "--arg", "oops"], "--arg takes key=value, not 'oops'"),
        (["ship", "--args", "[1]"], "--args takes a JSON object"),
    ],
)
def test_arguments_the_tool_would_refuse_are_refused_before_it_is_called(args: list[str], says: str) -> None:
    done = elicitkit("call", TOUR, *args)
    assert done.returncode == 2
    assert says in done.stdout
    assert "answered" not in done.stdout


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_tools_lists_what_a_client_that_shows_forms_can_call(protocol: str) -> None:
    done = elicitkit("tools", TOUR, "--json", "--protocol", protocol)
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert set(tools) == {"build", "docs", "login", "profile", "ship"}
    assert DEFAULT_TOOL not in tools  # the fallback's system tool is for clients that cannot ask
    assert tools["ship"]["inputSchema"]["properties"]["version"]["type"] == "string"


def test_ask_help_is_asks_own() -> None:
    done = elicitkit("ask", "-h")
    assert done.returncode == 0
    assert "usage: elicitkit ask" in done.stdout
    for command in ("confirm", "text", "choice", "choices", "form", "url"):
        assert command in done.stdout
    assert "  rest" not in done.stdout  # what argparse showed when `ask` was its subparser
