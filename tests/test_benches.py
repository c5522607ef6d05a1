"""The benchmarks that compare elicitkit with the bare SDK, small: they run, check every answer, and end with the
figure the issue reads (the figures themselves mean nothing at this size)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.redis_server import MISSING

ROOT = Path(__file__).resolve().parents[1]


def bench(name: str, *args: str, timeout: float) -> list[str]:
    """Run bench/NAME.py with this checkout's code; its output lines (it checks every answer itself)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def figure(line: str, name: str) -> float:
    match = re.fullmatch(rf"{name}=(-?\d+\.\d+)", line)
    assert match, line
    return float(match[1])


@pytest.mark.timeout(240)
def test_concurrency_compares_the_same_suspended_calls_with_the_bare_sdk_and_ends_with_kb_per_run() -> None:
    lines = bench(
        "concurrency", "--runs", "60", "--concurrency", "20", "--sample", "0", "--hibernate", "0", timeout=230
    )
    assert any(line.startswith("bare SDK: `await ctx.elicit(...)`") for line in lines), "\n".join(lines)
    assert figure(lines[-2], "ratio_vs_bare") > 0
    assert figure(lines[-1], "kb_per_run") > 0


@pytest.mark.timeout(240)
def test_hibernation_holds_waiting_questions_on_sqlite_and_on_redis() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING)
    lines = bench("hibernation", "--questions", "300", "--max-suspended", "50", "--answer", "20", timeout=230)
    titles = [line for line in lines if line.startswith("hibernation (")]
    assert [t.split(",")[0] for t in titles] == ["hibernation (SQLite", "hibernation (Redis"], "\n".join(lines)
    assert all("300 questions waiting, 50 bodies in memory, 250 hibernated" in t for t in titles)
    figure(lines[-1], "kb_per_hibernated")


@pytest.mark.timeout(240)
def test_throughput_pairs_elicitkit_with_the_bare_sdk_on_the_same_two_question_tool_and_ends_with_ratio() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING)
    lines = bench("throughput", "--runs", "12", "--concurrency", "4", "--repeat", "2", timeout=230)
    assert any("paired ratios, elicitkit / bare SDK answers/s" in line for line in lines), "\n".join(lines)
    assert any("taking each round once" in line for line in lines), "\n".join(lines)  # the same-work side
    assert figure(lines[-1], "ratio") > 0
    assert any("garbage collector as Python sets it" in line for line in lines), "\n".join(lines)


@pytest.mark.timeout(240)
def test_throughput_can_freeze_every_nodes_garbage_collector_as_the_durable_guide_recommends() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail(MISSING)
    lines = bench("throughput", "--runs", "8", "--concurrency", "2", "--repeat", "1", "--gc", "freeze", timeout=230)
    assert any("garbage collector frozen once built (gc.freeze)" in line for line in lines), "\n".join(lines)
    assert figure(lines[-1], "ratio") > 0


@pytest.mark.timeout(240)
def test_fastmcp_compares_elicitkit_with_fastmcps_own_ways_on_both_eras_and_ends_with_ratio() -> None:
    lines = bench("fastmcp", "--n", "3", "--repeats", "1", timeout=230)
    assert any(line.startswith("2025-11-25  ") and "goal" in line for line in lines), "\n".join(lines)
    assert any("vs checked guard" in line for line in lines), "\n".join(lines)  # the same-work pair
    assert figure(lines[-1], "ratio") > 0


@pytest.mark.timeout(240)
def test_roundtrip_pairs_each_era_with_the_bare_sdk_and_the_transport_floor_and_ends_with_ratio() -> None:
    lines = bench("roundtrip", "--n", "3", "--repeats", "1", timeout=230)
    assert any("elicitkit loop / transport floor" in line for line in lines), "\n".join(lines)
    assert any("elicitkit loop / floor with a deadline told in _meta" in line for line in lines), "\n".join(lines)
    assert any(line.startswith("2026-07-28  ") and "range" in line for line in lines), "\n".join(lines)
    assert figure(lines[-1], "ratio") > 0


def test_instruction_counts_tell_packages_by_where_they_are_not_by_a_name_in_their_path() -> None:
    """A repository cloned as `elicitkit/` holds its virtualenv's packages, and its tests, under that name too."""
    venv_sdk = "/home/u/elicitkit/.venv/lib/python3.11/site-packages/mcp/client/session.py"
    code = f"import _opcodes; print(_opcodes.package_of({venv_sdk!r}), _opcodes.package_of('/home/u/elicitkit/t.py'))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT / "bench"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["mcp", "other"]
