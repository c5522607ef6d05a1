"""Every Python block of README.md and docs/*.md runs as printed, so the docs cannot drift from the code.

Each ```` ```python ```` block is found on its own (a page added or edited later is picked up), and
run the way a reader would run a copy of it:

- a **server** (it makes `server = MCPServer(...)` or `FastMCP(...)`) must end by serving it
  (`server.run(...)`); it is loaded in-process without that last line, served over real streamable
  HTTP, and every tool it lists is called on both protocol eras, four times: by a person who
  accepts every question (filling each form from its schema, and elicitkit's own pages in a
  browser), by one who declines, through the model by a client that shows no forms, and by a
  host that renders MCP Apps and no forms, whose person answers in elicitkit's view in the chat
  (docs/apps.md). Each call must end without an error;
- a **pytest module** (it defines `test_*` functions) runs under pytest in a subprocess;
- anything else is a **script**, run with `python` in a subprocess, and must exit 0.

Each block also passes pyflakes (ruff's `F` rules), which finds an undefined name on a branch no
run reaches. Blocks run in a fresh directory with `ELICITKIT_SECRET` set, as the durable-state page
tells readers to set it; a traceback names the page and its line.

Writing docs (the contributing note): make a block complete and runnable — its imports, its
server, `server.run()` at the end. Only a piece that genuinely cannot run alone may be marked, on
the line before its fence, with an HTML comment a reader never sees:

    <!-- fragment -->                       one option of several, or a call that needs your workspace
    <!-- fragment of examples/hooks.py -->  a piece of a runnable file: every line must appear in it

Fragments are counted (`test_fragments_are_few_and_pieces_match_their_file` prints how many) and
must stay at most MAX_FRAGMENTS.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from elicitkit import Elicitation
from elicitkit.testing import call_through_model, serve_app
from tests.doc_blocks import ROOT, Block, blocks, shown
from tests.doc_people import Person, fill
from tests.scenes import APPS, call_through_view

BLOCKS = blocks()
MAX_FRAGMENTS = 10
RUFF = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--output-format", "concise"]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CALL_LIMIT = 15  # seconds one tool call may take, all its questions answered
# A secret as the durable-state page has readers export it (`secrets.token_hex(32)`).
SECRET = "6f1c0e5b8d2a4f7e9c3b1a0d5e8f2c4b6a9d1e3f5c7b9a2d4e6f8c0b2a4d6e8f"


def of_kind(*kinds: str) -> Any:
    chosen = [b for b in BLOCKS if b.kind in kinds]
    return pytest.mark.parametrize("block", chosen, ids=[b.name for b in chosen])


def text_of(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def test_the_docs_have_python_blocks_and_every_kind_is_found() -> None:
    kinds = {b.kind for b in BLOCKS}
    assert {"server", "script", "pytest"} <= kinds, kinds
    assert sum(b.path.name == "README.md" for b in BLOCKS) >= 1


def test_blocks_are_found_with_their_markers_kinds_and_lines(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```python\nprint('hi')\n```\n\n<!-- fragment -->\n```python\nhitl.confirm(ctx, 'x')\n```\n"
        "\n- a list\n\n  <!-- fragment of examples/hooks.py -->\n\n  ```py\n  server.run()\n  ```\n"
        "\n```python\nfrom mcp.server.mcpserver import MCPServer\nserver = MCPServer('s')\nserver.run()\n```\n"
        "\n```python\ndef test_it():\n    pass\n```\n\n```sh\nnot python\n```\n",
        encoding="utf-8",
    )
    found = blocks([page])
    assert [(b.line, b.kind, b.fragment_of) for b in found] == [
        (3, "script", None),
        (8, "fragment", None),
        (16, "fragment", "examples/hooks.py"),
        (20, "server", None),
        (26, "pytest", None),
    ]
    assert found[2].code == "server.run()\n"
    assert found[3].split_serving()[1] is not None


def test_a_fence_that_is_never_closed_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nprint('hi')\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"page.md:3: a ```python fence that is never closed"):
        blocks([page])


@of_kind("server", "script", "pytest")
def test_a_block_passes_pyflakes(block: Block) -> None:
    problems = pyflakes_reports()[block.name]
    assert not problems, f"{block.name}:\n" + "\n".join(problems)


@functools.cache
def pyflakes_reports() -> dict[str, list[str]]:
    """ruff's pyflakes rules over every block at once (one process, not one per block), by block name."""
    runnable = [b for b in BLOCKS if b.kind != "fragment"]
    with tempfile.TemporaryDirectory() as folder:
        for number, block in enumerate(runnable):
            (Path(folder) / f"block_{number}.py").write_text(block.code, encoding="utf-8")
        done = subprocess.run([*RUFF, "--select", "F", folder], capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    reports: dict[str, list[str]] = {b.name: [] for b in runnable}
    for line in done.stdout.splitlines():
        found = re.search(r"block_(\d+)\.py:(\d+):(\d+): (.*)", line)
        if found is not None:
            block = runnable[int(found[1])]
            reports[block.name].append(f"line {block.line + int(found[2])}: {found[4]}")
    return reports


# --- scripts and pytest modules: a subprocess, as `python block.py` -----------------------------------


def environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["ELICITKIT_SECRET"] = SECRET
    env.pop("ELICITKIT_SECRET_FILE", None)
    env["HOME"] = str(tmp_path)
    return env


@of_kind("script", "pytest")
def test_a_script_runs_as_printed_and_exits_zero(block: Block, tmp_path: Path) -> None:
    (tmp_path / "block.py").write_text(block.code, encoding="utf-8")
    command = [sys.executable, "block.py"]
    if block.kind == "pytest":
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "block.py"]
    done = subprocess.run(command, cwd=tmp_path, env=environment(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stdout}{done.stderr}"


# --- servers: loaded in-process, served over HTTP, every tool called on both eras ---------------------


@pytest.fixture
def loaded(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],  # capturing already: what the block prints as it loads is checked too
) -> ModuleType:
    """The server block as a module, run in a fresh directory without its last line (which serves it)."""
    block: Block = request.node.callspec.params["block"]
    body, serving = block.split_serving()
    assert serving is not None, f"{block.name} makes a server but never serves it: end the block with server.run()"
    ast.increment_lineno(body, block.line)  # a traceback names the page's own line
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ELICITKIT_SECRET", SECRET)
    monkeypatch.delenv("ELICITKIT_SECRET_FILE", raising=False)
    name = "doc_block_" + re.sub(r"\W", "_", block.name)
    module = ModuleType(name)
    module.__file__ = str(tmp_path / "block.py")
    monkeypatch.setitem(sys.modules, name, module)  # pydantic resolves the block's annotations through it
    exec(compile(body, shown(block.path), "exec"), module.__dict__)
    return module


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """What a caller passes a tool: every property, required or not, filled as a form would be."""
    return fill({"properties": {k: v for k, v in schema.get("properties", {}).items() if "type" in v}}, word="demo")


