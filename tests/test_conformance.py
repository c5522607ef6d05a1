"""The MCP conformance suite's elicitation scenarios, run against examples/conformance_server.py over HTTP.

The suite is the npm package `@modelcontextprotocol/conformance` (its TypeScript
client speaks 2025-11-25 to the server); it is installed into a temporary
folder. Runs wherever Node 20+ and npm are available, and is skipped (saying
why) elsewhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from elicitkit.testing import serve_http
from tests.examples import load_example

pytestmark = pytest.mark.anyio

PACKAGE = "@modelcontextprotocol/conformance@0.1.12"
# Each scenario and how many checks it makes: 11 in all.
SCENARIOS = {"tools-call-elicitation": 1, "elicitation-sep1034-defaults": 5, "elicitation-sep1330-enums": 5}


def _node_major() -> int:
    node = shutil.which("node")
    if node is None:
        return 0
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    return int(version.strip().lstrip("v").split(".")[0])


@pytest.fixture(scope="module")
def conformance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite's CLI, installed from the npm registry into a temporary folder."""
    npm = shutil.which("npm")
    if npm is None or _node_major() < 20:
        pytest.skip("the MCP conformance suite needs Node 20+ and npm (apt-get install nodejs npm)")
    prefix = tmp_path_factory.mktemp("conformance")
    subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", PACKAGE],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_the_conformance_suite_passes_every_elicitation_check(
    conformance: Path, scenario: str, tmp_path: Path
) -> None:
    example = load_example("conformance_server", f"conformance_server_{scenario.replace('-', '_')}")
    async with serve_http(example.server) as url:
        with anyio.fail_after(120):
            run = await anyio.run_process(
                ["node", str(conformance), "server", "--url", url, "--scenario", scenario, "-o", str(tmp_path)],
                check=False,
            )
    output = run.stdout.decode() + run.stderr.decode()
    [checks_file] = [found async for found in anyio.Path(tmp_path).glob("*/checks.json")]
    checks = json.loads(await checks_file.read_text())
    failed = [f"{c['id']}: {c.get('errorMessage')}" for c in checks if c["status"] != "SUCCESS"]
    assert not failed, output
    assert len(checks) == SCENARIOS[scenario]
    assert run.returncode == 0, output
