"""The documentation site builds strictly, offline, with every guide, the API reference and the CLI reference."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from elicitkit._cli import main

ROOT = Path(__file__).resolve().parents[1]
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`./dev docs`, into a temporary folder: `--strict` fails on a broken link, anchor or API reference."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("SOURCE_DATE_EPOCH", None)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.mark.timeout(240)
def test_every_guide_is_a_page_of_the_site(site: Path) -> None:
    for guide in (ROOT / "docs").glob("*.md"):
        page = site / ("index.html" if guide.stem == "index" else f"{guide.stem}/index.html")
        assert page.is_file(), f"{guide.name} is not in the site (add it to mkdocs.yml's nav)"
    assert (site / "search" / "search_index.json").is_file()
    assert sorted(p.name for p in (site / "img").glob("*.png")) == sorted(
        p.name for p in (ROOT / "docs/img").glob("*.png")
    )


@pytest.mark.timeout(240)
def test_the_api_reference_documents_every_public_name(site: Path) -> None:
    import elicitkit
    import elicitkit.channels
    import elicitkit.stores
    import elicitkit.testing

    for module, page in (
        (elicitkit, "elicitkit"),
        (elicitkit.testing, "testing"),
        (elicitkit.stores, "stores"),
        (elicitkit.channels, "channels"),
    ):
        html = (site / "reference" / page / "index.html").read_text(encoding="utf-8")
        anchors = set(re.findall(r'id="([\w.]+)"', html))
        missing = [name for name in module.__all__ if f"{module.__name__}.{name}" not in anchors]
        assert not missing, f"{module.__name__}: not in the API reference: {missing}"


@pytest.mark.timeout(240)
def test_the_site_fetches_nothing_from_elsewhere(site: Path) -> None:
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        # No web fonts, no scripts or stylesheets from a CDN (the canonical link only names the page's address).
        assert not re.search(r'<script[^>]+src="https?://|<link rel="(?!canonical")[^"]*" href="https?://', html), page


def flags_of(*command: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    with pytest.raises(SystemExit):
        main([*command, "-h"])
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out)) - {"--help"}


def test_the_cli_reference_names_every_command_and_flag(capsys: pytest.CaptureFixture[str]) -> None:
    page = CLI_PAGE.read_text(encoding="utf-8")
    for command in ("call", "tools", "serve", "demo", "shell-sdk"):
        assert f"## `elicitkit {command}" in page
        missing = flags_of(command, capsys=capsys) - set(re.findall(r"--[a-z][a-z-]*", page))
        assert not missing, f"elicitkit {command}: {missing} not in {CLI_PAGE.name}"
    for kind in ("confirm", "text", "number", "choice", "choices", "form", "url"):
        assert f"`{kind} MESSAGE" in page
        missing = flags_of("ask", kind, capsys=capsys) - set(re.findall(r"--[a-z][a-z-]*", page))
        assert not missing, f"elicitkit ask {kind}: {missing} not in {CLI_PAGE.name}"