@asynccontextmanager
async def served(module: ModuleType) -> AsyncIterator[str]:
    """The block's server over real streamable HTTP; its own pages reachable at the address it got."""
    hitl = next((v for v in vars(module).values() if isinstance(v, Elicitation)), None)
    assert hitl is not None, "a server block attaches elicitkit: hitl = Elicitation(server)"
    async with serve_app(hitl.http_app()) as base:
        if hitl.public_url is not None and urlsplit(hitl.public_url).hostname in LOOPBACK:
            hitl.public_url = base  # where a reader's copy listens, on this test's port
        yield base


@of_kind("server")
@pytest.mark.anyio
async def test_a_server_block_serves_and_every_tool_answers_on_both_eras(
    block: Block, loaded: ModuleType, mode: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with served(loaded) as base, anyio.create_task_group() as tasks:
        for person in (Person(tasks, base), Person(tasks, base, agree=False), None):
            try:
                await call_every_tool(f"{base}/mcp", mode, person, Person(tasks, base))
            finally:
                if person is not None:
                    await person.aclose()
        await call_every_tool(f"{base}/mcp", mode, None, Person(tasks, base), in_view=True)
    if block.serves_over_stdio:
        printed = capfd.readouterr().out
        assert not printed, f"{block.name} serves over stdio, where stdout is the protocol, but prints {printed!r}"


async def call_every_tool(
    url: str, mode: str, person: Person | None, through_model: Person, *, in_view: bool = False
) -> None:
    """Call each listed tool once; `person=None` is a client without forms, whose model asks `through_model`;
    `in_view`: it renders MCP Apps, and `through_model` answers in elicitkit's view what is shown there."""
    how = "a client without forms" if person is None else "a person who accepts" if person.agree else "one who declines"
    if in_view:
        how = "a host that renders MCP Apps"
    try:
        async with Client(
            url, mode=mode, elicitation_callback=person, extensions=[APPS] if in_view else None
        ) as client:
            tools = (await client.list_tools()).tools
            for tool in tools:
                if person is None and (tool.name == "sendElicitationResult" or "elicitId" in str(tool.input_schema)):
                    continue
                args = arguments(tool.input_schema)
                try:
                    with anyio.fail_after(CALL_LIMIT):
                        if in_view:
                            result = await call_through_view(client, tool.name, args, through_model)
                        elif person is None:
                            result = await call_through_model(client, tool.name, args, through_model)
                        else:
                            result = await client.call_tool(tool.name, args)
                except TimeoutError:
                    raise AssertionError(f"{tool.name}({args}) for {how}: no result in {CALL_LIMIT} s") from None
                assert not result.is_error, f"{tool.name}({args}) for {how}: {text_of(result)}"
                assert result.content, f"{tool.name}({args}) for {how} returned nothing"
    finally:
        await through_model.aclose()


# --- fragments -----------------------------------------------------------------------------------------


def code_of(line: str) -> str:
    """A line without its indentation and trailing comment: a fragment may comment more than its file."""
    return line.split("  # ")[0].strip()


def test_fragments_are_few_and_pieces_match_their_file(capsys: pytest.CaptureFixture[str]) -> None:
    fragments = [b for b in BLOCKS if b.kind == "fragment"]
    with capsys.disabled():
        print(f"\ndoc blocks: {len(BLOCKS)} found, {len(BLOCKS) - len(fragments)} run, {len(fragments)} fragments")
    assert len(fragments) <= MAX_FRAGMENTS, [b.name for b in fragments]
    for block in fragments:
        if block.fragment_of is None:
            continue
        whole = ROOT / block.fragment_of
        assert whole.is_file(), f"{block.name} is a fragment of {block.fragment_of}, which does not exist"
        lines = {code_of(line) for line in whole.read_text(encoding="utf-8").splitlines()}
        missing = [line for line in block.code.splitlines() if code_of(line) and code_of(line) not in lines]
        assert not missing, f"{block.name}: lines not in {block.fragment_of}: {missing}"
