"""The README's example and the demo do what they say (every other doc block: tests/test_doc_blocks.py)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from elicitkit.testing import ScriptedHuman, accept, decline
from tests.doc_blocks import blocks

ROOT = Path(__file__).resolve().parents[1]
README = next(block for block in blocks() if block.path.name == "README.md")


def test_the_readme_example_is_at_most_fifteen_lines_of_code() -> None:
    assert len([line for line in README.code.splitlines() if line.strip()]) <= 15


def test_the_readme_example_ends_by_serving_its_server_over_stdio() -> None:
    serving = README.split_serving()[1]
    assert serving is not None
    assert ast.unparse(serving) == "server.run()"


@pytest.mark.anyio
async def test_the_readme_example_as_printed_serves_over_stdio_on_both_eras(mode: str, tmp_path: Path) -> None:
    copy = tmp_path / "deploy_desk.py"
    copy.write_text(README.code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    human = ScriptedHuman(accept({"approved": True}), decline())
    with anyio.fail_after(30):
        async with Client(
            StdioServerParameters(command=sys.executable, args=[str(copy)], env=env, cwd=tmp_path),
            mode=mode,
            elicitation_callback=human,
        ) as client:
            first = await client.call_tool("deploy", {"version": "2.1"})
            second = await client.call_tool("deploy", {"version": "2.2"})
    assert [c.text for c in first.content] == ["Deployed 2.1"]  # type: ignore[union-attr]
    assert [c.text for c in second.content] == ["Not deployed"]  # type: ignore[union-attr]
    assert [question.message for question in human.transcript] == ["Deploy 2.1?", "Deploy 2.2?"]


def test_the_demo_runs_both_eras_and_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "elicitkit._cli", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "MCP 2025-11-25" in out
    assert "MCP 2026-07-28" in out
    assert out.count("A client that cannot show forms") == 2
    assert out.count("the model calls sendElicitationResult") == 8
    assert out.count("= Deployed 2.1 to Production (EU) after lint, unit tests. Note: after the standup") == 4
    assert out.count("= 2.2 was not deployed.") == 4
    assert out.count("= 2.3 scheduled tonight.") == 2
    assert out.count("value: must have at least 1 choice") == 2
