"""`pip install elicitkit` then `elicitkit demo` works from the wheel (or the sdist) alone, outside the checkout."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True, capture_output=True, timeout=300
    )
    return out


def test_the_wheel_carries_the_demo_the_page_templates_the_shell_sdk_and_the_typing_marker(dist: Path) -> None:
    [wheel] = dist.glob("elicitkit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "elicitkit/_examples/deploy_desk.py",
        "elicitkit/_web/templates/form.html",
        "elicitkit/_web/templates/fields.html",
        "elicitkit/_web/static/style.css",
        "elicitkit/py.typed",
        "elicitkit/shell/sdk/tool-sdk.sh",
    ):
        assert needed in names
    assert not any(name.startswith(("tests/", "examples/")) for name in names)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["whl", "tar.gz"])
def test_elicitkit_demo_runs_from_a_fresh_virtualenv_with_only_the_built_package(
    dist: Path, kind: str, tmp_path: Path
) -> None:
    [artifact] = dist.glob(f"elicitkit-*.{kind}")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*install, str(artifact)], check=True, capture_output=True, timeout=240)
    # Run far from the checkout, so nothing can come from it.
    demo = subprocess.run(
        [str(venv / "bin" / "elicitkit"), "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert demo.returncode == 0, demo.stderr
    assert "deploy_desk.py answered by a scripted person" in demo.stdout
    assert "MCP 2025-11-25" in demo.stdout
    assert "MCP 2026-07-28" in demo.stdout
    assert "Deployed 2.1 to Production (EU) after lint, unit tests." in demo.stdout
    api = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import elicitkit, elicitkit.testing, elicitkit.stores"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert api.returncode == 0, api.stderr


def test_the_wheel_and_the_sdist_pass_twine_check_as_pypi_will_render_them(dist: Path) -> None:
    artifacts = sorted(str(p) for p in dist.iterdir())
    assert len(artifacts) == 2, artifacts
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *artifacts], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_names_its_license_home_and_supported_pythons(dist: Path) -> None:
    [wheel] = dist.glob("elicitkit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())
    headers = [line.partition(": ") for line in text.split("\n\n")[0].splitlines()]
    fields: dict[str, list[str]] = {}
    for key, _, value in headers:
        fields.setdefault(key, []).append(value)
    assert fields["License-Expression"] == ["MIT"]
    urls = dict(url.split(", ", 1) for url in fields["Project-URL"])
    assert urls["Documentation"] == "https://elicitkit.github.io/elicitkit/"
    assert {"Changelog", "Issues", "Source"} <= set(urls)
    pythons = {
        c.rpartition(":: ")[2] for c in fields["Classifier"] if c.startswith("Programming Language :: Python :: 3.")
    }
    assert pythons == {"3.11", "3.12", "3.13", "3.14"}
    assert "Typing :: Typed" in fields["Classifier"]
    assert fields["Requires-Python"] == [">=3.11"]


def test_the_readme_on_pypi_has_no_relative_link_or_picture(dist: Path) -> None:
    [wheel] = dist.glob("elicitkit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        description = archive.read(metadata).decode().split("\n\n", 1)[1]
    assert "# elicitkit" in description
    targets = re.findall(r"\]\(([^)\s]+)\)", description)
    assert "https://raw.githubusercontent.com/elicitkit/elicitkit/main/docs/img/secure-form.png" in targets
    assert "https://github.com/elicitkit/elicitkit/blob/main/docs/guide.md" in targets
    assert [target for target in targets if not target.startswith("https://")] == []
