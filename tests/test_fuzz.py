"""bench/fuzz.py, small: a couple of thousand generated requests over real HTTP on both eras find nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.redis_server import MISSING

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(120)
def test_two_thousand_fuzzed_requests_crash_nothing_and_leave_no_internal_error_or_traceback() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fuzz.py"), "--n", "2000", "--seed", "25"],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        cwd=ROOT,
    )
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines[-1] == "crashes=0 internal_errors=0 tracebacks=0", done.stdout[-5000:]
    assert any(line.startswith("sqlite: ") for line in lines) and any(line.startswith("redis: ") for line in lines)
