"""The README's example and the demo do what they say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elicitkit.testing import ScriptedHuman, accept, decline

ROOT = Path(__file__).resolve().parents[1]


def readme_example() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    return namespace


def test_the_readme_example_is_at_most_fifteen_lines_of_code() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert len([line for line in blocks[0].splitlines() if line.strip()]) <= 15


@pytest.mark.anyio
async def test_the_readme_example_works_on_both_eras(mode: str) -> None:
    example = readme_example()
    human = ScriptedHuman(accept({"approved": True}), decline())
    async with Client(example["server"], mode=mode, elicitation_callback=human) as client:
        first = await client.call_tool("deploy", {"version": "2.1"})
        second = await client.call_tool("deploy", {"version": "2.2"})
    assert [c.text for c in first.content] == ["Deployed 2.1"]  # type: ignore[union-attr]
    assert [c.text for c in second.content] == ["Not deployed"]  # type: ignore[union-attr]


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
