"""The GitHub Actions workflows are valid, run the README's test command on every supported Python, and publish
releases with trusted publishing (no token)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return loaded


def test_every_workflow_is_valid_against_githubs_workflow_schema() -> None:
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert len(files) >= 2, files
    # The schema ships inside check-jsonschema: nothing is fetched.
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ci_runs_the_readme_test_command_on_every_python_the_package_claims() -> None:
    jobs = workflow("ci.yml")["jobs"]
    matrix = jobs["test"]["strategy"]["matrix"]["python"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    claimed = [c.rpartition(":: ")[2] for c in project["classifiers"] if re.fullmatch(r".*:: 3\.\d+", c)]
    assert matrix == claimed == ["3.11", "3.12", "3.13", "3.14"]
    assert project["requires-python"] == f">={matrix[0]}"
    steps = [step.get("run", "") for step in jobs["test"]["steps"]]
    assert any(run.startswith("./dev test") for run in steps)
    assert any(step.get("run") == "./dev docs" for step in jobs["docs"]["steps"])
    assert any("twine check --strict" in step.get("run", "") for step in jobs["package"]["steps"])


def test_a_release_is_tested_first_and_published_without_a_stored_token() -> None:
    release = workflow("release.yml")
    assert release[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    jobs = release["jobs"]
    assert jobs["ci"]["uses"] == "./.github/workflows/ci.yml"
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    [upload] = [step for step in publish["steps"] if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in upload or "password" not in upload["with"]
    assert release["permissions"] == {"contents": "read"}
